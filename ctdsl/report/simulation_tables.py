"""`ctdsl simulate`: the tables of simulation results and of `--validate`, and their rendering on a terminal.

Rows are plain strings first (like tables.py), so the terminal and the text
view say the same. Nothing here depends on the clock: the same spec and seed
give byte-identical output. JSON and CSV are in `simulation_data.py`.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from ctdsl import units as U
from ctdsl.language.components import ComponentKey
from ctdsl.language.tolerances import REL
from ctdsl.report.blocks import Grid, Para
from ctdsl.report.document_rich import print_blocks

if TYPE_CHECKING:  # types only: no import at run time (the report reads what the CLI hands it)
    from rich.console import Console

    from ctdsl.simulate.runner import SimResult
    from ctdsl.simulate.validate import Validation

T = U.TIME


def params_line_spec(spec) -> str:
    return ", ".join(f"{p.name} = {U.format_quantity(p.default, p.dim)}" for p in spec.params.values()) or "none"


def _t(x: float | None) -> str:
    return "n/a" if x is None or (isinstance(x, float) and math.isnan(x)) else U.format_quantity(x, T)


def _pm(est) -> str:
    if est is None or est.n == 0 or math.isnan(est.mean):
        return "n/a"
    return f"{_t(est.mean)} ± {_t(est.sd)}"


def _ci(est) -> str:
    if est is None or est.n < 2 or math.isnan(est.mean):
        return "n/a"
    lo, hi = est.interval
    return f"{_t(lo)} .. {_t(hi)}"


def _mean_ci(est) -> str:
    if est is None or est.n == 0 or math.isnan(est.mean):
        return "n/a"
    if est.n < 2:
        return _t(est.mean)
    return f"{_t(est.mean)} (± {_t(est.half_width)})"


def _x(a: float, b: float) -> str:
    return f"{a / b:.2f}x" if b and math.isfinite(a / b) else "n/a"


def _inside(est, x: float) -> str:
    if est is None or est.n < 2:
        return "n/a"
    if abs(est.mean - x) <= REL * abs(x) and est.sd <= REL * abs(x):
        return "yes (deterministic)"
    lo, hi = est.interval
    if lo <= x <= hi:
        return "yes"
    return "no: sim higher" if est.mean > x else "no: sim lower"


def header(res) -> str:
    c = res.settings
    n = len(res.schemes)
    return (
        f"{res.spec.root}: {n} scheme{'s' * (n != 1)} x {c.seeds} seeds x {c.steps} steps after {c.warmup} of warm-up "
        f"(seed {c.seed}; latency {c.latency}: a loaded link is held for "
        f"{'latency + bytes / bandwidth' if c.latency == 'hold' else 'bytes / bandwidth'}); params: {params_line_spec(res.spec)}"
    )


def step_table(res) -> Grid:
    t = Grid(
        "Step time: closed forms and simulation",
        ["scheme", "H", "no load, no jitter", "closed form", "simulated (mean ± sd)", "95% interval", "growth", "closed form in interval"],
    )
    for i, (name, s) in enumerate(res.schemes.items()):
        p = s.plan
        t.rows.append(
            [
                name,
                f"{p.period:g}",
                _t(p.free_step),
                _t(p.step),
                _pm(s.step),
                _ci(s.step),
                _x(s.step.mean, p.free_step),
                _inside(s.step, p.step) + (" (queueing: a lower bound)" if p.queues and s.step.n >= 2 and s.step.interval[0] > p.step else ""),
            ]
        )
        t.marked.add((i, 6))
    t.notes.append("no load, no jitter: the symbolic step with every link the job's alone and equal workers (ctdsl solve of the spec without them)")
    t.notes.append("closed form: ctdsl solve's step, with the queueing wait of its bursts (queueing.py) and the stragglers term where the spec sets load or jitter")
    t.notes.append("growth: simulated step over the no-load, no-jitter step; intervals: Student t over the seeds (independent replications)")
    for name, s in res.schemes.items():
        if s.plan.bound is not None:
            t.notes.append(
                f"{name}: a loaded link is over-subscribed at the closed form's step; in the long run the step takes at least "
                f"{_t(s.plan.bound)} (sync busy time / (1 - rho))"
            )
    return t


def parts_table(res) -> Grid | None:
    schemes = list(res.schemes.items())
    has_q = any(s.plan.queues for _, s in schemes)
    has_s = any(s.plan.stragglers or s.stragglers.mean for _, s in schemes)
    if not (has_q or has_s):
        return None
    head = ["scheme"]
    if has_q:
        head += ["queueing: closed", "queueing: simulated (95%)"]
    if has_s:
        head += ["stragglers: closed", "stragglers: simulated (95%)"]
    t = Grid("Where the closed forms break: per step", head)
    for name, s in schemes:
        p = s.plan
        row = [name]
        if has_q:
            row += [_t(p.queueing), _mean_ci(s.queueing) if s.queueing is not None else "n/a (overlap)"]
        if has_s:
            row += [_t(p.stragglers), _mean_ci(s.stragglers)]
        t.rows.append(row)
    if has_q:
        t.notes.append("queueing: the sync's time over the same sync with no waits (closed: the queueing terms)")
    if has_s:
        t.notes.append("stragglers: compute over the slowest dc's deterministic compute (closed: the expected slowest worker)")
    return t


def target_table(res) -> Grid | None:
    rows = [(n, s) for n, s in res.schemes.items() if s.time_to_target is not None]
    if not rows:
        return None
    t = Grid("Time to target", ["scheme", "steps", "no load, no jitter", "closed form", "simulated (95%)"])
    best = min(rows, key=lambda r: r[1].time_to_target.mean)[0]
    for i, (name, s) in enumerate(rows):
        p = s.plan
        n = p.steps_to_target
        t.rows.append([name, f"{n:g}", _t(n * p.free_step), _t(n * p.step), _mean_ci(s.time_to_target)])
        if name == best:
            t.marked.add((i, 4))
    t.notes.append(f"first to the target in the simulation: {best}")
    return t


def links_table(res) -> Grid | None:
    rows = [(n, l) for n, s in res.schemes.items() for l in s.links]
    if not rows:
        return None
    t = Grid(
        "Loaded links",
        ["scheme", "link", "rho", "utilisation (95%)", "background wait: closed form", "background wait: simulated (95%)", "sync job wait (95%)"],
    )
    for name, l in rows:
        t.rows.append(
            [
                name,
                f"{l.link} {l.edge[0]} -> {l.edge[1]}",
                f"{l.rho:g}",
                _pct_ci(l.utilisation),
                _t(l.md1_wait),
                _mean_ci(l.background_wait),
                _mean_ci(l.sync_wait) if l.sync_wait is not None else "n/a",
            ]
        )
    t.notes.append("utilisation: busy fraction over the measured window, background and sync together")
    t.notes.append("background wait, closed form: past its own time S, rho S / (1 - rho) on a link shared fairly (processor sharing), rho S / (2 (1 - rho)) on one served first come, first served (M/D/1)")
    t.notes.append("sync job: the bytes one phase step puts on the link, sharing it with the background as the link's sharing says; its wait: its time on the link past its own")
    return t


def _pct_ci(est) -> str:
    if est.n == 0:
        return "n/a"
    if est.n < 2:
        return f"{100 * est.mean:.1f}%"
    return f"{100 * est.mean:.1f}% (± {100 * est.half_width:.1f}%)"


def closed_form_notes(res) -> list[str]:
    seen: dict[tuple, list[str]] = {}
    for name, s in res.schemes.items():
        for cf in s.plan.closed_forms:
            size = s.plan.stragglers if cf.component.key is ComponentKey.STRAGGLERS else s.plan.queueing
            if size:  # a load or jitter of 0 at the defaults adds nothing to say
                seen.setdefault((cf.component.label, cf.status, cf.formula), []).append(name)
    out = []
    for (component, status, formula), names in seen.items():
        who = "every scheme" if len(names) == len(res.schemes) else ", ".join(names)
        out.append(f"{component} ({who}): {status}: {formula}")
    return out


def tables(res) -> list[Grid]:
    out = [step_table(res)]
    for t in (parts_table(res), target_table(res), links_table(res)):
        if t is not None:
            out.append(t)
    notes = closed_form_notes(res)
    if notes:
        out[0].notes.extend(notes)
    engines = sorted({getattr(s, "engine", "simpy") for s in res.schemes.values()})
    if engines == ["numpy"]:
        out[-1].notes.append(f"{res.events} simulated transfers (numpy engine)")
    elif engines == ["simpy"]:
        out[-1].notes.append(f"{res.events} simulation events")
    else:
        per = ", ".join(f"{n}: {getattr(s, 'engine', 'simpy')}" for n, s in res.schemes.items())
        out[-1].notes.append(f"{res.events} simulation events and transfers (engines: {per})")
    why: dict[str, list[str]] = {}
    for n, s in res.schemes.items():
        if getattr(s, "engine_note", None):
            why.setdefault(s.engine_note, []).append(n)
    for note, names in why.items():
        out[-1].notes.append(f"SimPy, not the numpy engine, for {', '.join(names)}: {note}")
    met: dict[str, list[str]] = {}
    for n, s in res.schemes.items():
        for flag in dict.fromkeys(f for r in s.runs for f in getattr(r, "flags", ())):
            met.setdefault(flag, []).append(n)
    for flag, names in met.items():
        out[0].notes.append(f"{', '.join(names)}: {flag}; the closed form does not model it")
    piped = [n for n, s in res.schemes.items() if any(ch.pp > 1 or ch.micro > 1 for ch in getattr(s.plan, "chains", ()))]
    if piped:
        out[0].notes.append(
            "the training step: each step is the replica chain's pipeline schedule, simulated (1F1B; interleaved with v > 1), then the "
            "optimiser, for " + ", ".join(piped)
        )
    return out


def render_rich(res: SimResult, console: Console) -> None:
    _render(console, header(res), tables(res))


def _render(console, head: str, ts: list[Grid]) -> None:
    print_blocks(console, [Para(head), *ts])  # markup escaped, control characters shown


# ---- --validate ----------------------------------------------------------------------------------


def _verdict(c) -> str:
    if c.kind == "blocking":
        if c.passed is None:
            return "shown"
        return "as derived" if c.passed else f"DIFFERS from the derivation (relative {c.rel:.2g})"
    if not c.statistical:
        if c.passed is None:
            diff = (c.sim - c.closed) / c.closed if c.closed else math.nan
            return f"approximation: simulation {diff:+.2g}"
        return "exact" if c.passed else f"DIFFERS (relative {c.rel:.2g})"
    if c.passed is None:
        diff = (c.sim.mean - c.closed) / c.closed if c.closed else math.nan
        return f"approximation: simulation {diff:+.1%}"
    return "agrees" if c.passed else "DISAGREES"


def _stat(c) -> str:
    if c.statistical:
        return f"{c.t:.2f} / {c.critical:.2f}"
    if c.derived is not None:
        return f"derived {_t(c.derived)}: relative difference {c.rel:.1e}"
    return f"relative difference {c.rel:.1e}"


def validation_table(v) -> Grid:
    t = Grid(
        "Simulation against the closed forms",
        ["check", "closed form", "status", "simulated (95% interval)", "|t| / critical", "result"],
    )
    marks = {}
    for i, c in enumerate(v.checks):
        sim = _mean_ci(c.sim) if c.statistical else _t(c.sim)
        status = c.status
        if c.note:
            mark = marks.setdefault(c.note, f"({len(marks) + 1})")
            status = f"{status} {mark}"
        t.rows.append([c.what, _t(c.closed), status, sim, _stat(c), _verdict(c)])
        if c.passed is False:
            t.marked.add((i, 5))
    m = v.tested
    t.notes.append(
        f"statistical checks: {v.settings.seeds} seeds, Student t with {v.settings.seeds - 1} degrees of freedom; each passes "
        f"when |mean - closed form| / standard error <= the critical value at level {v.alpha:g} / {m} (Bonferroni over the "
        f"{m} checks), so a true closed form fails the run at most {v.alpha:.0%} of the time"
    )
    t.notes.append("exact: no load and no jitter, both deterministic; they must agree to 1e-9 relative (floating-point rounding)")
    if any(c.kind in ("pipeline", "blocking", "exposed", "jitter") for c in v.checks):
        t.notes.append(
            "the training step: each replica chain's pipeline schedule is simulated (1F1B, interleaved with v > 1) with every forward and "
            "backward carrying its transfer, Calculon's convention and the closed form's; blocking sends only where data moves are its "
            "derived makespan (v = 1) and show what the convention counts beyond it; syncs that overlap the backward pass, run on into a "
            "delay, come in fragments or every step are simulated step by step"
        )
    t.notes.extend(getattr(v, "notes", []))
    for note, mark in marks.items():
        t.notes.append(f"{mark} {note}")
    passed = sum(1 for c in v.checks if c.passed)
    failed = sum(1 for c in v.checks if c.passed is False)
    shown = sum(1 for c in v.checks if c.passed is None)
    t.notes.append(
        f"{passed} agree, {failed} disagree" + (f", {shown} approximations shown" if shown else "") + f"; {v.events} simulation events"
    )
    return t


def render_validation(v: Validation, console: Console) -> None:
    c = v.settings
    head = f"{v.spec.root}: validation, {c.seeds} seeds (seed {c.seed}); params: {params_line_spec(v.spec)}"
    _render(console, head, [validation_table(v)])
    console.print("All checks agree." if v.ok else "Some checks disagree.")


__all__ = ["header", "render_rich", "render_validation", "tables", "validation_table"]
