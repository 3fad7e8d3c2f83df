"""`ctdsl lint`: what looks physically wrong, in the formats CI tools read.

Imports nothing heavy: no sympy, no numpy (a test holds it to that).
"""

from __future__ import annotations

import json
import os
import sys
from enum import Enum
from pathlib import Path
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
    from ctdsl.diagnostics.rules import checker_rule, help_uri
    from ctdsl.lint.catalogue import all_rules, lookup
    from ctdsl.lint.formats import RULE_INFOS

    r = lookup(code)
    if r is None:
        from ctdsl.codes import lookup as check_lookup

        c = check_lookup(code)
        if c is not None:
            typer.echo(f"{c.code} {c.name} (checker error): {c.summary}\nThe full text: ctdsl docs {c.code}, or {help_uri(checker_rule(c.code))}")
            raise typer.Exit(Exit.OK)
        codes = ", ".join(x.code for x in all_rules())
        raise fail_usage(f"unknown lint code or name '{code}'; the rules are {codes}")
    typer.echo(f"{r.code} {r.name} ({r.severity.value})\n\n{r.summary}\n\n{r.explanation}\n")
    if r.fix is not None:
        applied = "applied by --fix" if r.fix == "safe" else "applied by --fix only with --unsafe-fixes"
        typer.echo(f"Fix: {r.fix}, {applied}. {r.fix_why}\n")
    typer.echo("Flagged:\n\n" + "\n".join("    " + line for line in r.bad.splitlines()) + "\n")
    typer.echo("Fixed:\n\n" + "\n".join("    " + line for line in r.good.splitlines()) + "\n")
    typer.echo(f"Docs: {help_uri(RULE_INFOS[r.code])}")
    raise typer.Exit(Exit.OK)


def _read_stdin() -> str:
    from ctdsl import limits

    data = sys.stdin.buffer.read(limits.MAX_FILE_BYTES + 1)
    if len(data) > limits.MAX_FILE_BYTES:
        raise fail_usage(f"standard input is larger than {limits.MAX_FILE_BYTES // 1024} KiB")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise fail_usage(f"standard input is not UTF-8 text (byte {exc.start})")


def _statistics(report, fmt: Format, fixable: set) -> str:
    """ruff's --statistics: a count per code, most frequent first; `[*]` marks a code --fix fixes."""
    from ctdsl.lint.formats import rule_name

    counts: dict[str, int] = {}
    for d in report.all():
        counts[d.code] = counts.get(d.code, 0) + 1
    rows = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    if fmt is Format.json:
        items = [{"code": c, "name": rule_name(c), "count": n, "fixable": c in fixable} for c, n in rows]
        return json.dumps(items, indent=2, sort_keys=True) + "\n"
    width = max((len(str(n)) for _, n in rows), default=1)
    return "".join(f"{n:>{width}}\t{c:<6}\t{'[*] ' if c in fixable else ''}{rule_name(c) or ''}\n" for c, n in rows)


def _available(report) -> list:
    """(diagnostic, fix) for every finding with an exact edit, computed on the text that was linted."""
    from ctdsl.lint.fixes import fix_for

    out = []
    for d in report.diagnostics:
        if d.span is None or d.span.file.startswith("<"):  # the standard library (`<std>/...`) is never edited
            continue
        index = report.sources.index(d.span.file)
        f = fix_for(d, index) if index is not None else None
        if f is not None:
            out.append((d, f))
    return out


