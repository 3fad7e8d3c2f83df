"""`ctdsl solve --explain SCHEME`: the derivation of one scheme, phase by phase, link by link."""

from __future__ import annotations

import sympy as sp

from ctdsl import units as U
from ctdsl.language.components import ComponentKey, of
from ctdsl.report.encode import term_text
from ctdsl.report.tables import oversubscribed
from ctdsl.results.solution import Solution


def _fmt(q) -> str:
    return str(q)


def explain(sol: Solution, name: str) -> str:
    r = sol.schemes[name]
    out = [f"scheme {r.name}: {r.label}"]
    out.append(f"  payload {r.payload_kind}, collective {r.collective}, transform at {r.at}, H = {r.period:g}")
    if r.sites is not None:
        out.append(f"  runs on variant {r.sites} of the sites (its dcs and WAN links, not the declared ones)")
    out.append("")
    out.append("bytes")
    out.append(f"  dense D = v P = {_fmt(r.dense)}")
    out.append(f"  payload c = {_fmt(r.payload)}   [{sp.sstr(r.payload.expr)} B]")
    if r.up.expr != r.payload.expr:
        out.append(f"  up to the switch u = {_fmt(r.up)} (the dense buffer: the switch transforms it)")
    out.append(f"  wire per worker = {_fmt(r.wire)}; busiest WAN link = {_fmt(r.wan)}")
    out.append("")
    out.append("compute")
    compute = r.term(ComponentKey.COMPUTE).value
    out.append(f"  t_compute = FLOPs per step / (peak x efficiency) = {_fmt(compute)}")
    out.append(f"    = {sp.sstr(compute.expr)} s")
    out.extend(_timeline_lines(r))
    out.append("")
    out.append("transform")
    if r.term(ComponentKey.TRANSFORM) is not None:
        out.append(f"  runs at {r.transform_at}: {_fmt(r.transform)} per sync")
        out.append(f"    = {sp.sstr(r.transform.expr)} s")
        out.extend(_roofline_lines(r))
        out.extend(_module_lines(r))
    elif r.transform_at.startswith("switch"):
        out.append(f"  runs at {r.transform_at} on the streams it sums; the switch gives no total_rate or stream_rate, so it costs no time")
    else:
        out.append("  none: the payload is sent as it is")
    out.append("")
    out.append("sync, phase by phase (per sync; each step: latency + bytes on the busiest link / its bandwidth)")
    for i, ph in enumerate(r.phases, 1):
        every = " (every step)" if ph.every_step else ""
        out.append(f"  {i}. {ph.name}{every}: {ph.steps} step{'s' * (ph.steps != 1)} x {_fmt(ph.step_time)} = {_fmt(ph.time)}")
        out.append(f"     {ph.transfers} transfers per step; latency per step {_fmt(ph.latency)}; bottleneck {ph.bottleneck}")
        groups: dict[tuple, list] = {}
        for l in sorted(ph.links, key=lambda l: (l.kind != "wan", l.source, l.target)):
            groups.setdefault((l.kind, l.link, str(l.nbytes), str(l.bandwidth)), []).append(l)
        for (kind, link, nbytes, bw), ls in groups.items():
            first = ls[0]
            more = f" (and {len(ls) - 1} more like it)" if len(ls) > 1 else ""
            out.append(
                f"       {kind:5s} {link:10s} {first.source} -> {first.target}{more}: {nbytes} per step at {bw} = {first.time}"
            )
        out.extend(_queueing_lines(ph))
    out.extend(_sync_lines(r))
    out.append("")
    out.extend(_overhead_lines(r))
    out.append("step")
    H = r.period
    out.append(f"  T = {_step_form(r)} = {_fmt(r.step_time)}")
    width = max([40, *(len(t.label) for t in r.terms)])
    for t in r.terms:
        out.append(f"    {t.label:{width}s} {_fmt(t.value):>10s}  {100 * t.share:5.1f}%{'  <- binds' if t.id == r.binding else ''}")
    if r.time_to_target is not None:
        out.append(f"  time to target = {r.steps:g} steps x T = {_fmt(r.time_to_target)}")
        out.append(f"  energy to target = {_fmt(r.energy_to_target)}")
        for k, q in r.energy_parts.items():
            per = U.format_quantity(q.value * (r.steps or 0), U.ENERGY)
            out.append(f"    {k:12s} {per}")
    else:
        out.append("  no steps to target: set steps = N for time and energy to target")
    if r.closed_forms:
        out.append("")
        out.append("contention and stragglers (closed forms)")
        for cf in r.closed_forms:
            out.append(f"  {cf.component.label}: {cf.status}")
            out.append(f"    {cf.formula}")
            if cf.note:
                out.append(f"    {cf.note}")
        for line in oversubscribed(r):
            out.append(f"  {line}")
    del H
    return term_text("\n".join(out) + "\n")  # for the terminal: control characters in names and labels shown


