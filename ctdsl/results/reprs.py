"""Short reprs of results, bounded whatever the spec's size.

A repr is one line per object (a Solution's a few lines): names and labels are
clipped to `NAME_CHARS`, and a Solution lists at most `SHOWN_SCHEMES` schemes,
so that `repr(result)` in a notebook stays small (the full views are `str`,
`_repr_html_`, `_repr_latex_` and `to_json`). Text from the spec is shown with
control characters escaped (`repr`-style) so that a repr never carries them raw.
"""

from __future__ import annotations

from ctdsl import units as U

NAME_CHARS = 40  # a name or label longer than this is clipped, with "..."
SHOWN_SCHEMES = 10  # a Solution's repr lists at most this many schemes


def clip(text: str, n: int = NAME_CHARS) -> str:
    """`text` with control characters escaped, at most `n` characters (ending in '...' when clipped)."""
    shown = "".join(c if c.isprintable() else repr(c)[1:-1] for c in str(text))
    return shown if len(shown) <= n else shown[: n - 3] + "..."


def clip_path(path: str, n: int = 80) -> str:
    """A path clipped from the left, so that its file name stays."""
    shown = clip(path, 10**6)
    return shown if len(shown) <= n else "..." + shown[-(n - 3):]


def quantity_text(q) -> str:
    return "n/a" if q is None else U.format_quantity(q.value, q.dim)


def scheme_line(r) -> str:
    """`band_gpu: step 17.6 s (compute binds), time to target 58.6 h`."""
    ttt = f", time to target {quantity_text(r.time_to_target)}" if r.time_to_target is not None else ""
    return f"{clip(r.name)}: step {quantity_text(r.step_time)} ({clip(r.binding.label)} binds){ttt}"


def scheme_repr(r) -> str:
    return f"<SchemeResult {scheme_line(r)}>"


def breakeven_repr(b) -> str:
    return f"<BreakevenResult {clip(b.x)} vs {clip(b.y)} over {clip(b.over)}: {len(b.roots)} root{'s' * (len(b.roots) != 1)}>"


def solution_repr(sol) -> str:
    n, k = len(sol.schemes), len(sol.breakevens)
    lines = [f"<Solution {clip_path(sol.spec.root)}: {n} scheme{'s' * (n != 1)}, {k} break-even{'s' * (k != 1)}"]
    for r in list(sol.schemes.values())[:SHOWN_SCHEMES]:
        lines.append(f"  {scheme_line(r)}")
    if n > SHOWN_SCHEMES:
        lines.append(f"  ... and {n - SHOWN_SCHEMES} more")
    lines[-1] += ">"
    return "\n".join(lines)