def _fix(report, texts: dict[str, str], write: bool, stdin_name: str | None, unsafe: bool) -> tuple[str, list, int]:
    """Apply (or, for --diff, only show) every exact fix allowed (safe ones; unsafe ones too with
    --unsafe-fixes); returns the diff, the fixes, and how many applied.

    A fix is applied to the text that was linted and only to it: a file whose text
    on disk is not that text any more is left alone, and an edit that does not find
    the text it replaces is refused (`ctdsl.lint.fixes.apply_fixes`); both are said on stderr.
    """
    from ctdsl.files import atomic_open
    from ctdsl.lint.fixes import apply_fixes, unified_diff

    by_file: dict[str, list] = {}
    for _d, f in _available(report):
        if f.safe or unsafe:
            by_file.setdefault(f.file, []).append(f)
    diff, fixes, applied = [], [], 0
    for file in sorted(by_file):
        linted = report.sources.text(file)
        before = texts.get(file) if file == stdin_name else _read_whole(file)
        if before is None or before != linted:
            typer.echo(f"warning: {printable(file)} changed since it was linted: its fixes are not applied", err=True)
            continue
        done = apply_fixes(before, by_file[file])
        if done.stale:
            n = len(done.stale)
            typer.echo(
                f"warning: {printable(file)}: {n} fix{'es' * (n != 1)} not applied: the text to replace is not where the finding points",
                err=True,
            )
        fixes += by_file[file]
        applied += len(done.applied)
        diff.append(unified_diff(file, before, done.text))
        if write and file == stdin_name:
            texts[file] = done.text
        elif write and done.applied:
            with atomic_open(os.path.realpath(file), "w", encoding="utf-8") as fh:  # through a link, not over it
                fh.write(done.text)
    return "".join(diff), fixes, applied


def _read_whole(file: str) -> str | None:
    """The file's text as it is now, read under the same path policy as when it was linted."""
    from ctdsl.check.reading import Unreadable, read_source

    try:
        return read_source(Path(file), None)
    except Unreadable:
        return None


def _fix_summary(report, unsafe: bool) -> str:
    """ruff's lines after the summary: how many findings --fix fixes, and how many unsafe fixes are hidden."""
    fixes = [f for _d, f in _available(report)]
    shown = sum(1 for f in fixes if f.safe or unsafe)
    hidden = len(fixes) - shown
    hint = f" ({hidden} hidden fix{'es' * (hidden != 1)} can be enabled with the --unsafe-fixes option)" if hidden else ""
    if shown:
        return f"[*] {shown} fixable with the --fix option{hint}.\n"
    return f"No fixes available{hint}.\n" if hidden else ""


class _Flags:
    def __init__(self, **kw) -> None:
        self.__dict__.update(kw)


@app.command()
def lint(
    paths: Optional[List[str]] = typer.Argument(
        None, help="Spec files, or directories to search for *.ct (default: the current directory); - reads standard input.", metavar="PATH..."
    ),
    output_format: Format = typer.Option(
        Format.text, "--output-format", "--format", "-f", help="Output format (--format is the older name)."
    ),
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
    fix: bool = typer.Option(False, "--fix", help="Apply the safe fixes (findings whose help names an exact edit), then report what is left."),
    unsafe_fixes: Optional[bool] = typer.Option(
        None, "--unsafe-fixes/--no-unsafe-fixes", help="Also apply (and count as fixable) fixes that change what a spec means."
    ),
    diff: bool = typer.Option(False, "--diff", help="Print the fixes --fix would make as a unified diff; change nothing (exit 1 if there are any)."),
    statistics: bool = typer.Option(False, "--statistics", help="Print the number of findings of each code, not the findings."),
    exit_zero: bool = typer.Option(False, "--exit-zero", help="Exit 0 even when findings are at or above --fail-on."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="Print the findings and nothing else (no summary, no warnings)."),
    stdin_filename: Optional[str] = typer.Option(
        None, "--stdin-filename", help="The name of the spec read from standard input (for messages, imports and settings)."
    ),
    respect_gitignore: Optional[bool] = typer.Option(
        None, "--respect-gitignore/--no-respect-gitignore", help="Skip files and folders that .gitignore files ignore in directory walks (never a tracked file)."
    ),
) -> None:
    """Report what looks wrong in specs that parse and check: unused definitions, rates
    that can never bind, bit/byte slips, links faster than light, and more.

    Checker errors are reported too. Exit 0 when no finding is at or above --fail-on
    (or with --exit-zero), 1 when one is, 2 on a usage error. Settings may also go in
    pyproject.toml under \\[tool.ctdsl.lint] (select, ignore, per-file-ignores,
    fail-on, exclude, respect-gitignore, unsafe-fixes). Silence one finding with a
    comment on its line: # ctdsl: ignore\\[CTL003]. --fix applies safe fixes only;
    a fix that changes what a spec means (CTL006's rate) needs --unsafe-fixes.
    The rules: docs/lint-rules.md.

    \b
    Examples:
      ctdsl lint specs/ examples/
      ctdsl lint specs/ --output-format sarif -o ctdsl.sarif
      ctdsl lint specs/ --output-format github --fail-on warning
      ctdsl lint specs/ --statistics
      ctdsl lint specs/ --diff --unsafe-fixes
      cat a.ct | ctdsl lint - --stdin-filename specs/a.ct
      ctdsl lint --explain CTL006
    """
    if explain is not None:
        _explain(explain)
    flags = _Flags(
        format=output_format, output=output, fix=fix, diff=diff, statistics=statistics, exit_zero=exit_zero, quiet=quiet, unsafe=unsafe_fixes
    )
    _run(list(paths or ["."]), select, ignore, fail_on, stdin_filename, respect_gitignore, flags)


