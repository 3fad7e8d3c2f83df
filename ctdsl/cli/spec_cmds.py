"""`ctdsl check` and `ctdsl graph`."""

from __future__ import annotations

import json
from enum import Enum
from typing import List

import typer

from ctdsl.cli.app import Exit, app, fail_usage, load_or_exit, print_diagnostics


class CheckFormat(str, Enum):
    text = "text"
    concise = "concise"
    json = "json"


class GraphFormat(str, Enum):
    json = "json"
    dot = "dot"


@app.command()
def check(
    files: List[str] = typer.Argument(..., help="Spec files to check.", metavar="FILE..."),
    format: CheckFormat = typer.Option(CheckFormat.text, "--format", "-f", help="Output format."),
) -> None:
    """Parse and check spec files: names, units, ranges, topology and placement.

    Exit 0 when every file is clean, 1 on diagnostics, 2 when a file cannot be read.

    \b
    Examples:
      ctdsl check specs/llama70b_wan.ct
      ctdsl check specs/*.ct examples/*.ct --format json
    """
    from ctdsl.api import check as check_spec
    from ctdsl.check.loader import Unreadable
    from ctdsl.diagnostics import Sources, render_concise, render_json, summary_line

    all_diags = []
    sources = Sources()
    unreadable = []
    for path in files:
        try:
            result = check_spec(path)
        except Unreadable as exc:
            unreadable.append(exc.diagnostic())
            continue
        all_diags.extend(result.diagnostics)
        for f in result.loaded.sources._lines:  # noqa: SLF001 - merge the texts for rendering
            sources._lines[f] = result.loaded.sources._lines[f]
    if format is CheckFormat.json:
        typer.echo(render_json(all_diags + unreadable))
    elif format is CheckFormat.concise:
        for d in all_diags + unreadable:
            typer.echo(render_concise(d))
    else:
        print_diagnostics(all_diags, sources)
        for d in unreadable:
            typer.echo(f"error: {d.message}", err=True)
        typer.echo(summary_line(all_diags + unreadable))
    if unreadable:
        raise typer.Exit(Exit.USAGE)
    raise typer.Exit(Exit.FINDINGS if all_diags else Exit.OK)


@app.command()
def graph(
    file: str = typer.Argument(..., help="Spec file.", metavar="FILE"),
    format: GraphFormat = typer.Option(GraphFormat.json, "--format", "-f", help="json (node-link) or dot."),
) -> None:
    """Print the topology graph: workers, modules and switches, links as edges.

    \b
    Examples:
      ctdsl graph specs/llama70b_wan.ct
      ctdsl graph specs/llama70b_wan.ct --format dot | dot -Tsvg > topology.svg
    """
    from ctdsl.model.graph import to_dot, to_json

    study = load_or_exit(file)
    g = study.spec.topology
    defaults = study.spec.defaults()
    if format is GraphFormat.dot:
        typer.echo(to_dot(g, defaults), nl=False)
    else:
        typer.echo(json.dumps(to_json(g, defaults), indent=2, sort_keys=True))


__all__ = ["check", "graph", "fail_usage"]