def _module_lines(r) -> list[str]:
    """The dense stream through a pluggable's stages: each stage's rate and time, and its break points."""
    m = r.module
    if m is None:
        return []
    out = [f"  the dense stream ({_fmt(m.stream)}) passes the stages of {m.pluggable}:"]
    for st in m.stages:
        flag = "  <- binds" if st.name == m.binding else ""
        out.append(f"    {st.name:8s} {_fmt(st.rate):>12s}  {_fmt(st.time):>10s}{flag}")
    out.append(f"    + latency {_fmt(m.latency)}; charged {m.charged_cost:g} FLOP/B against the compute budget")
    if m.budget_per_byte is not None:
        out.append(f"    the budget affords {m.budget_per_byte.value:.2f} FLOP per byte at line rate (budget / line rate)")
    for b in m.breaks:
        out.append(f"    {m.binding} stops binding at {b} ({b.param} = {sp.sstr(b.expr)}); then {b.then} binds")
    return out


def _overhead_lines(r) -> list[str]:
    """The scheme's fixed time per sync, when it has one."""
    if r.overhead is None:
        return []
    return [f"overhead: {_fmt(r.overhead)} per sync (fixed: software, kernel launches, pipeline fill)", f"    = {sp.sstr(r.overhead.expr)} s", ""]


def _step_form(r) -> str:
    inner = "inner step" if r.timeline is not None else "compute"
    plain = [sy for sy in r.syncs if sy.exposed is None]
    parts = ["transform"] + (["sync"] if plain and plain[-1] is r.syncs[-1] else []) + (["overhead"] if r.overhead is not None else [])
    side = f"({' + '.join(parts)}) / H"
    if r.overlap:
        return f"max({inner}, {side})"
    extra = ["inner sync" for sy in plain if sy is not r.syncs[-1]] + [f"{sy.name} (exposed)" for sy in r.syncs if sy.exposed is not None]
    return " + ".join([inner, side, *extra])


def _timeline_lines(r) -> list[str]:
    """The replica's inner step: micro-batches, one micro-batch on a stage, the step's parts, the traffic."""
    tl = r.timeline
    if tl is None:
        return []
    out = ["", f"the training step (pp = {tl.stages:g} stages, v = {tl.virtual_stages:g} model chunks per GPU)"]
    for d in tl.dcs:
        out.append(f"  dc {d.dc}: m = {d.micro_batches.value:g} micro-batches; one micro-batch on one stage:")
        for k, q in d.per_micro.items():
            out.append(f"    {of(k).label:18s} {_fmt(q):>10s}")
        out.append("    per step:")
        for k, q in d.components.items():
            out.append(f"      {of(k).label:18s} {_fmt(q):>10s}")
        out.append(f"    inner step {_fmt(d.inner)}; the last micro-batch's backward pass (the window) {_fmt(d.window)}")
        for x in tl.traffic:
            if x.dc == d.dc:
                out.append(f"    {of(x.kind).label} on {x.link} ({x.role}): {_fmt(x.per_micro)} per micro-batch, {_fmt(x.sent)} per step, busy {_fmt(x.busy)}, exposed {_fmt(x.exposed)}")
                out.append(f"      {x.formula}")
    out.extend(f"  note: {n}" for n in tl.notes)
    return out


