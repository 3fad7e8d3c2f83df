"""`ctdsl simulate`: JSON (schema `ctdsl.simulate/2`, and `ctdsl.simulate.validate/1` for
`--validate`) and CSV of simulation results.

Numbers are base SI units; a value that is not finite is null in JSON and empty
in CSV; floats in CSV are Python's shortest round-trip form. Nothing here
depends on the clock: the same spec and seed give byte-identical output.
"""

from __future__ import annotations

import csv
import math
from io import StringIO
from typing import TYPE_CHECKING

from ctdsl.report.encode import csv_cell
from ctdsl.report.encode import json_number as _num

if TYPE_CHECKING:  # types only: no import at run time (the report reads what the CLI hands it)
    from ctdsl.simulate.runner import SimResult
    from ctdsl.simulate.validate import Validation

SCHEMA = "ctdsl.simulate/2"  # 2: a closed-form term names its component by its key (ctdsl.language.components)
VALIDATE_SCHEMA = "ctdsl.simulate.validate/1"


def _est(e) -> dict | None:
    if e is None:
        return None
    lo, hi = e.interval if e.n >= 2 else (math.nan, math.nan)
    return {"mean": _num(e.mean), "sd": _num(e.sd), "n": e.n, "ci95": [_num(lo), _num(hi)]}


def result_json(res: SimResult) -> dict:
    c = res.settings
    return {
        "schema": SCHEMA,
        "spec": res.spec.root,
        "params": {p.name: _num(p.default) for p in res.spec.params.values()},
        "settings": {"steps": c.steps, "seeds": c.seeds, "warmup": c.warmup, "seed": c.seed, "latency": str(c.latency)},
        "events": res.events,
        "schemes": [_scheme_json(name, s) for name, s in res.schemes.items()],
    }


def partial_json(res: SimResult, done: int, total: int) -> dict:
    """The runs finished so far (`ctdsl simulate --partial`): the result's JSON and, under "partial",
    how many of the runs are done, whether that is all of them, and the seeds each scheme holds."""
    out = result_json(res)
    out["partial"] = {
        "complete": done == total and res.stopped is None,
        "runs_done": done,
        "runs_total": total,
        "seeds": {name: s.seed_list for name, s in res.schemes.items()},
    }
    return out


def _scheme_json(name: str, s) -> dict:
    p = s.plan
    return {
        "name": name,
        "label": p.label,
        "engine": getattr(s, "engine", "simpy"),  # numpy: its events count simulated transfers
        "engine_note": getattr(s, "engine_note", None),  # why SimPy ran it where the numpy engine was asked for
        "period": _num(p.period),
        "overlap": p.overlap,
        "closed_form": {
            "free_step": _num(p.free_step),
            "step": _num(p.step),
            "queueing": _num(p.queueing),
            "stragglers": _num(p.stragglers),
            "oversubscribed_bound": _num(p.bound),
            "terms": [{"component": cf.component.id, "status": cf.status, "formula": cf.formula} for cf in p.closed_forms],
            "syncs": {sy.name: _num(sy.per_step) for sy in p.step_plan.syncs} if getattr(p, "step_plan", None) else None,
            "pipeline": [_chain_json(ch) for ch in getattr(p, "chains", ())],
        },
        "simulated": {
            "step": _est(s.step),
            "per_seed": [_num(r.step) for r in s.runs],
            "queueing": _est(s.queueing),
            "stragglers": _est(s.stragglers),
            "growth": _num(s.growth),
            "syncs": {k: _est(e) for k, e in s.syncs.items()} if getattr(s, "syncs", None) else None,
        },
        "steps_to_target": _num(p.steps_to_target),
        "time_to_target": _est(s.time_to_target),
        "links": [
            {
                "source": l.edge[0],
                "target": l.edge[1],
                "link": l.link,
                "load": _num(l.rho),
                "service": _num(l.service),
                "md1_wait": _num(l.md1_wait),
                "utilisation": _est(l.utilisation),
                "background_wait": _est(l.background_wait),
                "sync_wait": _est(l.sync_wait),
            }
            for l in s.links
        ],
        "events": s.events,
    }


