"""A checked `Spec` as plain data: for golden files, `--format json` and people.

Every quantity appears twice: as the checked expression rendered in base units
(B, s, FLOP, J, m; `ctdsl.model.expr.render`), and as its value at the params'
defaults. Keys are sorted and nothing depends on dict order, memory addresses
or the clock, so the same spec always gives the same JSON. Plain Python only:
no sympy, no numpy.
"""

from __future__ import annotations

from dataclasses import fields, is_dataclass
from enum import Enum
from typing import Mapping

from ctdsl.diagnostics import Span
from ctdsl.model import entities as M
from ctdsl.model import expr as E

BASE_UNITS = "B, s, FLOP, J, m"

# definition tables of a Spec, in the order they are written out
_TABLES = ("models", "devices", "links", "pluggables", "switches", "dcs", "schemes")
# bookkeeping fields of every definition; the JSON shows the span once, as "where"
_SKIP = {"name", "span", "file", "spans"}
# prices and carbon (docs/codesign.md): shown only where the spec writes them, so a spec without them keeps its JSON
_IF_WRITTEN = {"price", "capex", "depreciation", "embodied_carbon", "power_price", "pue", "carbon_intensity"}
# a dc's count of alike sites: shown only where the spec writes it, so a dc of one site keeps its JSON
_IF_SITES = {"sites", "n_sites"}


def _where(span: Span | None) -> str | None:
    return f"{span.file}:{span.line}:{span.col}" if span is not None else None


def _quantity(expr: E.Expr, env: dict[str, float]) -> dict:
    try:
        value: float | None = E.evaluate(expr, env)
    except E.EvalError:
        value = None
    return {"expr": E.render(expr), "value": value}


def _value(v: object, env: dict[str, float]) -> object:
    if isinstance(v, E.Expr):
        return _quantity(v, env)
    if isinstance(v, M.PluggableStage):
        return {f.name: _value(getattr(v, f.name), env) for f in fields(v) if f.name not in ("name", "span")}
    if is_dataclass(v) and not isinstance(v, type):
        return {f.name: _value(getattr(v, f.name), env) for f in fields(v)}
    if isinstance(v, Enum):
        return v.value
    if isinstance(v, Mapping):
        return {str(k): _value(v[k], env) for k in sorted(v)}
    if isinstance(v, (tuple, list)):
        return [_value(x, env) for x in v]
    return v  # str, bool, int, float, None


def _definition(d: M.Definition, env: dict[str, float]) -> dict:
    out: dict[str, object] = {"where": _where(d.span)}
    for f in fields(d):
        if f.name in _IF_SITES and isinstance(d, M.DataCentre) and "sites" not in d.spans:
            continue
        if f.name not in _SKIP and (f.name not in _IF_WRITTEN or f.name in d.spans):
            out[f.name] = _value(getattr(d, f.name), env)
    return out


def _param(p: M.Param) -> dict:
    return {
        "where": _where(p.span),
        "dim": p.dim.symbol(),
        "default": p.default,
        "unit": p.unit,
        "unit_scale": p.unit_scale,
        "lo": p.lo,
        "hi": p.hi,
        "spacing": p.spacing.value if p.spacing is not None else None,
        "count": p.count,
        "display": p.display,
    }


def spec_to_json(spec: M.Spec) -> dict:
    """The checked model as plain data (values in base units, at the defaults)."""
    env = spec.defaults()
    out: dict[str, object] = {
        "version": 1,
        "base_units": BASE_UNITS,
        "root": spec.root,
        "files": list(spec.files),
        "params": {name: _param(spec.params[name]) for name in sorted(spec.params)},
    }
    for table in _TABLES:
        defs = getattr(spec, table)
        out[table] = {name: _definition(defs[name], env) for name in sorted(defs)}
    out["wans"] = [{"from": w.a, "to": w.b, "link": w.link, "where": _where(w.span)} for w in spec.wans]
    out["variants"] = {
        name: {
            "where": _where(v.span),
            "dcs": {k: _definition(v.dcs[k], env) for k in sorted(v.dcs)},
            "wans": [{"from": w.a, "to": w.b, "link": w.link, "where": _where(w.span)} for w in v.wans],
        }
        for name, v in sorted(spec.variants.items())
    }
    out["breakevens"] = [{"x": b.x, "y": b.y, "over": b.over, **({"on": b.on} if b.on != "time" else {}), **({"workload": b.workload} if b.workload else {}), "where": _where(b.span)} for b in spec.breakevens]
    out["baseline"] = spec.baseline
    out["simulation"] = _definition(spec.simulation, env) if spec.simulation is not None else None
    return out


__all__ = ["spec_to_json", "BASE_UNITS"]
