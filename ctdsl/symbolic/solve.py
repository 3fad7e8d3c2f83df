"""Solve a checked spec: every scheme's costs and the requested break-evens.

`solve(spec)` returns a `Solution`: per scheme, exact expressions in the params
and their values at the params' defaults, in readable result objects that the
report layer prints (tables, JSON, Markdown, CSV, LaTeX) and notebooks show
(`_repr_html_`, `_repr_latex_`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import sympy as sp

from ctdsl import units as U
from ctdsl.diagnostics import Diagnostic
from ctdsl.failure import Failure
from ctdsl.language.binding import binding as binding_of
from ctdsl.model.entities import Spec
from ctdsl.model.graph import build_graph
from ctdsl.symbolic.breakeven import Breakeven, Unsolvable, solve_breakeven
from ctdsl.symbolic.convert import Env, NumericError, Symbols, value
from ctdsl.symbolic.costs import CostModel, SchemeCosts


@dataclass
class Quantity:
    expr: sp.Expr
    value: float
    dim: U.Dim

    def __str__(self) -> str:
        return U.format_quantity(self.value, self.dim)


@dataclass
class LinkUse:
    source: str
    target: str
    link: str
    kind: str  # port | intra | wan
    nbytes: Quantity  # per sync (or per step of a phase)
    bandwidth: Quantity
    time: Quantity  # nbytes / bandwidth


@dataclass
class PhaseResult:
    name: str
    steps: int
    transfers: int
    time: Quantity  # per sync
    step_time: Quantity
    latency: Quantity  # of one step
    links: list[LinkUse]  # bytes per step on each link crossed
    bottleneck: str


@dataclass
class StageResult:
    name: str
    rate: Quantity
    time: Quantity


@dataclass
class BreakPoint:
    param: str
    expr: sp.Expr
    value: float | None
    dim: U.Dim
    then: str  # the stage that binds beyond it

    def __str__(self) -> str:
        shown = U.format_quantity(self.value, self.dim) if self.value is not None else "n/a"
        return f"{self.param} = {shown}"


@dataclass
class ModuleResult:
    pluggable: str
    stream: Quantity
    stages: list[StageResult]
    binding: str
    runner_up: str | None
    breaks: list[BreakPoint]
    latency: Quantity
    time: Quantity
    charged_cost: float
    budget_per_byte: Quantity | None = None  # compute budget / line rate


@dataclass
class SchemeResult:
    name: str
    label: str
    payload_kind: str
    collective: str
    at: str
    period: float
    dense: Quantity
    payload: Quantity
    wire: Quantity
    wan: Quantity
    ratio: float  # dense / payload
    components: dict[str, Quantity]  # per step
    shares: dict[str, float]
    binding: str
    step_time: Quantity
    steps: float | None
    time_to_target: Quantity | None
    energy_per_step: Quantity
    energy_to_target: Quantity | None
    energy_parts: dict[str, Quantity]
    phases: list[PhaseResult]
    links: list[LinkUse]  # per sync
    module: ModuleResult | None
    overlap: bool
    costs: SchemeCosts = field(repr=False)
    symbols: Symbols = field(repr=False, default=None)

    def _repr_latex_(self) -> str:
        from ctdsl.report.latex import scheme_latex

        return scheme_latex(self)

    def _repr_html_(self) -> str:
        from ctdsl.report.html import scheme_html

        return scheme_html(self)


@dataclass
class BreakevenResult:
    x: str
    y: str
    over: str
    dim: U.Dim
    result: Breakeven | None
    missing: str | None = None  # why it could not be asked (no steps to target)
    symbols: Symbols = field(repr=False, default=None)

    @property
    def roots(self):
        return self.result.roots if self.result else []

    def describe(self) -> str:
        if self.missing:
            return self.missing
        r = self.result
        if not r.roots:
            return f"never in range: {r.reason}"
        parts = []
        for root in r.roots:
            how = " (numeric root)" if root.numeric else ""
            parts.append(
                f"{self.over} = {U.format_quantity(root.value, self.dim)}{how}: {root.below} faster below, {root.above} above"
            )
        return "; ".join(parts)

    def _repr_latex_(self) -> str:
        from ctdsl.report.latex import breakeven_latex

        return breakeven_latex(self)


@dataclass
class ModelResult:
    """Sizes that follow from a model: its parameters, update, FLOPs and KV cache."""

    name: str
    params: float
    dense: Quantity  # one BF16 (v-byte) update: v P
    flops_per_step: Quantity | None  # per worker
    kv_per_token: Quantity | None  # 2 L g (d/h) v, when the shape is known
    kv_tokens: float | None
    kv_handoff: Quantity | None  # kv_tokens x kv_per_token


@dataclass
class Solution:
    spec: Spec
    symbols: Symbols
    schemes: dict[str, SchemeResult]
    breakevens: list[BreakevenResult]
    baseline: str | None
    models: dict[str, ModelResult] = field(default_factory=dict)

    def _repr_html_(self) -> str:
        from ctdsl.report.html import solution_html

        return solution_html(self)

    def _repr_latex_(self) -> str:
        from ctdsl.report.latex import solution_latex

        return solution_latex(self, standalone=False)

    def to_json(self) -> dict:
        from ctdsl.report.jsonout import solution_json

        return solution_json(self)

    def __str__(self) -> str:
        from ctdsl.report.tables import render_plain

        return render_plain(self)


def _q(expr: sp.Expr, env, dim: U.Dim) -> Quantity:
    try:
        v = value(expr, env)
    except (NumericError, ZeroDivisionError, OverflowError):
        v = float("nan")
    return Quantity(expr, v, dim)


def _scheme_result(cm: CostModel, c: SchemeCosts, env) -> SchemeResult:
    s = c.scheme
    T, B = U.TIME, U.DATA
    components = {k: _q(v, env, T) for k, v in c.components.items()}
    step = _q(c.step_time, env, T)
    shares = {k: (q.value / step.value if step.value else 0.0) for k, q in components.items()}
    binding = binding_of({k: q.value for k, q in components.items()}, s.overlap)
    phases = []
    for ph in c.phases:
        links = []
        best, best_t = "", -1.0
        for e, load in ph.loads.items():
            a = cm.edge_attr(e)
            lu = LinkUse(e[0], e[1], a["link"], a["kind"], _q(load, env, B), _q(a["bandwidth"], env, U.RATE), _q(load / a["bandwidth"], env, T))
            links.append(lu)
            if lu.time.value > best_t:
                best, best_t = f"{a['link']} {e[0]} -> {e[1]}", lu.time.value
        phases.append(
            PhaseResult(
                ph.name,
                ph.steps,
                len(ph.transfers),
                _q(ph.time, env, T),
                _q(ph.step_time, env, T),
                _q(ph.latency, env, T),
                links,
                best,
            )
        )
    links = []
    for e, nbytes in c.link_bytes.items():
        a = cm.edge_attr(e)
        links.append(LinkUse(e[0], e[1], a["link"], a["kind"], _q(nbytes, env, B), _q(a["bandwidth"], env, U.RATE), _q(nbytes / a["bandwidth"], env, T)))
    module = _module_result(cm, c, env) if c.module is not None else None
    payload = _q(c.payload, env, B)
    dense = _q(c.dense, env, B)
    steps = value(c.steps, env) if c.steps is not None else None
    at = s.at.kind if s.at.name is None else f"{s.at.kind} {s.at.name}"
    return SchemeResult(
        name=s.name,
        label=s.label or s.name,
        payload_kind=s.payload,
        collective=s.collective,
        at=at,
        period=value(c.period, env),
        dense=dense,
        payload=payload,
        wire=_q(c.wire, env, B),
        wan=_q(c.wan_bytes, env, B),
        ratio=dense.value / payload.value if payload.value else float("inf"),
        components=components,
        shares=shares,
        binding=binding,
        step_time=step,
        steps=steps,
        time_to_target=_q(c.time_to_target, env, T) if c.time_to_target is not None else None,
        energy_per_step=_q(c.energy_per_step, env, U.ENERGY),
        energy_to_target=_q(c.energy_to_target, env, U.ENERGY) if c.energy_to_target is not None else None,
        energy_parts={k: _q(v, env, U.ENERGY) for k, v in c.energy_parts.items()},
        phases=phases,
        links=links,
        module=module,
        overlap=s.overlap,
        costs=c,
        symbols=cm.symbols,
    )


def _module_result(cm: CostModel, c: SchemeCosts, env) -> ModuleResult:
    m = c.module
    T = U.TIME
    stages = [StageResult(k, _q(r, env, U.RATE), _q(m.stream / r, env, T)) for k, r in m.rates.items()]
    ordered = sorted(stages, key=lambda s: (s.rate.value, list(m.rates).index(s.name)))
    binding = ordered[0].name
    runner = ordered[1].name if len(ordered) > 1 else None
    breaks: list[BreakPoint] = []
    if runner is not None:
        rb, rr = m.rates[binding], m.rates[runner]
        for sym in sorted(rb.free_symbols, key=str):
            info = cm.symbols.by_symbol.get(sym)
            if info is None:
                continue
            for sol in _solve_for(rb, rr, sym):
                try:
                    v = value(sol, env)
                except NumericError:
                    continue
                if v > 0:
                    breaks.append(BreakPoint(sym.name, sol, v, info.param.dim, runner))
    return ModuleResult(
        pluggable=m.pluggable,
        stream=_q(m.stream, env, U.DATA),
        stages=stages,
        binding=binding,
        runner_up=runner,
        breaks=breaks,
        latency=_q(m.latency, env, T),
        time=_q(m.time, env, T),
        charged_cost=value(m.charged_cost, env),
        budget_per_byte=_q(m.budget_per_byte, env, U.OPS_PER_DATA) if m.budget is not None else None,
    )


def _solve_for(a: sp.Expr, b: sp.Expr, sym: sp.Symbol) -> list[sp.Expr]:
    """Roots of a = b in sym: directly when the equation is linear in sym (a stage
    rate is usually budget / cost against a constant), else by sympy's solve."""
    num, _ = sp.fraction(sp.together(a - b))
    try:
        poly = sp.Poly(num, sym)
    except sp.PolynomialError:
        poly = None
    if poly is not None and poly.degree() == 1:
        c1, c0 = poly.all_coeffs()
        return [-c0 / c1]
    return list(sp.solve(sp.Eq(a, b), sym))


