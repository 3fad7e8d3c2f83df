"""The solve tables, as blocks of the document model (`blocks.Grid`), built once from the results;
the writers of each format (`document_rich` for the terminal, `document_md`, `document_html`,
`document_tex`) write them, in `ctdsl solve`, `ctdsl report` and a notebook alike.

Each table is a title, a header, rows of cells (strings) and notes. Keeping the
rows format-free means the terminal, Markdown and notebook views say the same.

Long: every solve table's rows, one function per answer a spec asks for, built the same way
(title, header, rows, notes); the formats render them elsewhere.
"""

from __future__ import annotations

import csv
from io import StringIO
from typing import TYPE_CHECKING

from ctdsl import units as U
from ctdsl.language.components import ComponentKey, Group
from ctdsl.report.money_tables import money_rows
from ctdsl.report.serving_out import serving_csv, serving_tables
from ctdsl.report.step_tables import inner_table, sync_table, traffic_table
from ctdsl.report.target_tables import bytes_table, targets_table
from ctdsl.report.words import count_of
from ctdsl.report.blocks import Grid, Name, Para, Prose, Section, Text
from ctdsl.report.document_md import blocks_md, headed
from ctdsl.report.document_rich import print_blocks
from ctdsl.report.encode import csv_cell
from ctdsl.results.solution import Solution

if TYPE_CHECKING:  # types only: no import at run time
    from rich.console import Console


def _f(q) -> str:
    return "n/a" if q is None else str(q)


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def _ratio(x: float) -> str:
    return f"{x:.2f}x" if x == x and x != float("inf") else "n/a"


def models_table(sol) -> Grid | None:
    if not sol.models:
        return None
    t = Grid("Models", ["model", "parameters", "update (v P)", "FLOPs / step / worker", "KV cache / token", "KV hand-off"])
    for m in sol.models.values():
        handoff = f"{m.kv_handoff} ({m.kv_tokens:g} tokens)" if m.kv_handoff is not None else "-"
        t.rows.append(
            [
                m.name,
                f"{m.params:,.0f}",
                _f(m.dense),
                _f(m.flops_per_step),
                _f(m.kv_per_token) if m.kv_per_token is not None else "-",
                handoff,
            ]
        )
    return t


def _count(x: float) -> str:
    return f"{x:,.0f}" if x == x and x == round(x) else f"{x:,.6g}"


def job_table(sol) -> Grid | None:
    """The job's size: sites, nodes and GPUs, a row per distinct set of sites the schemes run on."""
    rows: dict[tuple, list[str]] = {}
    for r in sol.schemes.values():
        if r.job is None:
            continue
        rows.setdefault((r.sites, r.job.sites.value, r.job.nodes.value, r.job.gpus.value), []).append(r.name)
    if not rows:
        return None
    t = Grid("Job size", ["schemes", "sites", "nodes", "GPUs"])
    for (_, sites, nodes, gpus), names in rows.items():
        t.rows.append([", ".join(names) if len(rows) > 1 else "all", _count(sites), _count(nodes), _count(gpus)])
    t.notes.append("nodes: a dc of replicas' GPUs over its replica's gpus_per_node (rounded up); a worker is a node")
    return t


def _sum(terms) -> float:
    return sum(t.value.value for t in terms)


