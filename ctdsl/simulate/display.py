"""Short reprs of simulation results, bounded whatever the spec's size (the runs
and their samples stay out of them; the tables are `_repr_html_` and `_repr_markdown_`)."""

from __future__ import annotations

import math

from ctdsl import units as U
from ctdsl.results.reprs import SHOWN_SCHEMES, clip, clip_path


def _est(e) -> str:
    if e is None or e.n == 0 or math.isnan(e.mean):
        return "n/a"
    return U.format_quantity(e.mean, U.TIME)


def scheme_line(name: str, s) -> str:
    ttt = f", time to target {_est(s.time_to_target)}" if s.time_to_target is not None else ""
    return f"{clip(name)}: step {_est(s.step)} over {s.step.n} seed{'s' * (s.step.n != 1)}{ttt}"


def scheme_sim_repr(s) -> str:
    return f"<SchemeSim {scheme_line(s.plan.name, s)}>"


def sim_repr(res) -> str:
    c, n = res.settings, len(res.schemes)
    lines = [f"<SimResult {clip_path(res.spec.root)}: {n} scheme{'s' * (n != 1)} x {c.seeds} seeds x {c.steps} steps"]
    if res.stopped:
        lines[0] += f" (stopped: {clip(res.stopped, 80)})"
    for name, s in list(res.schemes.items())[:SHOWN_SCHEMES]:
        lines.append(f"  {scheme_line(name, s)}")
    if n > SHOWN_SCHEMES:
        lines.append(f"  ... and {n - SHOWN_SCHEMES} more")
    lines[-1] += ">"
    return "\n".join(lines)
