"""`ctdsl solve --format json`: a stable, documented schema (docs/solve-json.md).

Every number is in base SI units (bytes, seconds, joules, bytes per second,
FLOP/s); every exact form is given as sympy text and as LaTeX. The schema is
named and versioned in `"schema"`; within a version fields are only ever added. Schema 2
names a step's components by their keys (`compute`, `sync_in_site:PHASE`, `queueing:LINKS`,
`exposed_sync:SYNC`, ...: ctdsl.language.components), where schema 1 used their display names.
"""

from __future__ import annotations

from functools import lru_cache

import sympy as sp

from ctdsl.report.encode import json_number as _num
from ctdsl.report.serving_out import serving_json

SCHEMA = "ctdsl.solve/2"
PRINT_CACHE = 256  # printed forms kept: a break-even stated many times is printed once


def _expr(e) -> str:
    return _sstr(e) if e is not None else None


def _latex(e) -> str:
    return _tex(e) if e is not None else None


@lru_cache(maxsize=PRINT_CACHE)
def _sstr(e) -> str:
    return sp.sstr(e, order="lex")


@lru_cache(maxsize=PRINT_CACHE)
def _tex(e) -> str:
    return sp.latex(e)


def solution_json(sol) -> dict:
    spec = sol.spec
    params = {}
    for p in spec.params.values():
        params[p.name] = {
            "value": _num(p.default),
            "unit": p.dim.symbol(),
            "declared_unit": p.unit,
            "range": [_num(p.lo), _num(p.hi)] if p.lo is not None else None,
            "sweep": {"spacing": p.spacing, "count": p.count} if p.spacing else None,
            "display": p.display,
        }
    out = {
        "schema": SCHEMA,
        "spec": spec.root,
        "params": params,
        "baseline": sol.baseline,
        "models": [_model(m) for m in sol.models.values()],
        "schemes": [_scheme(r) for r in sol.schemes.values()],
        "breakevens": [_breakeven(b) for b in sol.breakevens],
        "memory": [_memory(m) for m in getattr(sol, "memory", ())],
        "targets": [_target(t) for t in getattr(sol, "targets", ())],
    }
    if getattr(sol, "serving", ()):  # a spec that serves (docs/serving.md): added, so the others' JSON is unchanged
        out["serving"] = serving_json(sol)
    return out


def _memory(m) -> dict:
    return {
        "model": m.model,
        "dc": m.dc,
        "parts": {k: _num(q.value) for k, q in m.parts.items()},
        "total": _num(m.total.value),
        "capacity": _num(m.capacity.value) if m.capacity is not None else None,
        "fits": m.fits,
        "note": m.note,
    }


def _model(m) -> dict:
    return {
        "name": m.name,
        "params": _num(m.params),
        "dense": _num(m.dense.value),
        "flops_per_step": _num(m.flops_per_step.value) if m.flops_per_step else None,
        "kv_per_token": _num(m.kv_per_token.value) if m.kv_per_token else None,
        "kv_tokens": _num(m.kv_tokens),
        "kv_handoff": _num(m.kv_handoff.value) if m.kv_handoff else None,
    }


def _links(links, key: str) -> list[dict]:
    return [
        {
            "source": l.source,
            "target": l.target,
            "link": l.link,
            "kind": l.kind,
            key: _num(l.nbytes.value),
            "bandwidth": _num(l.bandwidth.value),
            "seconds": _num(l.time.value),
        }
        for l in links
    ]