def step_table(sol) -> Grid:
    rows = list(sol.schemes.values())
    G = Group
    # columns for the model-parallel part of the inner step and for exposed syncs, when a scheme has them
    has_m = any(r.of(G.MODEL_PARALLEL) for r in rows)
    has_x = any(r.of(G.EXPOSED_SYNC) for r in rows)
    # columns for contention and stragglers, when the spec sets them and they are not 0 at the defaults
    has_q = any(t.value.value for r in rows for t in r.of(G.QUEUEING))
    has_s = any(t.value.value for r in rows for t in r.of(G.STRAGGLERS))
    has_o = any(t.value.value for r in rows for t in r.of(G.OVERHEAD))
    groups = [G.COMPUTE] + ([G.MODEL_PARALLEL] if has_m else []) + [G.TRANSFORM, G.SYNC_IN_SITE, G.SYNC_ACROSS_SITES]
    groups += ([G.EXPOSED_SYNC] if has_x else []) + ([G.QUEUEING] if has_q else []) + ([G.STRAGGLERS] if has_s else []) + ([G.OVERHEAD] if has_o else [])
    t = Grid("Step time at the defaults", ["scheme", *(g.label for g in groups), "step", "H", "binding", "CU", "MFU"])
    col = {g: i for i, g in enumerate(groups, 1)}
    for i, r in enumerate(rows):
        step = r.step_time.value
        compute, tr = r.term(ComponentKey.COMPUTE), r.term(ComponentKey.TRANSFORM)
        parts = r.of(G.COMPUTE)  # compute, and with compute = operations its memory-bound and end-stage parts
        cells = [r.name, f"{_f(compute.value)} ({_pct(compute.share)})" if len(parts) == 1 else _share(_sum(parts), step)]
        if has_m:
            mp = r.of(G.MODEL_PARALLEL)
            cells.append(_share(_sum(mp), step) if mp else "-")
        cells += [f"{_f(tr.value)} ({_pct(tr.share)})" if tr else "-", _share(_sum(r.of(G.SYNC_IN_SITE)), step), _share(_sum(r.of(G.SYNC_ACROSS_SITES)), step)]
        if has_x:
            xs = r.of(G.EXPOSED_SYNC)
            cells.append(_share(_sum(xs), step) if xs else "-")
        if has_q:
            cells.append(_share(_sum(r.of(G.QUEUEING)), step))
        for key, on in ((ComponentKey.STRAGGLERS, has_s), (ComponentKey.OVERHEAD, has_o)):
            if on:
                q = r.term(key)
                cells.append(_share(q.value.value, step) if q is not None else "-")
        cells += [
            _f(r.step_time) + (" (overlapped)" if r.overlap else ""),
            f"{r.period:g}",
            r.binding.label,
            _pct(r.utilisation.value) if r.utilisation is not None else "n/a",
            _pct(r.mfu.value) if r.mfu is not None else "n/a",
        ]
        t.marked.add((i, col[r.binding.group]))
        t.rows.append(cells)
    t.notes.append("sync is divided by H (steps between syncs); shares are of the step; the binding component is marked")
    if has_m:
        t.notes.append("model parallel: recomputation, tensor, context, expert and pipeline parallel traffic on the critical path, the pipeline bubble, the optimiser and ZeRO-3's parameter gathers (the training step table)")
    if has_x:
        t.notes.append("sync exposed: what the step waits for of a sync that overlaps the backward pass or later steps (the sync schedule table)")
    t.notes.append("CU: compute utilisation, the inner step (compute and model parallel) / step; MFU: model FLOPs per step / (step x peak of the GPUs), FLOPs = flops_per_token x tokens, no recomputation")
    if has_o:
        t.notes.append("overhead: each scheme's fixed time per sync (software, kernel launches, pipeline fill), divided by H")
    t.notes.extend(closed_form_notes(sol))
    return t


def closed_form_notes(sol) -> list[str]:
    """One line per contention or straggler term: its formula and whether it is exact."""
    seen: dict[tuple, list[str]] = {}
    for r in sol.schemes.values():
        for t in r.terms:
            cf = t.closed_form
            if cf is not None and t.value.value:  # a load or jitter of 0 adds nothing to say
                seen.setdefault((cf.component.label, cf.formula, cf.status, cf.note), []).append(r.name)
    out = []
    for (component, formula, status, note), names in seen.items():
        who = "every scheme" if len(names) == len(sol.schemes) else ", ".join(names)
        out.append(f"{component} ({who}), {status}: {formula}" + (f"; {note}" if note else ""))
    for r in sol.schemes.values():
        for line in oversubscribed(r):
            out.append(f"{r.name}: {line}")
    return out


def oversubscribed(r) -> list[str]:
    """Loaded links whose background and sync together need more than the whole link (the bound is the results')."""
    step = r.step_time.value
    over: dict[tuple, list[str]] = {}
    for ll in r.loaded_links:
        if ll.bound is not None:
            over.setdefault((ll.link, ll.load, ll.busy, ll.bound), []).append(f"{ll.source} -> {ll.target}")
    out = []
    for (link, rho, busy, bound), edges in over.items():
        out.append(
            f"{link} {' and '.join(edges)} {'is' if len(edges) == 1 else 'are'} over-subscribed: background "
            f"{_pct(rho)} + sync {_pct(busy / step)} of the step; the burst's queueing wait does not hold there, and in the "
            f"long run the step takes at least {U.format_quantity(bound, U.TIME)} (sync busy time / (1 - rho))"
        )
    return out


