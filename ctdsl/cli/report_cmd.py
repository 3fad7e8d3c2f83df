"""`ctdsl report`: one self-contained HTML or Markdown document of a spec.

It solves the spec, compiles the forms once (`ctdsl.numeric`) for the figure's
curves and break-evens, and renders the document with `ctdsl.report.document`.
"""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import List, Optional

import typer

from ctdsl.cli.app import app, emit, fail_usage, load_or_exit, parse_sets, startup_work
from ctdsl.diagnostics.terminal import printable


class ReportFormat(str, Enum):
    html = "html"
    md = "md"


@app.command()
def report(
    file: str = typer.Argument(..., help="Spec file.", metavar="FILE"),
    output: str = typer.Option(..., "--output", "-o", help="report.html or report.md (one self-contained file)."),
    set_: Optional[List[str]] = typer.Option(None, "--set", "-s", help="Override a param: name=value with its unit."),
    format: Optional[ReportFormat] = typer.Option(None, "--format", "-f", help="html or md; by default from the extension."),
    sensitivity: bool = typer.Option(False, "--sensitivity", help="Add a section of every quantity's partial derivatives and elasticities."),
) -> None:
    """One self-contained document: the spec, its topology, the solve tables, the plots and the break-evens.

    \b
    Examples:
      ctdsl report specs/llama70b_wan.ct -o report.html
      ctdsl report specs/llama70b_wan.ct -o report.md
      ctdsl report specs/llama70b_wan.ct --sensitivity -o report.html
    """
    fmt = format.value if format is not None else Path(output).suffix.lower().lstrip(".")
    if fmt == "markdown":
        fmt = "md"
    if fmt not in ("html", "md"):
        raise fail_usage(f"--output names a .html or .md file, or give --format (got {output!r})")
    sets = parse_sets(set_)
    with startup_work():
        study = load_or_exit(file, sets)
        sol = study.solve()
        from ctdsl.numeric import CompiledForms

        forms = CompiledForms(sol)
    from ctdsl.numeric.crossings import sweep_curves
    from ctdsl.report.document import render_document

    extra = []
    if sensitivity:
        from ctdsl.report.sensitivity_out import sensitivity_section
        from ctdsl.symbolic.sensitivity import sensitivity as sensitivity_of
        from ctdsl.symbolic.tornado import report_tornadoes

        extra.append(sensitivity_section(sensitivity_of(sol), report_tornadoes(sol)))
    text = render_document(sol, study.graph(), sweep_curves(sol, forms), fmt, extra)
    emit(text, output, data=True)
    typer.echo(f"wrote {printable(output)}", err=True)
