"""`ctdsl explore`: the interactive explorer, one offline HTML page."""

from __future__ import annotations

from typing import List, Optional

import typer

from ctdsl.cli.app import app, emit, load_or_exit, parse_sets, startup_work


@app.command()
def explore(
    file: str = typer.Argument(..., help="Spec file.", metavar="FILE"),
    output: Optional[str] = typer.Option(None, "--output", "-o", help="Write the page to this file instead of stdout."),
    set_: Optional[List[str]] = typer.Option(None, "--set", "-s", help="Start a param here: name=value with its unit."),
    simulate: bool = typer.Option(False, "--simulate", help="Embed a short recorded simulation run (1 seed, at most 20 steps) and animate it."),
    sensitivity: bool = typer.Option(False, "--sensitivity", help="Add a table of every quantity's elasticities at the starting values."),
) -> None:
    """An interactive explorer: sliders per param, curves, break-evens, bars, a winner map, the tables.

    One self-contained HTML file that works offline: every number is computed in
    the browser from the exact forms `ctdsl solve` derives, printed as JavaScript.

    \b
    Examples:
      ctdsl explore specs/llama70b_wan.ct -o explorer.html
      ctdsl explore specs/llama70b_wan.ct --set wan_bw="25 GB/s" -o explorer.html
      ctdsl explore specs/llama70b_wan.ct -s wan_load=0.9 --simulate -o e.html
      ctdsl explore specs/llama70b_wan.ct --sensitivity -o explorer.html
    """
    with startup_work():
        study = load_or_exit(file, parse_sets(set_))
        emit(study.explore(simulate=simulate, sensitivity=sensitivity), output, data=True)