def _sync_lines(r) -> list[str]:
    """Each sync that overlaps something: its buckets, window, slack and what it exposes."""
    out = []
    for sy in r.syncs:
        if sy.exposed is None:
            continue
        every = "every step" if sy.every == 1 else f"every {sy.every:g} steps"
        out.append(f"  {sy.name}, {every}: the whole sync {_fmt(sy.time)} in {sy.fragments:g} fragment(s) of {sy.buckets:g} bucket(s), one bucket tau = {_fmt(sy.bucket_time)}")
        out.append(f"    window w = {_fmt(sy.window)}, slack (delay x inner step) = {_fmt(sy.slack)}")
        out.append(f"    exposed per sync max(0, max(B tau - w (B - 1) / B, tau) - slack); per step x F / every = {_fmt(sy.exposed)}")
    return out


def _roofline_lines(r) -> list[str]:
    """Both sides of each GPU roofline, which binds, and the intensity against the ridge point."""
    out = []
    for x in r.roofline:
        where = ("dcs " if len(x.dcs) > 1 else "dc ") + ", ".join(x.dcs)
        if x.memory is None:
            out.append(f"  on {x.device} ({where}): no mem_bw, so the FLOPs alone: compute-bound")
            out.append(f"    arithmetic  cost D / (peak x efficiency) = {_fmt(x.compute)}")
            continue
        bound = f"{x.binds}-bound"
        if x.charge == "flops":
            out.append(f"  on {x.device} ({where}): charged by its FLOPs alone (transform_charge = flops); the roofline would be {bound}")
        else:
            out.append(f"  on {x.device} ({where}): roofline, {bound}")
        mark = {x.binds: "  <- binds"} if x.charge == "roofline" else {"compute": "  <- charged"}
        out.append(f"    arithmetic  cost D / (peak x efficiency) = {_fmt(x.compute):>10s}{mark.get('compute', '')}")
        out.append(f"    memory      D / mem_bw                   = {_fmt(x.memory):>10s}{mark.get('memory', '')}")
        side = "below" if x.intensity.value < x.ridge.value else "at or above"
        out.append(
            f"    intensity {_fmt(x.intensity)} (the cost) is {side} the ridge point "
            f"peak x efficiency / mem_bw = {_fmt(x.ridge)}"
        )
    return out


def _queueing_lines(ph) -> list[str]:
    """Which loaded links a phase waits for, and what its burst of steps waits there per step."""
    q = ph.queueing
    if q is None:
        return []
    how = []
    if any(w.sharing == "fair" for w in q.waits):
        how.append("shared fairly, one flow of all the steps' bytes, slowed 1 / (1 - rho)")
    if any(w.sharing != "fair" for w in q.waits):
        how.append("first come, first served, the first waiting the M/D/1 mean, each later one the background that came while the one before was queued")
    out = [
        f"     queueing: each step waits {_fmt(q.seconds_per_step)} on average (its steps are a burst on each loaded "
        f"link: {'; '.join(how)}; the largest over the links)"
    ]
    for w in q.waits:
        first = "a background transfer waits rho S / (1 - rho) past S" if w.sharing == "fair" else "first wait rho S / (2 (1 - rho))"
        out.append(
            f"       {w.link} {w.source} -> {w.target} ({w.sharing}): rho = {w.load:.3g}, background transfer "
            f"{_fmt(w.transfer)} = S {_fmt(w.service)}, "
            f"{first} = {_fmt(w.wait)}"
        )
    return out