def default_over(spec: Spec) -> str | None:
    """The param a baseline comparison sweeps: the first ranged data rate, else the first ranged param."""
    ranged = [p for p in spec.params.values() if p.lo is not None]
    for p in ranged:
        if p.dim == U.RATE:
            return p.name
    return ranged[0].name if ranged else None


def solve(spec: Spec) -> Solution:
    symbols = Symbols(spec)
    cm = CostModel(spec, build_graph(spec), symbols)
    env = Env(symbols.defaults())
    costs = {name: cm.scheme(s) for name, s in spec.schemes.items()}
    schemes = {name: _scheme_result(cm, c, env) for name, c in costs.items()}
    pairs = [(b.x, b.y, b.over) for b in spec.breakevens]
    if not pairs and spec.baseline:
        over = default_over(spec)
        if over is not None:
            pairs = [(name, spec.baseline, over) for name in spec.schemes if name != spec.baseline]
    breakevens = [breakeven(cm, costs, x, y, over, env) for x, y, over in pairs]
    used = dict.fromkeys(s.model for s in spec.schemes.values())
    models = {name: _model_result(cm, spec.models[name], env) for name in used if name in spec.models}
    return Solution(spec, symbols, schemes, breakevens, spec.baseline, models)


def _model_result(cm: CostModel, model, env) -> ModelResult:
    from ctdsl.model import payload as PL

    kv = PL.kv_bytes_per_token(model)
    kv_q = _q(cm.sym(kv), env, U.DATA) if kv is not None else None
    kv_tokens = value(cm.sym(model.kv_tokens), env) if model.kv_tokens is not None else None
    handoff = None
    if kv is not None and model.kv_tokens is not None:
        handoff = _q(cm.sym(kv * model.kv_tokens), env, U.DATA)
    flops = _q(cm.sym(PL.compute_flops(model)), env, U.OPS) if model.tokens is not None else None
    return ModelResult(
        name=model.name,
        params=value(cm.sym(model.params), env),
        dense=_q(cm.sym(PL.dense_bytes(model)), env, U.DATA),
        flops_per_step=flops,
        kv_per_token=kv_q,
        kv_tokens=kv_tokens,
        kv_handoff=handoff,
    )


