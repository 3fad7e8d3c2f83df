"""`export latex`: the targets as a booktabs table, a row per target (value and scheme).

Each row: the quantity, the target, the scheme, the param's value where the
quantity reaches the target (in the best unit, through `paper_units.qty_tex`)
and whether that value is an exact root or a numeric one; "never in range"
rows say so. Every text from the spec passes `encode.tex_text`.
"""

from __future__ import annotations

from ctdsl import units as U
from ctdsl.report.encode import tex_text
from ctdsl.report.paper_units import qty_tex
from ctdsl.results.targets import WORDS


def _value(r, root, units: str) -> str:
    scale, unit = U.best_unit([root.value], r.dim)
    return "$" + qty_tex(root.value / scale, unit, units) + "$"


def targets_tex(sol, units: str, prefix: str) -> str | None:
    """The table float, or None when the spec asks for no targets."""
    rows = []
    for r in getattr(sol, "targets", ()):
        head = f"{tex_text(WORDS.get(r.quantity, r.quantity))} & {tex_text(r.shown_target)} & \\texttt{{{tex_text(r.scheme)}}} & \\texttt{{{tex_text(r.over)}}}"
        if not r.roots:
            rows.append(f"{head} & never in range & -- \\\\")
        for root in r.roots:
            rows.append(f"{head} & {_value(r, root, units)} & {'numeric' if root.numeric else 'exact'} \\\\")
    if not rows:
        return None
    return "\n".join(
        [
            "\\begin{table}[t]",
            "\\centering",
            "\\caption{Where each quantity reaches its target, the other params at their defaults.}",
            f"\\label{{tab:{prefix}:targets}}",
            "\\begin{tabular}{lllllr}",
            "\\toprule",
            "quantity & target & scheme & over & value & root \\\\",
            "\\midrule",
            *rows,
            "\\bottomrule",
            "\\end{tabular}",
            "\\end{table}",
        ]
    )


__all__ = ["targets_tex"]
