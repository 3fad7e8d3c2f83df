"""HTML views for notebooks (`_repr_html_`): the solve tables, with equations in LaTeX."""

from __future__ import annotations

from ctdsl.report.encode import html_text as escape
from ctdsl.report.tables import all_tables


def table_html(header, rows, marked=frozenset(), notes=(), caption: str | None = None) -> str:
    """An HTML table; marked (row, column) cells in bold, notes below it."""
    cap = f"<caption>{escape(caption)}</caption>" if caption else ""
    head = "".join(f"<th>{escape(h)}</th>" for h in header)
    body = []
    for i, row in enumerate(rows):
        cells = "".join(
            f'<td class="mark"><b>{escape(c)}</b></td>' if (i, j) in marked else f"<td>{escape(c)}</td>"
            for j, c in enumerate(row)
        )
        body.append(f"<tr>{cells}</tr>")
    foot = "".join(f'<p class="note"><small>{escape(n)}</small></p>' for n in notes)
    return f"<table>{cap}<thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>{foot}"


def _table_html(t) -> str:
    return f"<h4>{escape(t.title)}</h4>" + table_html(t.header, t.rows, t.marked, t.notes)


def solution_html(sol) -> str:
    return f"<div><h3>{escape(sol.spec.root)}</h3>" + "".join(_table_html(t) for t in all_tables(sol)) + "</div>"


def scheme_html(r) -> str:
    rows = [
        ("payload", str(r.payload)),
        ("wire per worker", str(r.wire)),
        ("WAN (busiest link)", str(r.wan)),
        ("dense / payload", f"{r.ratio:.2f}x"),
        *[(t.label, f"{t.value} ({100 * t.share:.1f}%)") for t in r.terms],
        ("step", str(r.step_time)),
        ("binding", r.binding.label),
        ("time to target", str(r.time_to_target) if r.time_to_target else "n/a"),
        ("energy to target", str(r.energy_to_target) if r.energy_to_target else "n/a"),
    ]
    body = "".join(f"<tr><th>{escape(k)}</th><td>{escape(v)}</td></tr>" for k, v in rows)
    return f"<div><h4>{escape(r.name)}: {escape(r.label)}</h4><table>{body}</table></div>"
