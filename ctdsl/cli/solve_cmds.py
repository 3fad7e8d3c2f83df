"""`ctdsl solve` and `ctdsl export latex`."""

from __future__ import annotations

import json
from enum import Enum
from typing import List, Optional, Tuple

import typer

from ctdsl.cli.app import (
    Exit,
    app,
    emit,
    fail_usage,
    load_or_exit,
    parse_sets,
    save_figure,
    startup_work,
    stdout_console,
)
from ctdsl.diagnostics.terminal import json_command_safe


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
    sensitivity: bool = typer.Option(
        False, "--sensitivity", help="Also every quantity's partial derivatives and elasticities with respect to every param (docs/sensitivity.md)."
    ),
    tornado: Optional[Tuple[str, str]] = typer.Option(
        None, "--tornado", help="Write a tornado chart of QUANTITY over each param's range to FILE (.png, .svg or .pdf).", metavar="FILE QUANTITY"
    ),
) -> None:
    """Derive every scheme's bytes, step time, time and energy to target, and break-evens.

    A spec with observed points also gets the table "Observed": each measured
    value against the prediction in its scenario (docs/validation.md).

    \b
    Examples:
      ctdsl solve specs/llama70b_wan.ct
      ctdsl solve specs/llama70b_wan.ct -s wan_bw="25 GB/s" -s budget="99 GFLOP/s"
      ctdsl solve specs/llama70b_wan.ct --format json > result.json
      ctdsl solve specs/llama70b_wan.ct --explain band_switch
      ctdsl solve specs/llama70b_wan.ct --sensitivity
      ctdsl solve specs/llama70b_wan.ct --tornado t.png band_module.time_to_target
    """
    if sensitivity and format is SolveFormat.csv:
        raise fail_usage("--sensitivity prints with --format table, json or markdown, not csv")
    tornado = tornado if tornado and tornado[0] is not None else None
    if explain is not None and (sensitivity or tornado):
        raise fail_usage("--explain prints one scheme's derivation: it does not combine with --sensitivity or --tornado")
    with startup_work():
        _solve(file, set_, format, explain, sensitivity, tornado)


def _solve(file: str, set_, format: "SolveFormat", explain: str | None, sensitivity: bool = False, tornado=None) -> None:
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
    sens = _sensitivity(sol) if sensitivity else None
    chart = _tornado(sol, *tornado) if tornado else None
    observed = study.observe(sol) if study.spec.observations else None  # before any output: a scenario may fail
    if format is SolveFormat.json:
        data = sol.to_json()
        if observed is not None:
            from ctdsl.report.observed_out import observed_json

            data["observed"] = observed_json(observed)
        if sens is not None:
            from ctdsl.report.sensitivity_out import sensitivity_json

            data["sensitivity"] = sensitivity_json(sens)
        if chart is not None:
            from ctdsl.report.sensitivity_out import tornado_json

            data["tornado"] = tornado_json(chart)
        emit(json_command_safe(json.dumps(data, indent=2, sort_keys=True)) + "\n", None, data=True)
    elif format is SolveFormat.markdown:
        from ctdsl.report.tables import render_markdown

        emit(render_markdown(sol), None, data=True)
        if observed is not None:
            from ctdsl.report.document_md import tables_md
            from ctdsl.report.observed_out import observed_table

            emit("\n" + tables_md([observed_table(observed)]), None, data=True)
        if sens is not None:
            from ctdsl.report.sensitivity_out import sensitivity_markdown

            emit("\n" + sensitivity_markdown(sens), None, data=True)
    elif format is SolveFormat.csv:
        from ctdsl.report.tables import render_csv

        emit(render_csv(sol), None, data=True)
        if observed is not None:  # a second table, after an empty line
            from ctdsl.report.observed_out import observed_csv

            emit("\n" + observed_csv(observed), None, data=True)
    else:
        from ctdsl.report.tables import render_rich

        console = stdout_console()
        render_rich(sol, console)
        if observed is not None:
            from ctdsl.report.document_rich import print_blocks
            from ctdsl.report.observed_out import observed_table

            print_blocks(console, [observed_table(observed)], mark=" *")
        if sens is not None:
            from ctdsl.report.document_rich import print_blocks
            from ctdsl.report.sensitivity_out import sensitivity_tables

            print_blocks(console, sensitivity_tables(sens))


def _sensitivity(sol):
    from ctdsl.symbolic.sensitivity import sensitivity

    return sensitivity(sol)


def _tornado(sol, path: str, name: str):
    """The tornado data of quantity `name`, and its chart written to `path`; an unknown name is a usage error."""
    from ctdsl.diagnostics import did_you_mean
    from ctdsl.symbolic.tornado import UnknownQuantity, tornado

    fmt = path.rsplit(".", 1)[-1].lower() if "." in path else ""
    if fmt not in ("png", "svg", "pdf"):
        raise fail_usage(f"--tornado writes a .png, .svg or .pdf file (got {path!r})")
    try:
        chart = tornado(sol, name)
    except UnknownQuantity as exc:
        hint = did_you_mean(name, exc.names)
        raise fail_usage(f"--tornado: no quantity '{name}'" + (f"; {hint}" if hint else "") + "; the quantities are SCHEME.step_time, SCHEME.time_to_target, SCHEME.energy_to_target and breakeven.X.Y.OVER") from None
    from ctdsl.report.plots.tornado import tornado_figure

    save_figure(tornado_figure(chart), path, fmt)
    return chart


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
    sensitivity: bool = typer.Option(False, "--sensitivity", help="Add a table of every quantity's elasticities (tab:PREFIX:sensitivity)."),
) -> None:
    """Numbered, labelled equations of every scheme's costs and break-evens, and a table of numbers.

    The fragment's first lines say which packages it needs; --standalone wraps
    it in an article that compiles with pdflatex.

    \b
    Examples:
      ctdsl export latex specs/llama70b_wan.ct -o results.tex
      ctdsl export latex specs/llama70b_wan.ct --columns 2 -o results.tex
      ctdsl export latex specs/llama70b_wan.ct --standalone -o study.tex
      ctdsl export latex specs/llama70b_wan.ct --sensitivity -o results.tex
    """
    from ctdsl.report.paper import paper_latex

    study = load_or_exit(file, parse_sets(set_))
    sol = study.solve()
    extra: tuple[str, ...] = ()
    if sensitivity:
        from ctdsl.report.sensitivity_out import sensitivity_latex

        extra = (sensitivity_latex(_sensitivity(sol), sol.symbols, units.value, label_prefix, columns),)
    text = paper_latex(sol, standalone=standalone, columns=columns, units=units.value, prefix=label_prefix, extra=extra)
    emit(text, output, data=True)
