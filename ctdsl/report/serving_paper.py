"""Serving in the report and in `export latex`: typed blocks (`ctdsl.report.blocks`) of the
serving results, which each writer encodes for its sink.

- a paragraph a workload: the rate each path sustains, what binds it (a pool or the
  hand-off link), the goodput under its SLO and the target that sets it;
- `capacity`: each pool's and link's capacity in requests/s (the binding one, the rate
  the path sustains, emphasised), the binding name and the goodput;
- `latency`: TTFT and end-to-end at the SLO's percentile and the mean TPOT, each beside
  its target, and whether all of them hold at the workload's rate;
- `handoff`: each hand-off as its scheme sends it: payload, where it is transformed, the
  bytes sent, the link's time, what of it TTFT sees and the link's utilisation.

Every value is read from the result tree (`Solution.serving`, ctdsl.results.serving); spec
text (workload, hand-off and pool names, labels) goes into `Text` and `Name` cells only.
"""

from __future__ import annotations

import math

from ctdsl import units as U
from ctdsl.report.blocks import Grid, Name, Para, Prose, Qty, Section, Text
from ctdsl.report.document_tex import grid_tex, prose_tex, table_format
from ctdsl.report.paper_units import SIUNITX, number
from ctdsl.results.serving import PathResult

CAPACITIES = ("prefill", "decode", "link", "colocated")
RPS = "req/s"


def _path_cell(r: PathResult) -> Text:
    return Text(f"{r.workload}: {r.handoff_label}" if r.handoff else f"{r.workload}: {r.entry} (colocated)")


def _finite(v: float | None) -> float | None:
    return v if v is not None and math.isfinite(v) else None


def _column(values: list[float | None], dim) -> tuple[float, str]:
    """One readable unit for a column of values (the scale to divide by and its label)."""
    return U.best_unit([v for v in values if v is not None and math.isfinite(v) and v > 0] or [1.0], dim)


def _ms(rows: list[PathResult], get) -> tuple[list[Qty], str]:
    vals = [_finite(get(r)) for r in rows]
    scale, label = _column(vals, U.TIME)
    return [Qty(None if v is None else v / scale, label) for v in vals], label


def capacity(rows: list[PathResult], prefix: str = "ctdsl") -> Grid:
    """Each path's capacities in requests/s, the sustainable rate, what binds it and the goodput."""
    kinds = [k for k in CAPACITIES if any(k in r.capacities for r in rows)]
    header = [Text("path"), *(Text(k) for k in kinds), Text("binding"), Text("goodput")]
    out, marked = [], set()
    for i, r in enumerate(rows):
        cells: list = [_path_cell(r)]
        for j, k in enumerate(kinds):
            q = r.capacities.get(k)
            cells.append(Qty(_finite(q.value) if q is not None else None, RPS))
            if k == r.binding:
                marked.add((i, 1 + j))
        cells += [Text(r.binding), Qty(_finite(r.goodput.value) if r.goodput else None, RPS)]
        out.append(cells)
    caption = (Text("Serving: each pool's and link's capacity in requests/s; the path sustains the least, the binding one; the goodput is the highest rate at which the SLO holds."),)
    notes = ["requests/s each pool and link can serve (docs/serving.md, Capacities); goodput: the highest rate at which every target of the SLO holds"]
    return Grid("Serving: capacity", header, out, marked, notes, caption=caption, label=f"tab:{prefix}:serving-capacity")