def _scheme(r) -> dict:
    module = None
    if r.module is not None:
        m = r.module
        module = {
            "pluggable": m.pluggable,
            "stream": _num(m.stream.value),
            "stages": [{"name": s.name, "rate": _num(s.rate.value), "seconds": _num(s.time.value)} for s in m.stages],
            "binding": m.binding,
            "runner_up": m.runner_up,
            "latency": _num(m.latency.value),
            "seconds": _num(m.time.value),
            "charged_flop_per_byte": _num(m.charged_cost),
            "budget_flop_per_byte": _num(m.budget_per_byte.value) if m.budget_per_byte is not None else None,
            "break_points": [
                {"param": b.param, "value": _num(b.value), "expression": _expr(b.expr), "latex": _latex(b.expr), "then": b.then}
                for b in m.breaks
            ],
        }
    return {
        "name": r.name,
        "label": r.label,
        "payload_kind": r.payload_kind,
        "collective": r.collective,
        "at": r.at,
        "sites": r.sites,
        "period": _num(r.period),
        "steps": _num(r.steps),
        "job": {k: _num(getattr(r.job, k).value) for k in ("gpus", "nodes", "sites")} if r.job is not None else None,
        "bytes": _bytes(r),
        "step": {
            "seconds": _num(r.step_time.value),
            "overlap": r.overlap,
            "binding": r.binding.id,
            "utilisation": _num(r.utilisation.value) if r.utilisation is not None else None,
            "mfu": _num(r.mfu.value) if r.mfu is not None else None,
            "inner": _num(r.inner.value) if r.inner is not None else None,
            "components": {t.id.id: {"seconds": _num(t.value.value), "share": _num(t.share)} for t in r.terms},
        },
        **({"overhead_per_sync": _num(r.overhead.value)} if r.overhead is not None else {}),
        "time_to_target": _num(r.time_to_target.value) if r.time_to_target else None,
        "energy_to_target": _num(r.energy_to_target.value) if r.energy_to_target else None,
        "bytes_to_target": _num(r.bytes_to_target.value) if r.bytes_to_target else None,
        "link_bytes_to_target": {k: _num(q.value) for k, q in r.class_bytes_to_target.items()},
        "energy_per_step": {k: _num(q.value) for k, q in r.energy_parts.items()},
        **_money(r),
        "phases": [
            {
                "name": p.name,
                "steps": p.steps,
                "transfers_per_step": p.transfers,
                "seconds": _num(p.time.value),
                "step_latency": _num(p.latency.value),
                "bottleneck": p.bottleneck,
                "links": _links(p.links, "bytes_per_step"),
                "queueing": _queueing(p),
                "every_step": p.every_step,
            }
            for p in r.phases
        ],
        "syncs": [_sync(sy) for sy in r.syncs],
        "timeline": _timeline(r.timeline) if r.timeline is not None else None,
        "closed_forms": [
            {"component": cf.component.id, "formula": cf.formula, "status": cf.status, "note": cf.note or None}
            for cf in r.closed_forms
        ],
        "links": _links(r.links, "bytes_per_sync"),
        "module": module,
        "roofline": [_roofline(x) for x in r.roofline],
        "expressions": {
            "payload": _expr(r.payload.expr),
            "wan_bytes": _expr(r.wan.expr),
            "step_time": _expr(r.step_time.expr),
            "utilisation": _expr(r.utilisation.expr) if r.utilisation is not None else None,
            "time_to_target": _expr(r.time_to_target.expr if r.time_to_target else None),
            "energy_to_target": _expr(r.energy_to_target.expr if r.energy_to_target else None),
            **{k: _expr(getattr(r, k).expr) for k in ("cost_to_target", "co2e_to_target") if getattr(r, k) is not None},
        },
    }


def _q(q):
    return _num(q.value) if q is not None else None


def _sync(sy) -> dict:
    return {
        "name": sy.name,
        "every": _num(sy.every),
        "seconds": _q(sy.time),
        "exposed_per_step": _q(sy.exposed),
        "buckets": _num(sy.buckets),
        "bucket_seconds": _q(sy.bucket_time),
        "fragments": _num(sy.fragments),
        "window": _q(sy.window),
        "slack": _q(sy.slack),
    }


def _timeline(tl) -> dict:
    return {
        "stages": _num(tl.stages),
        "virtual_stages": _num(tl.virtual_stages),
        "dcs": [
            {
                "dc": d.dc,
                "micro_batches": _q(d.micro_batches),
                "per_micro_batch": {k.value: _q(q) for k, q in d.per_micro.items()},
                "components": {k.value: _q(q) for k, q in d.components.items()},
                "inner": _q(d.inner),
                "window": _q(d.window),
            }
            for d in tl.dcs
        ],
        "traffic": [
            {
                "dc": x.dc,
                "kind": x.kind.value,
                "link": x.link,
                "role": x.role,
                "bytes_per_micro_batch": _q(x.per_micro),
                "bytes_per_step": _q(x.sent),
                "busy": _q(x.busy),
                "exposed": _q(x.exposed),
                "formula": x.formula,
            }
            for x in tl.traffic
        ],
        "notes": list(tl.notes),
    }


