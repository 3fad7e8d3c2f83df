"""`ctdsl search`: answer a spec's design searches (docs/codesign.md, "Design search")."""

from __future__ import annotations

import json
from enum import Enum
from typing import List, Optional

import typer

from ctdsl.cli.app import Exit, app, emit, fail_usage, load_or_exit, parse_sets, save_figure, startup_work, stdout_console
from ctdsl.diagnostics.terminal import json_command_safe


class SearchFormat(str, Enum):
    table = "table"
    json = "json"
    markdown = "markdown"


@app.command()
def search(
    file: str = typer.Argument(..., help="Spec file.", metavar="FILE"),
    name: Optional[str] = typer.Option(None, "--name", "-n", help="Answer only the search of that name."),
    set_: Optional[List[str]] = typer.Option(None, "--set", "-s", help="Override a param: name=value with its unit."),
    format: SearchFormat = typer.Option(SearchFormat.table, "--format", "-f", help="table, json or markdown."),
    plot: Optional[str] = typer.Option(None, "--plot", help="Write the Pareto front to F (.png, .svg or .pdf).", metavar="F"),
) -> None:
    """Find the best scheme and param values under a spec's constraints.

    Each `search` statement minimises or maximises a weighted sum of time,
    energy, cost and CO2e to target over params' ranges and a choice of
    schemes, under a deadline, power cap, budget or memory fit; it prints the
    optimum, the binding constraints and the Pareto front. Exit 1 when no
    choice meets the constraints (CT703).

    \b
    Examples:
      ctdsl search examples/18_codesign_search.ct
      ctdsl search examples/18_codesign_search.ct --format json
      ctdsl search examples/18_codesign_search.ct --plot front.png
      ctdsl search examples/20_codesign_study.ct -s optics_price="2 kUSD"
    """
    with startup_work():
        _search(file, name, set_, format, plot)


def _search(file: str, name: str | None, set_, format: SearchFormat, plot: str | None) -> None:
    from ctdsl.numeric.search import run_search

    study = load_or_exit(file, parse_sets(set_))
    searches = list(study.spec.searches)
    if name is not None:
        searches = [s for s in searches if s.name == name]
        if not searches:
            from ctdsl.diagnostics import did_you_mean

            hint = did_you_mean(name, [s.name for s in study.spec.searches])
            raise fail_usage(f"no search '{name}' in {file}" + (f"; {hint}" if hint else ""))
    if not searches:
        raise fail_usage(f"{file} has no search statement (docs/codesign.md, 'Design search')")
    fmt = plot.rsplit(".", 1)[-1].lower() if plot and "." in plot else ""
    if plot is not None and fmt not in ("png", "svg", "pdf"):
        raise fail_usage(f"--plot writes a .png, .svg or .pdf file (got {plot!r})")
    sol = study.solve()
    results = [run_search(sol, s) for s in searches]
    if plot is not None:
        with_front = [r for r in results if r.pareto_axes]
        if not with_front:
            raise fail_usage("--plot draws a Pareto front: give the search pareto = [time, cost]")
        from ctdsl.report.plots.pareto import pareto_figure

        save_figure(pareto_figure(with_front[0]), plot, fmt)
    if format is SearchFormat.json:
        from ctdsl.report.search_out import search_json

        text = json.dumps({"searches": [search_json(r) for r in results]}, indent=2, sort_keys=True)
        emit(json_command_safe(text) + "\n", None, data=True)
    elif format is SearchFormat.markdown:
        from ctdsl.report.search_out import search_markdown

        emit(search_markdown(results), None, data=True)
    else:
        from ctdsl.report.document_rich import print_blocks
        from ctdsl.report.search_out import search_tables

        console = stdout_console()
        for r in results:
            print_blocks(console, search_tables(r))
    raise typer.Exit(Exit.OK)