def latency(rows: list[PathResult], prefix: str = "ctdsl") -> Grid | None:
    """TTFT and end-to-end at the SLO's percentile, the mean TPOT, each beside its target; None without an SLO."""
    rows = [r for r in rows if r.targets]
    if not rows:
        return None
    pct = {r.percentile for r in rows}
    p = f"p{100 * next(iter(pct)):g}" if len(pct) == 1 else "at the percentile"
    cols = [
        (f"TTFT {p}", lambda r: r.value("ttft_p")),
        ("target", lambda r: r.targets["ttft"].value if "ttft" in r.targets else None),
        ("TPOT", lambda r: r.value("tpot")),
        ("target", lambda r: r.targets["tpot"].value if "tpot" in r.targets else None),
        (f"e2e {p}", lambda r: r.value("e2e_p")),
        ("target", lambda r: r.targets["e2e"].value if "e2e" in r.targets else None),
    ]
    if not any("e2e" in r.targets for r in rows):
        cols = cols[:5]
    header, units, columns = [Text("path"), Text("rate")], ["", RPS], []
    for title, get in cols:
        qs, label = _ms(rows, get)
        header.append(Text(title))
        units.append(label)
        columns.append(qs)
    header.append(Text("met"))
    units.append("")
    out, marked = [], set()
    for i, r in enumerate(rows):
        met = _met(r)
        out.append([_path_cell(r), Qty(_finite(r.rate.value), RPS), *(c[i] for c in columns), Text("yes" if met else ("over capacity" if r.over_capacity else "no"))])
        if not met:
            marked.add((i, len(header) - 1))
    caption = (Text(f"Serving at the workload's rate: TTFT and end-to-end latency at the SLO's percentile ({p}), the mean TPOT (the closed forms give no TPOT percentile), each beside its target."),)
    notes = ["TTFT and e2e: each queue's wait at its exponential tail, summed (an upper bound); TPOT: Little's law at the workload's rate (docs/serving.md)"]
    return Grid("Serving: latency against the SLO", header, out, marked, notes, units=units, caption=caption, label=f"tab:{prefix}:serving-latency")


def _met(r: PathResult) -> bool:
    """Every target of the SLO holds at the workload's rate."""
    if r.over_capacity:
        return False
    got = {"ttft": r.value("ttft_p"), "tpot": r.value("tpot"), "e2e": r.value("e2e_p")}
    return all(got[k] is not None and got[k] <= q.value for k, q in r.targets.items())


def handoff(rows: list[PathResult], spec, prefix: str = "ctdsl") -> Grid | None:
    """Each hand-off as its scheme sends the KV cache; None for a colocated-only spec."""
    rows = [r for r in rows if r.handoff]
    if not rows:
        return None
    hs = spec.serving.handoffs
    sent = [_finite(r.value("handoff_bytes")) for r in rows]
    bscale, blabel = _column(sent, U.DATA)
    times = [_ms(rows, lambda r, k=k: r.value(k)) for k in ("transform", "handoff", "handoff_exposed")]
    header = [Text("path"), Text("payload"), Text("sent"), Text("transform"), Text("link busy"), Text("in TTFT"), Text("link rho")]
    out = []
    for i, r in enumerate(rows):
        h = hs[r.handoff]
        mode = ", layerwise" if h.mode.value == "layerwise" else ""
        where = "" if h.payload.value == "plain" and h.at == "gpu" else (" on GPU" if h.at == "gpu" else f" in {h.at}")
        out.append([_path_cell(r), Text(f"{h.payload.value}{mode}{where}"), Qty(None if sent[i] is None else sent[i] / bscale, blabel), *(t[0][i] for t in times), Qty(_finite(r.value("link_utilisation")), "1")])
    caption = (Text("Serving: each hand-off of the KV cache, its payload and where it is transformed (on the prefill GPUs, or streaming in a module), the bytes it sends, the time the link is busy, what of it TTFT sees, and the link's utilisation at the workload's rate."),)
    return Grid("Serving: hand-off by scheme", header, out, units=["", "", blabel, *(t[1] for t in times), ""], caption=caption, label=f"tab:{prefix}:serving-handoff")