def _bytes(r) -> dict:
    """Bytes per sync, per step (per sync / H), and the payload and wire against the dense update."""
    return {
        "dense": _num(r.dense.value),
        "payload": _num(r.payload.value),
        "wire": _num(r.wire.value),
        "wan": _num(r.wan.value),
        "dense_over_payload": _num(r.ratio),
        "per_step": {k: _num(getattr(r, k).value / r.period) for k in ("payload", "wire", "wan")},
        "payload_over_dense": _num(r.payload.value / r.dense.value) if r.dense.value else None,
        "wire_over_dense": _num(r.wire.value / r.dense.value) if r.dense.value else None,
    }


def _money(r) -> dict:
    """Cost (USD) and CO2e (gCO2e) to target with their parts: only for a spec that prices something or gives carbon."""
    out = {}
    for key, parts in (("cost_to_target", r.cost_parts), ("co2e_to_target", r.co2e_parts)):
        q = getattr(r, key)
        if q is not None:
            out[key] = _num(q.value)
            out[key.replace("_to_target", "_parts")] = {k: _num(v.value) for k, v in parts.items()}
    return out


def _roofline(x) -> dict:
    return {
        "device": x.device,
        "dcs": list(x.dcs),
        "charge": x.charge,
        "binds": x.binds,
        "compute_seconds": _num(x.compute.value),
        "memory_seconds": _num(x.memory.value) if x.memory is not None else None,
        "intensity": _num(x.intensity.value),
        "ridge": _num(x.ridge.value) if x.ridge is not None else None,
        "seconds": _num(x.time.value),
    }


def _queueing(ph) -> dict | None:
    """What a phase's burst of steps waits per step on average, and the loaded links its transfers
    cross (each with the M/D/1 wait of one transfer, the burst's first)."""
    q = ph.queueing
    if q is None:
        return None
    waits = [
        {
            "source": w.source,
            "target": w.target,
            "link": w.link,
            "load": _num(w.load),
            "transfer": _num(w.transfer.value),
            "service": _num(w.service.value),
            "wait": _num(w.wait.value),
        }
        for w in q.waits
    ]
    return {"seconds_per_step": _num(q.seconds_per_step.value), "waits": waits}


def _breakeven(b) -> dict:
    out = {"x": b.x, "y": b.y, "over": b.over, "unit": b.dim.symbol(), "roots": [], "never": True, "reason": b.missing}
    if b.on != "time":  # compared on energy, cost or CO2e to target (docs/codesign.md); "faster" reads as "less"
        out["on"] = b.on
    if b.workload:  # two hand-offs compared on this workload's paths (docs/serving.md)
        out["workload"] = b.workload
    if b.result is None:
        return out
    r = b.result
    if r.settled:
        out["settled"] = r.settled
    out.update(
        {
            "range": [_num(r.lo), _num(r.hi)],
            "never": not r.roots,
            "reason": r.reason,
            "outside": [_num(v) for v in r.outside],
            "faster_at_low_end": r.faster_at_lo,
            "faster_at_high_end": r.faster_at_hi,
            "roots": [
                {
                    "value": _num(root.value),
                    "expression": _expr(root.expr),
                    "latex": _latex(root.expr),
                    "faster_below": root.below,
                    "faster_above": root.above,
                    "regime": root.regime,
                    "numeric": root.numeric,
                }
                for root in r.roots
            ],
        }
    )
    return out


def _target(t) -> dict:
    """One target (docs/solve-json.md, "targets"): where a scheme's quantity reaches a value."""
    return {
        "quantity": t.quantity,
        "target": _num(t.target),
        "target_unit": t.target_dim.symbol(),
        "scheme": t.scheme,
        "over": t.over,
        "unit": t.dim.symbol(),
        "range": [_num(t.lo), _num(t.hi)] if t.lo is not None else None,
        "never": not t.roots,
        "reason": t.reason,
        "roots": [
            {"value": _num(r.value), "expression": _expr(r.expr), "latex": _latex(r.expr), "numeric": r.numeric, "above_target_above": r.rises}
            for r in t.roots
        ],
    }