def _share(seconds: float, step: float) -> str:
    if seconds == 0:
        return "-"
    return f"{U.format_quantity(seconds, U.TIME)} ({_pct(seconds / step if step else 0)})"


def module_table(sol) -> Grid | None:
    rows = [r for r in sol.schemes.values() if r.module is not None]
    if not rows:
        return None
    stage_names: list[str] = []
    for r in rows:
        for s in r.module.stages:
            if s.name not in stage_names:
                stage_names.append(s.name)
    t = Grid(
        "Module stages (the dense stream through the pluggable)",
        ["scheme", "module"] + stage_names + ["budget / byte", "charged", "bottleneck", "changes at"],
    )
    for i, r in enumerate(rows):
        m = r.module
        by = {s.name: s for s in m.stages}
        cells = [r.name, m.pluggable]
        for j, name in enumerate(stage_names):
            s = by.get(name)
            cells.append(f"{s.rate} / {s.time}" if s else "-")
            if name == m.binding:
                t.marked.add((i, 2 + j))
        brk = "; ".join(f"{b} (then {b.then})" for b in m.breaks) or (
            f"never: {m.binding} is the only stage" if m.runner_up is None else f"no param moves {m.binding}"
        )
        bpb = f"{m.budget_per_byte.value:.2f} FLOP/B" if m.budget_per_byte is not None else "-"
        cells += [bpb, f"{m.charged_cost:g} FLOP/B", m.binding, brk]
        t.rows.append(cells)
    t.notes.append("each stage: rate / time for the stream; the slowest stage sets the module's rate; plus the module's latency")
    return t


def target_table(sol) -> Grid:
    base = sol.schemes.get(sol.baseline) if sol.baseline else None
    head = ["scheme", "steps", "step", "time to target", "energy to target"]
    if base is not None:
        head.append(f"time vs {base.name}")
    # bytes to target: the busiest worker's, and where the sites are joined by a WAN what crosses
    # it (the bytes between DiLoCo's workers when they are the dcs); the ratio is of the latter
    wan = any("wan" in r.class_bytes_to_target for r in sol.schemes.values())
    volume = (lambda r: r.class_bytes_to_target.get("wan")) if wan else (lambda r: r.bytes_to_target)  # noqa: E731
    head.append("bytes to target")
    if wan:
        head.append("across sites")
    if base is not None:
        head.append(f"{'across sites' if wan else 'bytes'} vs {base.name}")
    t = Grid("Time and energy to target", head)
    best = min(
        (r for r in sol.schemes.values() if r.time_to_target is not None),
        key=lambda r: r.time_to_target.value,
        default=None,
    )
    for i, r in enumerate(sol.schemes.values()):
        cells = [r.name, f"{r.steps:g}" if r.steps is not None else "n/a", _f(r.step_time), _f(r.time_to_target), _f(r.energy_to_target)]
        if base is not None:
            if r.time_to_target is not None and base.time_to_target is not None and base.time_to_target.value:
                cells.append(_ratio(r.time_to_target.value / base.time_to_target.value))
            else:
                cells.append("n/a")
        cells.append(_f(r.bytes_to_target))
        if wan:
            cells.append(_f(volume(r)))
        if base is not None:
            mine, theirs = volume(r), volume(base)
            cells.append(_ratio(mine.value / theirs.value) if mine is not None and theirs is not None and theirs.value else "n/a")
        if best is not None and r is best:
            t.marked.add((i, 3))
        t.rows.append(cells)
    t.notes.append("bytes to target: what the busiest worker sends over the run, steps / H x its bytes per sync"
                   + ("; across sites: what the WAN links carry over the run" if wan else ""))
    if best is not None:
        t.notes.append(f"first to the target: {best.name}" + (f" ({best.label})" if best.label != best.name else ""))
    return t