def summary(rows: list[PathResult]) -> list[tuple]:
    """A paragraph a workload, as runs: what binds its paths and the rate each sustains, and its goodput."""
    out = []
    by: dict[str, list[PathResult]] = {}
    for r in rows:
        by.setdefault(r.workload, []).append(r)
    for w, paths in by.items():
        n = len(paths)
        runs: list = [Text("Workload "), Name(w), Text(f" at {_rate(paths[0].rate.value)}, {n} path{'s' * (n != 1)}: ")]
        binds: dict[str, list[PathResult]] = {}
        for r in paths:
            binds.setdefault(r.binding, []).append(r)
        for k, (what, mine) in enumerate(sorted(binds.items(), key=lambda kv: (-len(kv[1]), kv[0]))):
            top = max(mine, key=lambda r: (_finite(r.sustainable.value) or 0.0, r.name))
            runs.append(Text(f"{', ' if k else ''}bound by {_bound(what)} on {len(mine)}"))
            if len(mine) == 1:
                runs += [Text(" ("), _path_cell(top), Text(f", {_rate(top.sustainable.value)})")]
            else:
                runs.append(Text(f" (up to {_rate(top.sustainable.value)})"))
        if any(r.targets for r in paths):
            met = [r for r in paths if r.targets and _met(r)]
            runs.append(Text(f". The SLO holds at this rate on {len(met)} of {n}"))
            good = [r for r in paths if r.goodput is not None]
            if good:
                g = max(good, key=lambda r: (_finite(r.goodput.value) or 0.0, r.name))
                runs += [Text("; the highest goodput, "), Text(f"{_rate(g.goodput.value)} (set by {g.goodput_binding}), is on "), _path_cell(g)]
        runs.append(Text("."))
        out.append(tuple(runs))
    return out


def _bound(binding: str) -> str:
    return "the hand-off link" if binding == "link" else f"the {binding} pool" if binding != "colocated" else "the colocated instances"


def _rate(v: float | None) -> str:
    return "n/a" if v is None or v != v else f"{v:.4g} req/s"


def _plain(runs: tuple) -> str:
    return "".join(r.text for r in runs)


def section(sol) -> list[Section]:
    """The report's serving section (Markdown and HTML); none for a spec that does not serve."""
    rows = list(getattr(sol, "serving", ()))
    if not rows:
        return []
    s = Section("Serving")
    s.blocks += [Para(_plain(runs)) for runs in summary(rows)]
    s.blocks.append(Para("Capacities, latency and energy per path are in the solve tables below; here, the latency against the SLO and each hand-off as its scheme sends it."))
    s.blocks += [g for g in (latency(rows), handoff(rows, sol.spec)) if g is not None]
    return [s]


def _tex_cols(g: Grid, units: str, first: float) -> str:
    """The column spec of a serving table: the path wrapped to `first` of the line, text left, numbers
    on the decimal point (siunitx) or right (plain), as the writer chooses them for other tables."""
    out = [rf"p{{{first:g}\linewidth}}"]
    for j in range(1, len(g.header)):
        numbers = [number(c.value) for c in (row[j] for row in g.rows) if isinstance(c, Qty) and c.value is not None and math.isfinite(c.value)]
        if not any(isinstance(row[j], Qty) for row in g.rows):
            out.append("l")
        elif units == SIUNITX and numbers:
            out.append(f"S[table-format={table_format(numbers)}]")
        else:
            out.append("r")
    return "".join(out)


def tex(sol, units: str, columns: int, prefix: str) -> str:
    """`export latex`'s serving part: a paragraph a workload and the three tables, or '' when nothing is served."""
    rows = list(getattr(sol, "serving", ()))
    if not rows:
        return ""
    parts = [prose_tex(Prose(runs, (Text("Serving"),))) for runs in summary(rows)]
    for g, first in ((capacity(rows, prefix), 0.2), (latency(rows, prefix), 0.2), (handoff(rows, sol.spec, prefix), 0.17)):
        if g is None:
            continue
        g.wide = True
        g.cols = _tex_cols(g, units, first)  # table* on a two-column page: a share of the text's width
        parts.append(grid_tex(g, units, columns))
    return "\n\n".join(parts)


__all__ = ["capacity", "handoff", "latency", "section", "summary", "tex"]
