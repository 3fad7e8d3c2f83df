"""`ctdsl solve` and `ctdsl export latex`."""

from __future__ import annotations

import json
from enum import Enum
from typing import List, Optional

import typer

from ctdsl.cli.app import (
    Exit,
    app,
    emit,
    fail_usage,
    load_or_exit,
    parse_sets,
    startup_work,
    stdout_console,
)


class SolveFormat(str, Enum):
    table = "table"
    json = "json"
    markdown = "markdown"
    csv = "csv"


@app.command()
def solve(
    file: str = typer.Argument(..., help="Spec file.", metavar="FILE"),
    set_: Optional[List[str]] = typer.Option(None, "--set", "-s", help="Override a param: name=value with its unit."),
    format: SolveFormat = typer.Option(SolveFormat.table, "--format", "-f", help="table, json, markdown or csv."),
    explain: Optional[str] = typer.Option(None, "--explain", help="Print the derivation of one scheme."),
) -> None:
    """Derive every scheme's bytes, step time, time and energy to target, and break-evens.

    \b
    Examples:
      ctdsl solve specs/llama70b_wan.ct
      ctdsl solve specs/llama70b_wan.ct -s wan_bw="25 GB/s" -s budget="99 GFLOP/s"
      ctdsl solve specs/llama70b_wan.ct --format json > result.json
      ctdsl solve specs/llama70b_wan.ct --explain band_switch
    """
    with startup_work():
        _solve(file, set_, format, explain)


def _solve(file: str, set_, format: "SolveFormat", explain: str | None) -> None:
    study = load_or_exit(file, parse_sets(set_))
    if explain is not None and explain not in study.spec.schemes:
        from ctdsl.diagnostics import did_you_mean

        hint = did_you_mean(explain, study.spec.schemes)
        raise fail_usage(f"no scheme '{explain}' in {file}" + (f"; {hint}" if hint else ""))
    sol = study.solve()
    _memory_warnings(sol)
    if explain is not None:
        from ctdsl.report.explain import explain as explain_scheme

        typer.echo(explain_scheme(sol, explain), nl=False)
        raise typer.Exit(Exit.OK)
    if format is SolveFormat.json:
        typer.echo(json.dumps(sol.to_json(), indent=2, sort_keys=True))
    elif format is SolveFormat.markdown:
        from ctdsl.report.tables import render_markdown

        typer.echo(render_markdown(sol), nl=False)
    elif format is SolveFormat.csv:
        from ctdsl.report.tables import render_csv

        typer.echo(render_csv(sol), nl=False)
    else:
        from ctdsl.report.tables import render_rich

        render_rich(sol, stdout_console())


def _memory_warnings(sol) -> None:
    """CT425 on stderr where a GPU cannot hold its shard (the solve goes on: a finding, not an error)."""
    from ctdsl.cli.app import _Session, print_diagnostics
    from ctdsl.diagnostics import Sources
    from ctdsl.symbolic.fit import warnings

    diags = warnings(sol.spec, sol.memory)
    if diags:
        print_diagnostics(diags, _Session.sources or Sources(), err=True)


export_app = typer.Typer(help="Export the symbolic results.", no_args_is_help=True)
app.add_typer(export_app, name="export")


class Units(str, Enum):
    siunitx = "siunitx"
    plain = "plain"


@export_app.command("latex")
def export_latex(
    file: str = typer.Argument(..., help="Spec file.", metavar="FILE"),
    standalone: bool = typer.Option(False, "--standalone", help="A complete document, ready for pdflatex."),
    output: Optional[str] = typer.Option(None, "--output", "-o", help="Write to this file instead of stdout."),
    set_: Optional[List[str]] = typer.Option(None, "--set", "-s", help="Override a param: name=value with its unit."),
    columns: int = typer.Option(1, "--columns", help="Fit a one- or two-column page (1 or 2).", min=1, max=2),
    units: Units = typer.Option(Units.siunitx, "--units", help="siunitx (\\qty, \\unit) or plain (\\mathrm)."),
    label_prefix: str = typer.Option("ctdsl", "--label-prefix", help="Labels are eq:PREFIX:SCHEME:QUANTITY.", metavar="PREFIX"),
) -> None:
    """Numbered, labelled equations of every scheme's costs and break-evens, and a table of numbers.

    The fragment's first lines say which packages it needs; --standalone wraps
    it in an article that compiles with pdflatex.

    \b
    Examples:
      ctdsl export latex specs/llama70b_wan.ct -o results.tex
      ctdsl export latex specs/llama70b_wan.ct --columns 2 -o results.tex
      ctdsl export latex specs/llama70b_wan.ct --standalone -o study.tex
    """
    from ctdsl.report.paper import paper_latex

    study = load_or_exit(file, parse_sets(set_))
    text = paper_latex(study.solve(), standalone=standalone, columns=columns, units=units.value, prefix=label_prefix)
    emit(text, output)