def _run(targets, select, ignore, fail_on, stdin_filename, respect_gitignore, flags) -> None:
    from ctdsl.lint.config import ConfigError, resolve_config, split_codes, validate_codes
    from ctdsl.lint.runner import UsageError, lint_files, lint_paths

    stdin = "-" in targets
    if stdin and len(targets) > 1:
        raise fail_usage("- (standard input) cannot be given with other paths")
    if stdin_filename is not None and not stdin:
        raise fail_usage("--stdin-filename names the spec read from standard input: give - as the path")
    name = (stdin_filename or "-") if stdin else None
    texts = {name: _read_stdin()} if name is not None else {}
    try:
        config = resolve_config(name if name not in (None, "-") else (None if stdin else targets[0]))
        sel = validate_codes(split_codes(select), "--select") if select else None
        ign = validate_codes(split_codes(ignore), "--ignore") if ignore else None
        config = config.override(
            select=sel,
            ignore=ign,
            fail_on=fail_on.value if fail_on else None,
            respect_gitignore=respect_gitignore,
            unsafe_fixes=flags.unsafe,
        )

        def run():
            return lint_files([name], config, texts) if name is not None else lint_paths(targets, config)

        report = run()
        if flags.fix or flags.diff:
            patch, fixes, applied = _fix(report, texts, write=flags.fix and not flags.diff, stdin_name=name, unsafe=config.unsafe_fixes)
            if flags.diff:
                emit(patch, flags.output, data=True)
                raise typer.Exit(Exit.FINDINGS if fixes else Exit.OK)
            if name is not None:  # stdin: the fixed text goes to stdout, as ruff does
                emit(texts[name], flags.output, data=True)
            elif applied and not flags.quiet:
                typer.echo(f"Fixed {applied} finding{'s' * (applied != 1)}.", err=True)
            report = run()
    except (ConfigError, UsageError) as exc:
        raise fail_usage(str(exc))
    _finish(report, targets, config, flags, fixed_stdin=name is not None and flags.fix)


def _finish(report, targets, config, flags, fixed_stdin: bool) -> None:
    from ctdsl.lint.formats import render

    fmt = flags.format
    if not report.files and not report.unreadable and not flags.quiet:
        typer.echo(f"warning: no spec files (*.ct) found in {printable(', '.join(targets))}", err=True)
    for note in getattr(report, "notes", []) if not flags.quiet else []:
        typer.echo(f"warning: {printable(note)}", err=True)
    if flags.statistics:
        fixable = {d.code for d, f in _available(report) if f.safe or config.unsafe_fixes}
        text = _statistics(report, fmt, fixable)
    else:
        color = fmt is Format.text and flags.output is None and use_color(sys.stdout)
        report.exit_code = _exit_code(report, config, flags)
        text = render(report, fmt.value, color=color)
        if flags.quiet and fmt is Format.text:
            text = "".join(text.splitlines(keepends=True)[:-1]).rstrip("\n") + ("\n" if report.diagnostics else "")
        elif fmt is Format.text:
            text += _fix_summary(report, config.unsafe_fixes)
    if not fixed_stdin:  # with --fix on stdin, stdout carries the fixed spec
        emit(text, flags.output, data=fmt not in (Format.text, Format.concise))
    elif report.diagnostics:
        typer.echo(text, err=True, nl=False)
    for d in report.unreadable:
        typer.echo(f"error: {printable(d.message)}", err=True)
    raise typer.Exit(_exit_code(report, config, flags))


def _exit_code(report, config, flags) -> int:
    if report.unreadable:
        return Exit.USAGE
    if flags.exit_zero:
        return Exit.OK
    return Exit.FINDINGS if report.fails(config.fail_on) else Exit.OK


__all__ = ["lint"]
