"""`ctdsl uncertainty`: draw the params that carry a distribution and report what follows.

numpy, sympy and SALib are imported inside the command, so that `ctdsl check`
and `ctdsl lint` never load them.
"""

from __future__ import annotations

import io
import json
from enum import Enum
from typing import List, Optional

import typer

from ctdsl.cli.app import Exit, app, emit, load_or_exit, parse_sets, stdout_console
from ctdsl.diagnostics.terminal import json_command_safe, printable


SAMPLES_LIMIT = 2_000_000  # = ctdsl.numeric.uncertainty.MAX_UNCERTAINTY_SAMPLES (not imported: numpy loads late)


class UncFormat(str, Enum):
    table = "table"
    json = "json"
    csv = "csv"


@app.command()
def uncertainty(
    file: str = typer.Argument(..., help="Spec file.", metavar="FILE"),
    samples: int = typer.Option(10_000, "--samples", "-n", min=2, max=SAMPLES_LIMIT, help="Draws of every param that carries a distribution."),
    seed: int = typer.Option(0, "--seed", min=0, help="Seed of the draws; the same seed gives the same output."),
    sobol: bool = typer.Option(True, "--sobol/--no-sobol", help="Sobol indices of each scheme's time (and cost) to target (needs SALib: pip install 'ctdsl\\[uncertainty]')."),
    set_: Optional[List[str]] = typer.Option(None, "--set", "-s", help="Override a param: name=value with its unit."),
    format: UncFormat = typer.Option(UncFormat.table, "--format", "-f", help="table, json or csv."),
    output: Optional[str] = typer.Option(None, "--output", "-o", metavar="FILE", help="Write to FILE instead of stdout."),
) -> None:
    """Distributions of time, energy and cost to target, who is first and cheapest, and break-evens.

    Params written with `~ uniform(lo, hi)`, `~ triangular(lo, mode, hi)`,
    `~ normal(mean, sd)`, `~ lognormal(median, sigma)` or `~ samples([v1, v2,
    ...])` (a table of samples, resampled with replacement) are drawn; the
    others keep their values, and so does a param given with --set
    (docs/codesign.md, Uncertainty).

    \b
    Examples:
      ctdsl uncertainty examples/18_uncertainty.ct
      ctdsl uncertainty examples/20_codesign_study.ct --samples 100000 --seed 7
      ctdsl uncertainty examples/18_uncertainty.ct -f json -o spread.json
    """
    study = load_or_exit(file, parse_sets(set_))
    if not any(p.dist is not None and not p.given for p in study.spec.params.values()):
        typer.echo(f"{printable(file)}: no param carries a distribution (write one as `param x = 1 ~ normal(1, 0.1)`)", err=True)
        raise typer.Exit(Exit.OK)
    from ctdsl.numeric import sobol as S
    from ctdsl.numeric.uncertainty import uncertainty as run
    from ctdsl.report import uncertainty_out as out

    if sobol and not S.available():
        typer.echo("note: SALib is not installed, so no Sobol indices (pip install 'ctdsl[uncertainty]')", err=True)
        sobol = False
    result = run(study.solve(), samples, seed, sobol=sobol)
    if format is UncFormat.json:
        emit(json_command_safe(json.dumps(out.uncertainty_json(result), indent=2, sort_keys=True)) + "\n", output, data=True)
    elif format is UncFormat.csv:
        emit(out.uncertainty_csv(result), output, data=True)
    elif output is None:
        from ctdsl.report.document_rich import print_blocks

        print_blocks(stdout_console(), out.uncertainty_tables(result))
    else:
        emit(_plain(out.uncertainty_tables(result)), output)


def _plain(tables) -> str:
    from rich.console import Console

    from ctdsl.report.document_rich import print_blocks

    console = Console(width=100, record=True, file=io.StringIO(), no_color=True, color_system=None, highlight=False)
    print_blocks(console, tables)
    return console.export_text()
