"""`ctdsl check` and `ctdsl graph`."""

from __future__ import annotations

import json
import sys
from enum import Enum
from typing import List, Optional

import typer

from ctdsl.cli.app import (
    Exit,
    app,
    emit,
    fail_usage,
    load_or_exit,
    save_figure,
    use_color,
)
from ctdsl.diagnostics import Format, Report
from ctdsl.diagnostics.terminal import json_command_safe, printable


class GraphFormat(str, Enum):
    json = "json"
    dot = "dot"
    svg = "svg"
    png = "png"
    pdf = "pdf"


DRAWN = (GraphFormat.svg, GraphFormat.png, GraphFormat.pdf)


def check_files(files: list[str]) -> Report:
    """Check each file; one that cannot be read is a CT001 diagnostic in `unreadable`."""
    # the pipeline (lark, networkx) loads when a command runs, not when ctdsl starts
    from ctdsl.api import check as check_spec
    from ctdsl.check.loader import Unreadable

    report = Report(files=list(files), tool="ctdsl check")
    for path in files:
        try:
            result = check_spec(path)
        except Unreadable as exc:
            d = exc.diagnostic()
            report.unreadable.append(d)
            report.origin.setdefault(d, path)
            continue
        report.diagnostics.extend(result.diagnostics)
        for d in result.diagnostics:
            if d.span is None:
                report.origin.setdefault(d, path)
        report.sources.merge(result.sources)  # the texts, for the excerpts
    return report


@app.command()
def check(
    files: List[str] = typer.Argument(..., help="Spec files to check.", metavar="FILE..."),
    format: Format = typer.Option(Format.text, "--output-format", "--format", "-f", help="Output format (--format is the older name)."),
) -> None:
    """Parse and check spec files: names, units, ranges, topology and placement.

    Exit 0 when every file is clean, 1 on diagnostics, 2 when a file cannot be read.
    The formats are those of ctdsl lint: text, concise, json, sarif (SARIF 2.1.0,
    for code scanning) and github (workflow commands that annotate a pull request).

    \b
    Examples:
      ctdsl check specs/llama70b_wan.ct
      ctdsl check specs/*.ct examples/*.ct --output-format json
      ctdsl check specs/*.ct --output-format sarif > check.sarif
    """
    report = check_files(files)
    color = format is Format.text and use_color(sys.stdout)
    from ctdsl.diagnostics.report import (
        render,  # the formats load when a report is rendered
    )

    emit(render(report, format, color=color), None, data=format not in (Format.text, Format.concise))
    if format is Format.text:
        for d in report.unreadable:
            typer.echo(f"error: {printable(d.message)}", err=True)
        if any(d.help and "ctdsl init -e" in d.help for d in report.unreadable):  # a missing file, once
            typer.echo(f"  = help: {next(d.help for d in report.unreadable if 'ctdsl init -e' in (d.help or ''))}", err=True)
    if report.unreadable:
        raise typer.Exit(Exit.USAGE)
    raise typer.Exit(Exit.FINDINGS if report.diagnostics else Exit.OK)


@app.command()
def graph(
    file: str = typer.Argument(..., help="Spec file.", metavar="FILE"),
    format: GraphFormat = typer.Option(
        GraphFormat.json, "--format", "-f", help="json (node-link), dot, or a drawing: svg, png, pdf (needs -o)."
    ),
    output: Optional[str] = typer.Option(None, "--output", "-o", help="Write to this file (a drawing must go to one)."),
    variant: Optional[str] = typer.Option(None, "--variant", help="The graph of this variant of the sites (default: as declared).", metavar="NAME"),
    expand: bool = typer.Option(False, "--expand", help="Unroll each group of GPUs (a dc of replicas) into one node per GPU, at the params' defaults; at most 4,096 nodes."),
) -> None:
    """Print the topology graph: workers, modules and switches, links as edges.

    A dc of replicas is one node for all its GPUs with a count (and one group of
    NIC edges); --expand unrolls a small one.

    A drawing (svg, png, pdf) is made with matplotlib, by data centre, as in
    ctdsl report; no Graphviz is needed.

    \b
    Examples:
      ctdsl graph specs/llama70b_wan.ct
      ctdsl graph specs/llama70b_wan.ct -f svg -o topology.svg
      ctdsl graph specs/llama70b_wan.ct --format dot | dot -Tsvg > topology.svg
      ctdsl graph examples/16_variants.ct --variant gpu_only
      ctdsl graph specs/llama405b_3dc.ct --format dot
    """
    from ctdsl.model.graph import to_dot, to_json

    if format in DRAWN and (output is None or output == "-"):
        raise fail_usage(f"--format {format.value} draws a figure: give -o FILE.{format.value}")
    study = load_or_exit(file)
    sites = study.spec.sites
    if variant is not None:
        if variant not in study.spec.variants:
            have = ", ".join(study.spec.variants) or "none"
            raise fail_usage(f"--variant: the spec has no variant '{variant}' (its variants: {have})")
        sites = study.spec.variants[variant]
    g = sites.topology
    defaults = study.spec.defaults()
    if expand:
        from ctdsl import limits
        from ctdsl.model.graph import expand as unroll

        try:
            g = unroll(g, defaults, limits.MAX_WORKERS)
        except ValueError as err:
            raise fail_usage(f"--expand: {err}; draw the groups instead (without --expand)")
    if format in DRAWN:
        _draw(study.spec.on(sites), output, format.value)
        return
    if format is GraphFormat.dot:
        text = to_dot(g, defaults)
    else:
        text = json_command_safe(json.dumps(to_json(g, defaults), indent=2, sort_keys=True)) + "\n"
    emit(text, None if output == "-" else output, data=True)
    if output not in (None, "-"):
        typer.echo(f"wrote {printable(output)}", err=True)


def _draw(spec, output: str, fmt: str) -> None:
    """The topology of `spec` (its declared sites, or a variant's through `Spec.on`) drawn to a file."""
    from ctdsl.report.plots import topology_figure

    save_figure(topology_figure(spec, spec.topology), output, fmt)


__all__ = ["check", "graph", "fail_usage"]