def _chain_json(ch) -> dict:
    """A dc's replica chain: the closed form's pipeline and the simulated schedule's makespans."""
    return {
        "dc": ch.dc,
        "pp": ch.pp,
        "virtual_stages": ch.v,
        "micro_batches": _num(ch.micro),
        "p2p": _num(ch.p2p),
        "closed_form": _num(ch.closed),
        "simulated": _num(ch.makespan),
        "blocking_sends_only": _num(ch.sent),
        "not_simulated": ch.not_simulated,
    }


CSV_COLUMNS = [
    ("scheme", lambda n, s: n),
    ("period", lambda n, s: s.plan.period),
    ("free_step_s", lambda n, s: s.plan.free_step),
    ("closed_step_s", lambda n, s: s.plan.step),
    ("sim_step_mean_s", lambda n, s: s.step.mean),
    ("sim_step_sd_s", lambda n, s: s.step.sd),
    ("sim_step_ci95_lo_s", lambda n, s: s.step.interval[0] if s.step.n >= 2 else None),
    ("sim_step_ci95_hi_s", lambda n, s: s.step.interval[1] if s.step.n >= 2 else None),
    ("growth", lambda n, s: s.growth),
    ("closed_queueing_s", lambda n, s: s.plan.queueing),
    ("sim_queueing_s", lambda n, s: s.queueing.mean if s.queueing is not None else None),
    ("closed_stragglers_s", lambda n, s: s.plan.stragglers),
    ("sim_stragglers_s", lambda n, s: s.stragglers.mean),
    ("steps_to_target", lambda n, s: s.plan.steps_to_target),
    ("sim_time_to_target_s", lambda n, s: s.time_to_target.mean if s.time_to_target is not None else None),
    ("seeds", lambda n, s: s.step.n),
]


def render_csv(res: SimResult) -> str:
    buf = StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow([c for c, _ in CSV_COLUMNS])
    for name, s in res.schemes.items():
        row = []
        for _, get in CSV_COLUMNS:
            v = get(name, s)
            row.append("" if v is None else (repr(float(v)) if isinstance(v, float) else csv_cell(v)))
        w.writerow(row)
    return buf.getvalue()


# ---- --validate ----------------------------------------------------------------------------------


def validation_json(v: Validation) -> dict:
    return {
        "schema": VALIDATE_SCHEMA,
        "spec": v.spec.root,
        "ok": v.ok,
        "alpha": v.alpha,
        "settings": {"seeds": v.settings.seeds, "seed": v.settings.seed},
        "events": v.events,
        "checks": [
            {
                "kind": c.kind,
                "what": c.what,
                "closed_form": _num(c.closed),
                "status": c.status,
                "probe": c.probe,
                "simulated": _est(c.sim) if c.statistical else {"value": _num(c.sim)},
                "t": _num(c.t),
                "critical": _num(c.critical),
                "relative_difference": _num(c.rel),
                "derived": _num(c.derived),
                "note": c.note,
                "passed": c.passed,
            }
            for c in v.checks
        ],
    }


def validation_csv(v: Validation) -> str:
    buf = StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["kind", "check", "closed_form", "status", "sim_mean", "sim_ci95_lo", "sim_ci95_hi", "t", "critical", "passed", "note"])
    for c in v.checks:
        if not c.statistical:
            mean, lo, hi = c.sim, None, None
        else:
            mean = c.sim.mean
            lo, hi = c.sim.interval if c.sim.n >= 2 else (None, None)
        cells = [c.kind, c.what, c.closed, c.status, mean, lo, hi, c.t, c.critical, "" if c.passed is None else str(c.passed).lower(), c.note]
        w.writerow(["" if x is None else (repr(float(x)) if isinstance(x, float) else csv_cell(x)) for x in cells])
    return buf.getvalue()


__all__ = ["SCHEMA", "VALIDATE_SCHEMA", "partial_json", "render_csv", "result_json", "validation_csv", "validation_json"]
