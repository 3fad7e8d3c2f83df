"""`ctdsl validate`: specs with observed points, each solved in its scenarios and scored.

A set is one spec: its observations against the model's predictions (`Study.observe`),
the mean absolute percentage error and the largest error, and per group of layouts that
share a model, Spearman's rank correlation and whether the best layout is predicted
right (docs/validation.md). Exit 0 when every spec checks and solves (and, with
--max-mape, every set is within it); 1 for findings or a set over the bound; 2 for a
usage error or a path that cannot be read.
"""

from __future__ import annotations

import csv
import json
from enum import Enum
from io import StringIO
from pathlib import Path
from typing import List, Optional

import typer

from ctdsl.cli.app import Exit, app, emit, fail_usage, print_diagnostics, startup_work, stdout_console
from ctdsl.diagnostics import summary_line
from ctdsl.diagnostics.terminal import json_command_safe


class ValidateFormat(str, Enum):
    table = "table"
    json = "json"
    markdown = "markdown"
    csv = "csv"


def spec_paths(paths: list[str]) -> list[str]:
    """The files given, and the .ct files directly inside each directory given, sorted; a
    path that does not exist is a usage error."""
    out: list[str] = []
    for p in paths:
        path = Path(p)
        if path.is_dir():
            out += sorted(str(f) for f in path.glob("*.ct") if f.is_file())
        elif path.exists():
            out.append(p)
        else:
            raise fail_usage(f"no such file or directory: {p}")
    return out


@app.command()
def validate(
    paths: List[str] = typer.Argument(..., help="Spec files, or directories of them (their .ct files, not their subdirectories).", metavar="PATH"),
    max_mape: Optional[float] = typer.Option(None, "--max-mape", help="Exit 1 when a set's mean absolute percentage error is above this (percent).", metavar="PCT"),
    format: ValidateFormat = typer.Option(ValidateFormat.table, "--format", "-f", help="table, json, markdown or csv."),
) -> None:
    """Solve every observation of each spec in its scenario and compare with the measurement.

    Per observation: measured, predicted and the error; per set (a spec): the
    mean absolute percentage error (MAPE) and the largest error, the fitted
    observation left out; per group of layouts that share a model: Spearman's
    rank correlation and whether the fastest layout is predicted right. A spec
    without observations is listed and skipped.

    \b
    Examples:
      ctdsl validate specs/validation/
      ctdsl validate specs/validation/korthikanti_full.ct
      ctdsl validate specs/validation/ --max-mape 10
      ctdsl validate specs/validation/ --format markdown > validation.md
    """
    if max_mape is not None and not max_mape >= 0:
        raise fail_usage("--max-mape is a percentage of 0 or more, e.g. --max-mape 10")
    files = spec_paths(paths)
    if not files:
        raise fail_usage("no .ct files in " + ", ".join(paths))
    with startup_work():
        sets, skipped, failed = _run(files)
    over = [s for s in sets if max_mape is not None and s.mape is not None and s.mape > max_mape]
    _print(sets, skipped, format, max_mape, over)
    for s in over:
        typer.echo(f"{s.path}: MAPE {s.mape:.1f}% is above --max-mape {max_mape:g}%", err=True)
    if failed or over:
        raise typer.Exit(Exit.FINDINGS)


def _run(files: list[str]):
    from ctdsl.api import check_runnable
    from ctdsl.api import Study
    from ctdsl.check.loader import Unreadable
    from ctdsl.failure import Failure

    sets, skipped, failed = [], [], False
    for path in files:
        try:
            result = check_runnable(path)
        except Unreadable as exc:
            raise fail_usage(str(exc))
        if not result.ok:
            print_diagnostics(result.diagnostics, result.sources, err=True)
            typer.echo(summary_line(result.diagnostics), err=True)
            failed = True
            continue
        study = Study(result)
        if not study.spec.observations:
            skipped.append(path)
            continue
        try:
            sets.append(study.observe())
        except Failure as exc:
            print_diagnostics(list(exc.diagnostics), result.sources, err=True)
            typer.echo(summary_line(list(exc.diagnostics)), err=True)
            failed = True
    return sets, skipped, failed


def _print(sets, skipped: list[str], format: ValidateFormat, max_mape, over) -> None:
    from ctdsl.report.observed_out import observed_json, observed_table, sets_table

    if format is ValidateFormat.json:
        data = {
            "version": 1,
            "sets": [{"path": s.path, **observed_json(s)} for s in sets],
            "skipped": skipped,
            "max_mape_pct": max_mape,
            "over": [s.path for s in over],
        }
        emit(json_command_safe(json.dumps(data, indent=2, sort_keys=True)) + "\n", None, data=True)
        return
    if format is ValidateFormat.csv:
        from ctdsl.report.observed_out import CSV_HEADER, observed_rows_csv

        buf = StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(["set", *CSV_HEADER])
        for s in sets:
            observed_rows_csv(s, w, s.path)
        emit(buf.getvalue(), None, data=True)
        return
    tables = [observed_table(s, title=f"Observed: {s.path}") for s in sets]
    if sets:
        tables.append(sets_table(sets))
    notes = [f"{p}: no observations" for p in skipped]
    if format is ValidateFormat.markdown:
        from ctdsl.report.document_md import tables_md
        from ctdsl.report.encode import md_text

        out = "# Validation\n\n" + (tables_md(tables) if tables else "") + "".join(f"\n_{md_text(n)}_\n" for n in notes)
        emit(out, None, data=True)
        return
    from ctdsl.report.document_rich import print_blocks
    from ctdsl.report.encode import rich_text

    console = stdout_console()
    print_blocks(console, tables, mark=" *")
    for n in notes:
        console.print(rich_text(n))
