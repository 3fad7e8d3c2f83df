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
    """The table float, or None when the spec asks for no targets. A column every row shares (the
    quantity, the param) goes into the caption, so that the table fits a column."""
    targets = list(getattr(sol, "targets", ()))
    if not targets:
        return None
    quantities = {WORDS.get(r.quantity, r.quantity) for r in targets}
    overs = {r.over for r in targets}
    one_q, one_over = len(quantities) == 1, len(overs) == 1
    rows = []
    for r in targets:
        cells = ([] if one_q else [tex_text(WORDS.get(r.quantity, r.quantity))]) + [tex_text(r.shown_target), f"\\texttt{{{tex_text(r.scheme)}}}"]
        cells += [] if one_over else [f"\\texttt{{{tex_text(r.over)}}}"]
        head = " & ".join(cells)
        if not r.roots:
            rows.append(f"{head} & never in range & -- \\\\")
        for root in r.roots:
            rows.append(f"{head} & {_value(r, root, units)} & {'numeric' if root.numeric else 'exact'} \\\\")
    header = ([] if one_q else ["quantity"]) + ["target", "scheme"] + ([] if one_over else ["over"]) + ["value", "root"]
    what = tex_text(next(iter(quantities))) if one_q else "each quantity"
    over = f" over \\texttt{{{tex_text(next(iter(overs)))}}}" if one_over else ""
    return "\n".join(
        [
            "\\begin{table}[t]",
            "\\centering",
            f"\\caption{{Where {what} reaches its target{over}, the other params at their defaults.}}",
            f"\\label{{tab:{prefix}:targets}}",
            f"\\begin{{tabular}}{{{'l' * (len(header) - 1)}r}}",
            "\\toprule",
            " & ".join(header) + " \\\\",
            "\\midrule",
            *rows,
            "\\bottomrule",
            "\\end{tabular}",
            "\\end{table}",
        ]
    )


__all__ = ["targets_tex"]