def breakeven(cm: CostModel, costs: dict[str, SchemeCosts], x: str, y: str, over: str, env) -> BreakevenResult:
    """One break-even; raises Failure (CT7xx, at the breakeven statement) where it cannot be solved."""
    spec = cm.spec
    p = spec.params[over]
    cx, cy = costs[x], costs[y]
    missing = [n for n, c in ((x, cx), (y, cy)) if c.time_to_target is None]
    if missing:
        return BreakevenResult(
            x, y, over, p.dim, None, f"scheme {' and '.join(missing)} has no steps to target: set steps = N", cm.symbols
        )
    lo, hi = (p.lo, p.hi) if p.lo is not None else (p.default * 1e-6, p.default * 1e6)
    log = p.spacing == "log" or p.lo is None
    labels = {**cx.labels, **cy.labels}
    try:
        show = lambda v: U.format_quantity(v, p.dim)  # noqa: E731
        result = solve_breakeven(x, cx.time_to_target, y, cy.time_to_target, cm.symbols[over], env, lo, hi, labels, log, show)
    except Unsolvable as exc:
        stmt = next((s for s in spec.breakevens if (s.x, s.y, s.over) == (x, y, over)), None)
        if stmt is not None:
            span, label = stmt.span, "this break-even"
        else:  # asked by `baseline`: point at the scheme compared
            span, label = spec.schemes[x].span, f"compared with the baseline {y}"
        raise Failure([Diagnostic(exc.code, exc.message, span, label=label, help=exc.help)]) from None
    return BreakevenResult(x, y, over, p.dim, result, None, cm.symbols)