def breakeven_table(sol) -> Grid | None:
    if not sol.breakevens:
        return None
    t = Grid("Break-even", ["schemes", "over", "where they tie", "faster below", "faster above", "what binds"])
    for b in sol.breakevens:
        name = f"{b.x} vs {b.y}" + (f" on {b.on}" if b.on != "time" else "")
        who = (lambda s: s) if b.on == "time" else (lambda s: f"{s} ({b.better})" if s else s)  # noqa: E731
        if b.missing:
            t.rows.append([name, b.over, b.missing, "-", "-", "-"])
            continue
        r = b.result
        if not r.roots:
            t.rows.append([name, b.over, f"never in range ({r.reason})", who(r.faster_at_lo) or "-", who(r.faster_at_hi) or "-", "-"])
            continue
        for root in r.roots:
            t.rows.append(
                [name, b.over, U.format_quantity(root.value, b.dim) + (" (numeric)" if root.numeric else ""), who(root.below), who(root.above), "; ".join(root.regime) or "-"]
            )
    return t


def memory_table(sol) -> Grid | None:
    """Memory per GPU, where some device gives its memory: the shard's parts against it."""
    rows = [m for m in getattr(sol, "memory", ()) if m.capacity is not None]
    if not rows:
        return None
    t = Grid("Memory per GPU", ["model", "dc", "weights", "gradients", "optimizer", "activations", "total", "memory", "fits"])
    for m in rows:
        fits = "yes" if m.fits else ("-" if m.fits is None else f"no: {U.format_quantity(m.total.value - m.capacity.value, U.DATA)} over")
        t.rows.append([m.model, m.dc, *(_f(m.parts[k]) for k in ("weights", "gradients", "optimizer", "activations")), _f(m.total), _f(m.capacity), fits])
        if m.fits is False:
            t.marked.add((len(t.rows) - 1, 8))
    t.notes = list(dict.fromkeys(f"{m.dc}: {m.note}" for m in rows))
    return t


def all_tables(sol) -> list[Grid]:
    if sol.serving and not sol.schemes:  # a serving spec: its tables alone (docs/serving.md), and its hand-offs' break-evens
        return serving_tables(sol) + [b for b in [breakeven_table(sol)] if b is not None]
    return _training_tables(sol) + serving_tables(sol)


def _training_tables(sol) -> list[Grid]:
    models = models_table(sol)
    job = job_table(sol)
    out = ([models] if models else []) + ([job] if job else []) + [bytes_table(sol), step_table(sol)]
    out.extend(x for x in (inner_table(sol), traffic_table(sol), sync_table(sol)) if x is not None)
    mem = memory_table(sol)
    if mem:
        out.append(mem)
    m = module_table(sol)
    if m:
        out.append(m)
    out.append(target_table(sol))
    out.extend(Grid(title, header, rows, notes=notes) for title, header, rows, notes in [m for m in [money_rows(sol)] if m is not None])  # a spec that prices something
    b = breakeven_table(sol)
    if b:
        out.append(b)
    out.extend(x for x in [targets_table(sol)] if x is not None)
    return out


def render_rich(sol: Solution, console: Console) -> None:
    """The solve tables on a terminal, under a line that names the spec and gives the params' values
    (`document_rich`: every text from the spec has its markup escaped and control characters shown)."""
    lead = Prose((Text(f": {count_of(len(sol.schemes), 'scheme')}, {params_heading(sol)}: "), Text(params_line(sol))), (Name(sol.spec.root),))
    print_blocks(console, [lead, *all_tables(sol)], mark=" *")


def params_line(sol) -> str:
    """Each param's value; one given by --set says so."""
    parts = []
    for p in sol.spec.params.values():
        parts.append(f"{p.name} = {U.format_quantity(p.default, p.dim)}" + (" (--set)" if p.given else ""))
    return ", ".join(parts) or "none"


def params_heading(sol) -> str:
    """`params at their defaults`, or `params (defaults, but as set)` when --set gave some."""
    return "params (defaults, except as set)" if any(p.given for p in sol.spec.params.values()) else "params at their defaults"


