"""The commands an input goes through, and the oracles that read each one's output.

Every input goes through check, lint as SARIF, as text and in GitHub's annotation
format; one that checks clean also through solve (table, JSON with the input's
`--set` overrides, Markdown, CSV), export latex, graph (JSON), report (Markdown
and HTML), explore (the page), a sweep of at most 3 x 3 points over the spec's
own ranges, a short simulate, and `lint --fix` on a copy of the file (the fix
oracle compares the copy with the original). `EXTRA` commands run only when a
regression case names them.

A command's `checks` are the sinks its output goes to (tests/fuzz/sinks.py):
stdout, or the file `output` when it writes one. Whatever it prints, on either
stream, is also read as a CI log would read it, and stderr as a terminal would.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from fuzz import sinks


@dataclass(frozen=True)
class Command:
    name: str
    argv: tuple[str, ...]
    checks: tuple[str, ...] = ()  # terminal, github, json, sarif, markdown, csv, latex, html, page
    output: str | None = None  # the file the command writes (its checks read it), else stdout


def first(path: str) -> list[Command]:
    """The commands every input goes through."""
    return [
        Command("check", ("check", path), ("terminal",)),
        Command("lint-sarif", ("lint", path, "--format", "sarif"), ("sarif",)),
        Command("lint-text", ("lint", path), ("terminal",)),
        Command("lint-github", ("lint", path, "--format", "github"), ("terminal", "github")),
    ]


def _sweep_args(spec) -> list[str]:
    """--sweep for up to two of the spec's ranged params, 3 points each, in their declared units."""
    args: list[str] = []
    for p in list(getattr(spec, "params", {}).values()):
        lo, hi = getattr(p, "lo", None), getattr(p, "hi", None)
        if lo is None or hi is None:
            continue
        scale = getattr(p, "unit_scale", 1.0) or 1.0
        unit = getattr(p, "unit", None) or ""
        try:
            a, b = float(lo) / scale, float(hi) / scale
        except (TypeError, ValueError, OverflowError, ZeroDivisionError):
            continue
        if not (math.isfinite(a) and math.isfinite(b)):
            continue
        spacing = getattr(p, "spacing", None) or "lin"
        args += ["--sweep", f"{p.name}={a!r} {unit}:{b!r} {unit}:3:{spacing}".replace(" :", ":")]
        if len(args) == 4:
            break
    return args


def clean(path: str, out_dir: str, spec, sets: tuple[str, ...]) -> list[Command]:
    """The commands a spec that checks clean goes through, after `first`."""
    set_args = tuple(a for s in sets for a in ("--set", s))
    out = Path(out_dir)
    return [
        Command("solve-table", ("solve", path), ("terminal",)),
        Command("solve-json", ("solve", path, "--format", "json", *set_args), ("json",)),
        Command("solve-markdown", ("solve", path, "--format", "markdown"), ("markdown", "terminal")),
        Command("solve-csv", ("solve", path, "--format", "csv"), ("csv", "terminal")),
        Command("export-latex", ("export", "latex", path), ("latex",)),
        Command("graph-json", ("graph", path, "--format", "json"), ("json",)),
        Command("report-md", ("report", path, "-o", str(out / "report.md")), ("markdown",), str(out / "report.md")),
        Command("report-html", ("report", path, "-o", str(out / "report.html")), ("html",), str(out / "report.html")),
        Command("explore", ("explore", path, "-o", str(out / "explore.html")), ("page",), str(out / "explore.html")),
        Command("sweep", ("sweep", path, *_sweep_args(spec), "--format", "csv", "-o", str(out / "s.csv")), ("csv",),
                str(out / "s.csv")),
        # a short run: 3 steps of 2 seeds of a training spec, 100 requests (the least) of 2 seeds of a serving one
        Command("simulate", ("simulate", path, "--steps", "3", "--seeds", "2", "--warmup", "1", "--requests", "100",
                             "--format", "json", "--no-progress"), ("json",)),
        Command("lint-fix", ("lint", path, "--fix")),  # run on a copy of the file by the harness (Harness._lint_fix)
    ]


def extra(path: str, out_dir: str) -> list[Command]:
    """Commands run only when asked for by name (a regression case's `# commands:` line)."""
    out = Path(out_dir)
    return [
        Command("sweep-default", ("sweep", path, "--format", "csv", "-o", str(out / "d.csv")), ("csv",), str(out / "d.csv")),
        Command("simulate-spec", ("simulate", path, "--format", "json", "--no-progress"), ("json",)),
    ]


FIRST_NAMES = ["check", "lint-sarif", "lint-text", "lint-github"]
ALL_COMMANDS = FIRST_NAMES + ["solve-table", "solve-json", "solve-markdown", "solve-csv", "export-latex", "graph-json",
                              "report-md", "report-html", "explore", "sweep", "simulate", "lint-fix"]


def check_outputs(command: Command, stdout: bytes, stderr: str) -> list[sinks.Leak]:
    """What the command's outputs let through: its own sinks, and the CI log and terminal every stream reaches."""
    text = stdout.decode("utf-8", "replace")
    leaks = sinks.cilog(text, github="github" in command.checks) + sinks.cilog(stderr) + sinks.terminal(stderr)
    data: bytes | None = stdout
    if command.output is not None:
        try:
            data = Path(command.output).read_bytes()
        except OSError:
            data = None
    if data is None or not data.strip():
        return leaks  # nothing written (a diagnostic said why): nothing reached the sink
    body = data.decode("utf-8", "replace")
    for check in command.checks:
        if check == "terminal":
            leaks += sinks.terminal(text)
        elif check in ("json", "sarif"):
            leaks += sinks.json_output(data, sarif=check == "sarif")
        elif check == "markdown":
            leaks += sinks.markdown(body)
        elif check == "csv":
            leaks += sinks.csv_cells(body)
        elif check == "latex":
            leaks += sinks.latex(body)
        elif check in ("html", "page"):
            leaks += sinks.html(body, page=check == "page")
    return leaks
