"""`ctdsl lint`: what looks physically wrong, in the formats CI tools read.

Imports nothing heavy: no sympy, no numpy (a test holds it to that).
"""

from __future__ import annotations

import sys
from enum import Enum
from typing import List, Optional

import typer

from ctdsl.cli.app import Exit, app, emit, fail_usage, use_color
from ctdsl.diagnostics import Format
from ctdsl.diagnostics.terminal import printable


class FailOn(str, Enum):
    error = "error"
    warning = "warning"
    info = "info"


def _explain(code: str) -> None:
    from ctdsl.lint.catalogue import all_rules, lookup

    r = lookup(code)
    if r is None:
        from ctdsl.codes import lookup as check_lookup

        c = check_lookup(code)
        if c is not None:
            typer.echo(f"{c.code} {c.name} (checker error): {c.summary}\nThe full text: ctdsl docs {c.code}")
            raise typer.Exit(Exit.OK)
        codes = ", ".join(x.code for x in all_rules())
        raise fail_usage(f"unknown lint code or name '{code}'; the rules are {codes}")
    typer.echo(f"{r.code} {r.name} ({r.severity.value})\n\n{r.summary}\n\n{r.explanation}\n")
    typer.echo("Flagged:\n\n" + "\n".join("    " + line for line in r.bad.splitlines()) + "\n")
    typer.echo("Fixed:\n\n" + "\n".join("    " + line for line in r.good.splitlines()))
    raise typer.Exit(Exit.OK)


@app.command()
def lint(
    paths: Optional[List[str]] = typer.Argument(
        None, help="Spec files, or directories to search for *.ct (default: the current directory).", metavar="PATH..."
    ),
    format: Format = typer.Option(Format.text, "--format", "-f", help="Output format."),
    select: Optional[List[str]] = typer.Option(
        None, "--select", help="Run only these rules: codes or code prefixes, comma-separated (CTL001,CTL003)."
    ),
    ignore: Optional[List[str]] = typer.Option(
        None, "--ignore", help="Do not run these rules: codes or code prefixes, comma-separated."
    ),
    fail_on: Optional[FailOn] = typer.Option(
        None, "--fail-on", help="Exit 1 on findings at or above this severity (default: error)."
    ),
    output: Optional[str] = typer.Option(None, "--output", "-o", help="Write the report to this file, not stdout."),
    explain: Optional[str] = typer.Option(None, "--explain", help="Explain a rule (code or name) and exit.", metavar="CODE"),
) -> None:
    """Report what looks wrong in specs that parse and check: unused definitions, rates
    that can never bind, bit/byte slips, links faster than light, and more.

    Checker errors are reported too. Exit 0 when no finding is at or above --fail-on,
    1 when one is, 2 on a usage error. Settings may also go in pyproject.toml under
    \\[tool.ctdsl.lint] (select, ignore, fail-on, exclude). Silence one finding with a
    comment on its line: # ctdsl: ignore\\[CTL003]. The rules: docs/lint-rules.md.

    \b
    Examples:
      ctdsl lint specs/ examples/
      ctdsl lint specs/ --format sarif -o ctdsl.sarif
      ctdsl lint specs/ --format github --fail-on warning
      ctdsl lint --explain CTL006
    """
    if explain is not None:
        _explain(explain)
    from ctdsl.lint.config import (
        ConfigError,
        resolve_config,
        split_codes,
        validate_codes,
    )
    from ctdsl.lint.formats import render
    from ctdsl.lint.runner import UsageError, lint_paths

    targets = list(paths or ["."])
    try:
        config = resolve_config(targets[0])
        sel = validate_codes(split_codes(select), "--select") if select else None
        ign = validate_codes(split_codes(ignore), "--ignore") if ignore else None
        config = config.override(select=sel, ignore=ign, fail_on=fail_on.value if fail_on else None)
        report = lint_paths(targets, config)
    except (ConfigError, UsageError) as exc:
        raise fail_usage(str(exc))
    if not report.files and not report.unreadable:
        typer.echo(f"warning: no spec files (*.ct) found in {', '.join(targets)}", err=True)
    color = format is Format.text and output is None and use_color(sys.stdout)
    text = render(report, format.value, color=color)
    emit(text, output)
    for d in report.unreadable:
        typer.echo(f"error: {printable(d.message)}", err=True)
    if report.unreadable:
        raise typer.Exit(Exit.USAGE)
    raise typer.Exit(Exit.FINDINGS if report.fails(config.fail_on) else Exit.OK)


__all__ = ["lint"]