def render_markdown(sol: Solution) -> str:
    """The solve tables as a Markdown page (`solve --format markdown`): the spec's name as its title, the
    params' values, each table under a heading of its title (`document_md`)."""
    heading = params_heading(sol)
    lead = Para(f"{heading[0].upper() + heading[1:]}: {params_line(sol)}.")
    return blocks_md([Section(sol.spec.root, [lead, *(headed(t) for t in all_tables(sol))], level=1)])


def render_plain(sol) -> str:
    from rich.console import Console

    buf = StringIO()
    console = Console(file=buf, width=140, no_color=True, color_system=None, force_terminal=False)
    render_rich(sol, console)
    return buf.getvalue()


CSV_COLUMNS = [
    ("scheme", lambda r: r.name),
    ("payload_kind", lambda r: r.payload_kind),
    ("collective", lambda r: r.collective),
    ("at", lambda r: r.at),
    ("period", lambda r: r.period),
    ("steps", lambda r: r.steps),
    ("dense_B", lambda r: r.dense.value),
    ("payload_B", lambda r: r.payload.value),
    ("wire_B", lambda r: r.wire.value),
    ("wan_B", lambda r: r.wan.value),
    ("compute_s", lambda r: r.term(ComponentKey.COMPUTE).value.value),
    ("transform_s", lambda r: _value(r, ComponentKey.TRANSFORM)),
    ("sync_s", lambda r: _sum(r.of(*SYNC))),
    ("step_s", lambda r: r.step_time.value),
    ("binding", lambda r: r.binding.label),
    ("time_to_target_s", lambda r: r.time_to_target.value if r.time_to_target else None),
    ("energy_to_target_J", lambda r: r.energy_to_target.value if r.energy_to_target else None),
    ("bytes_to_target_B", lambda r: r.bytes_to_target.value if r.bytes_to_target else None),
    ("wan_bytes_to_target_B", lambda r: r.class_bytes_to_target["wan"].value if "wan" in r.class_bytes_to_target else None),
]


def _value(r, key: ComponentKey) -> float:
    """One component's seconds per step, 0.0 where the scheme has none."""
    t = r.term(key)
    return t.value.value if t is not None else 0.0


# the sync's components: its phases and exposed parts (not compute, the model-parallel inner
# step, the transform, stragglers, overhead or queueing)
SYNC = (Group.SYNC_IN_SITE, Group.SYNC_ACROSS_SITES, Group.EXPOSED_SYNC)


def render_csv(sol: Solution) -> str:
    if sol.serving and not sol.schemes:  # a serving spec: its table alone
        return serving_csv(sol)
    if sol.serving:  # a second table, after an empty line
        return _training_csv(sol) + "\n" + serving_csv(sol)
    return _training_csv(sol)


def _training_csv(sol: Solution) -> str:
    buf = StringIO()
    w = csv.writer(buf, lineterminator="\n")
    columns = list(CSV_COLUMNS)
    # contention and stragglers, when the spec sets them (sync_s leaves them out)
    schemes = sol.schemes.values()
    if any(r.of(Group.MODEL_PARALLEL) for r in schemes):  # the training step's timeline
        columns.insert(11, ("model_parallel_s", lambda r: _sum(r.of(Group.MODEL_PARALLEL))))
    if any(r.of(Group.QUEUEING) for r in schemes):
        columns.append(("queueing_s", lambda r: _sum(r.of(Group.QUEUEING))))
    for key in (ComponentKey.STRAGGLERS, ComponentKey.OVERHEAD):
        if any(r.term(key) is not None for r in schemes):
            columns.append((f"{key.value}_s", lambda r, key=key: _value(r, key)))
    for key, col in (("cost_to_target", "cost_to_target_USD"), ("co2e_to_target", "co2e_to_target_g")):  # priced specs only
        if any(getattr(r, key) is not None for r in sol.schemes.values()):
            columns.append((col, lambda r, key=key: getattr(r, key).value if getattr(r, key) is not None else None))
    if any(r.sites is not None for r in sol.schemes.values()):  # the sites, when a scheme runs on a variant
        columns.append(("sites", lambda r: r.sites or "declared"))
    w.writerow([c for c, _ in columns])
    for r in sol.schemes.values():
        row = []
        for _, get in columns:
            v = get(r)
            row.append("" if v is None else (repr(v) if isinstance(v, float) else csv_cell(v)))
        w.writerow(row)
    return buf.getvalue()
