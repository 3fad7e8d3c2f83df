"""The Typer app, exit codes and the helpers every command shares.

No command ends in a Python traceback. The root command (`_GuardedGroup`)
runs every command inside one handler: a `Failure` (a problem a back end found
after checking: a break-even it cannot solve) prints its diagnostics like the
checker's and exits 1; any other exception prints one line, `internal error:
TYPE: MESSAGE; please report`, and exits 3, with the traceback only under the
global `--debug` option. Usage errors exit 2 where they are found (`fail_usage`).

Long: the one handler every command runs in, with the exit codes and the output helpers every
command shares; cut apart, the handler's cases would be read in two files.
"""

from __future__ import annotations

import errno
import gc
import os
import re
import signal
import sys
import traceback
from contextlib import contextmanager
from enum import IntEnum
from typing import Iterable, Optional

import typer
from typer.core import TyperGroup

from ctdsl.version import __version__
from ctdsl.diagnostics import Diagnostic, Sources, did_you_mean, render_text, summary_line
from ctdsl.diagnostics.terminal import CommandSafe, command_safe, printable
from ctdsl.extras import MissingExtra
from ctdsl.failure import Failure
from ctdsl.files import Refused, atomic_open


# Python's type names, as a command line's users read them
_PLAIN = {"<str>": "TEXT", "<list[str]>": "TEXT", "<int>": "INTEGER", "<int range>": "INTEGER", "<float>": "NUMBER"}
_WIDEST_CHOICES = 18  # a list of choices wider than this goes on to a second line, between two choices


def _choice_lines(choices: list[str]) -> str:
    lines, line = [], ""
    for c in choices:
        piece = c if not line else "|" + c
        if line and len(line) + len(piece) > _WIDEST_CHOICES:
            lines.append(line + "|")
            line = c
        else:
            line += piece
    return "\n".join(lines + [line])


def _flags_show_no_value() -> None:
    """Boolean flags in --help without a `<bool>` beside them: they take no value.

    Typer's rich help prints a flag's Python type in the value column, which reads
    as `--standalone <bool>` although `--standalone true` is an error. A flag's
    value column is left empty instead, and other types read as TEXT, INTEGER or
    NUMBER rather than `<str>` (an explicit metavar is shown as given).
    """
    from typer.core import TyperArgument, TyperOption

    shown = TyperOption.display_type_rich
    if getattr(shown, "_ctdsl", False):
        return

    def display_type_rich(self, ctx):
        if self.metavar is not None:
            return self.metavar
        if self.is_flag:
            return None
        text = shown(self, ctx)
        if text and text.startswith("<") and "|" in text:  # choices: broken between choices, never inside one
            return _choice_lines(text[1:-1].split("|"))
        return _PLAIN.get(text, text)

    def argument_type(self, ctx):  # an argument's name (FILE) is its metavar already
        return None

    display_type_rich._ctdsl = True
    TyperOption.display_type_rich = display_type_rich
    TyperArgument.display_type_rich = argument_type


_flags_show_no_value()


class Exit(IntEnum):
    OK = 0
    FINDINGS = 1
    USAGE = 2
    INTERNAL = 3


class _Session:
    """What the running command has loaded, for reporting a Failure; reset by the root callback."""

    debug = False
    sources = None  # the Sources of the spec load_or_exit checked


def _cli_signals() -> tuple[type[BaseException], ...]:
    """The exceptions typer and click use to end a command on purpose (exit codes, usage errors)."""
    click_base = [c for c in typer.BadParameter.__mro__ if c.__name__ == "ClickException"]
    return (typer.Exit, typer.Abort, *click_base)


def handle_exception(exc: Exception) -> int:
    """Report an exception a command raised, once, on stderr; return the exit code."""
    if isinstance(exc, Failure):
        diags = list(exc.diagnostics)
        print_diagnostics(diags, _Session.sources or Sources(), err=True)
        typer.echo(summary_line(diags), err=True)
        return Exit.FINDINGS
    if isinstance(exc, Refused):  # a file atomic_open will not replace: the user's to change
        typer.echo(f"error: cannot write {printable(str(exc.filename))}: {printable(exc.strerror)}", err=True)
        return Exit.USAGE
    if isinstance(exc, MissingExtra):  # a feature of an optional extra: what to install (ctdsl/extras.py)
        print_diagnostics([Diagnostic(exc.code, exc.args[0], None, help=exc.help)], Sources(), err=True)
        return Exit.USAGE
    if _Session.debug:
        traceback.print_exception(exc, file=sys.stderr)
    message = " ".join(str(exc).split())
    typer.echo(command_safe(f"internal error: {type(exc).__name__}: {printable(message)}; please report"), err=True)
    return Exit.INTERNAL


_NOT_ONE_OF = re.compile(r"^(?:Value error, )?'(?P<value>[^']*)' is not one of (?P<choices>.*)\.$", re.S)


def _plain_choice_error(exc: BaseException) -> None:
    """A wrong choice (`--format jsn`) said plainly, with the nearest choice suggested.

    The option parser's message comes through a validation layer that prefixes
    `Value error, `; the prefix goes, and a suggestion is added when one is close.
    """
    message = getattr(exc, "message", None)
    if not isinstance(message, str):
        return
    m = _NOT_ONE_OF.match(message)
    if m is None:
        return
    choices = re.findall(r"'([^']*)'", m.group("choices"))
    text = f"{m.group('value')!r} is not one of {', '.join(map(repr, choices))}"
    hint = did_you_mean(m.group("value"), choices)
    exc.message = text + (f"; {hint}" if hint else ".")


@contextmanager
def command_safe_output():
    """Every line a command prints to stdout or stderr goes through `command_safe`, so that
    spec text (a file name, an excerpt, a label) never starts a CI runner's command; data
    formats write to `raw_stdout()` instead (`emit(..., data=True)`)."""
    out, err = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = CommandSafe(out), CommandSafe(err)
    try:
        yield
    finally:
        for wrapped in (sys.stdout, sys.stderr):
            if isinstance(wrapped, CommandSafe):
                wrapped.release()
        sys.stdout, sys.stderr = out, err


def raw_stdout():
    """Standard output as it is, for output that must stay byte-exact: data formats, a patch, a fixed spec."""
    out = sys.stdout
    if isinstance(out, CommandSafe):
        out.release()
        return out.raw
    return out


class _GuardedGroup(TyperGroup):
    """The root command: an exception from any command becomes diagnostics or one line, never a traceback."""

    def invoke(self, ctx):
        with command_safe_output():
            return self._invoke(ctx)

    def _invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except _cli_signals() as exc:
            _plain_choice_error(exc)
            raise
        except OSError as exc:
            if exc.errno == errno.EPIPE:  # stdout closed early (`| head`): typer exits quietly
                raise
            raise typer.Exit(handle_exception(exc)) from None
        except Exception as exc:  # noqa: BLE001 - the one place every failure is reported
            raise typer.Exit(handle_exception(exc)) from None


EPILOG = """The examples of each command's --help use the files that ctdsl init -e
writes into the current folder (specs/ and examples/).

\b
Examples:
  ctdsl check specs/llama70b_wan.ct examples/*.ct
  ctdsl graph specs/llama70b_wan.ct -f svg -o topology.svg
  ctdsl solve specs/llama70b_wan.ct --set wan_bw="25 GB/s"
  ctdsl solve specs/llama70b_wan.ct --explain band_switch
  ctdsl export latex specs/llama70b_wan.ct --standalone -o study.tex
  ctdsl sweep specs/llama70b_wan.ct --plot out.png
  ctdsl report specs/llama70b_wan.ct -o report.html
  ctdsl simulate specs/llama70b_wan.ct --set wan_load=0.9 --seeds 3 --steps 10
  ctdsl lint specs/ examples/ --format github
"""

app = typer.Typer(
    cls=_GuardedGroup,
    name="ctdsl",
    help="Model gradient sync across slow links: check, graph and solve .ct hardware specs.",
    epilog=EPILOG,
    no_args_is_help=True,
    add_completion=True,  # --install-completion, --show-completion
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"ctdsl {__version__}")
        raise typer.Exit(Exit.OK)


@app.callback()
def _root(
    version: Optional[bool] = typer.Option(
        None, "--version", callback=_version, is_eager=True, help="Print the version and exit."
    ),
    debug: bool = typer.Option(False, "--debug", help="On an internal error (exit 3), also print the Python traceback."),
) -> None:
    """Model gradient sync across slow links: check, graph and solve .ct hardware specs."""
    _Session.debug = debug
    _Session.sources = None
    _resume_gc()


# Start-up allocates about a million objects that live as long as the process (the
# modules of sympy, networkx, lark, pydantic, rich and ctdsl). Python's cyclic
# collector walks all of them again and again while they are being created, which
# costs a tenth of a second per command and frees nothing. When ctdsl runs as the
# `ctdsl` command (`main`), the collector is paused over start-up and over the
# symbolic solve (which builds a bounded number of objects), then everything alive
# is frozen (`gc.freeze`: left out of later collections) and collection resumes.
# Under `CliRunner` or as a library nothing changes.
_FAST_START = False


def _resume_gc() -> None:
    if _FAST_START and not gc.isenabled():
        gc.freeze()
        gc.enable()


@contextmanager
def startup_work():
    """Run a short burst of long-lived allocation (imports, a solve) with the collector paused."""
    if not _FAST_START or not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        _resume_gc()


def use_color(stream) -> bool:
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    return hasattr(stream, "isatty") and stream.isatty()


TABLE_WIDTH = 160  # columns of the tables when stdout is not a terminal
_TABLE_HEIGHT = 25  # rich asks for a height too; set, it stops rich from reading the terminal


def stdout_console():
    """A rich console for tables on stdout.

    On a terminal: the terminal's width, and colour unless NO_COLOR. Anywhere
    else (a pipe, a file, a test): TABLE_WIDTH columns whatever COLUMNS or TERM
    say, and lines of text are never wrapped (soft wrap), so the output is the
    same at any terminal width and from any path the spec is named by.
    """
    from rich.console import Console

    tty = hasattr(sys.stdout, "isatty") and sys.stdout.isatty()
    color = use_color(sys.stdout)
    return Console(
        width=None if tty else TABLE_WIDTH,
        height=None if tty else _TABLE_HEIGHT,
        soft_wrap=not tty,
        no_color=not color,
        color_system="auto" if color else None,
        force_terminal=color,
        highlight=False,
    )


def emit(text: str, output: str | None, data: bool = False) -> None:
    """Write `text` to the file `output`, or to stdout; a file that cannot be written is a usage error.

    `data`: a format a program reads (JSON, SARIF, CSV, a patch, LaTeX, HTML), written
    to stdout byte for byte; text for people goes through `command_safe`.
    """
    if output is None:
        if data:
            out = raw_stdout()
            out.write(text)
            out.flush()
        else:
            typer.echo(text, nl=False)
        return
    try:
        with atomic_open(output, "w", encoding="utf-8") as fh:
            fh.write(text)
    except OSError as exc:
        raise fail_usage(f"cannot write {output}: {exc.strerror or exc}")


def save_figure(fig, path: str, fmt: str) -> None:
    """Write a figure (whole or not at all); a file that cannot be written is a usage error."""
    from ctdsl.report.plots import save

    try:
        save(fig, path, fmt)
    except OSError as exc:
        raise fail_usage(f"cannot write {path}: {exc.strerror or exc}")
    typer.echo(f"wrote {printable(path)}", err=True)


def fail_usage(message: str) -> "typer.Exit":
    typer.echo(f"error: {printable(message)}", err=True)  # it may quote a spec or a path: no raw control characters
    return typer.Exit(Exit.USAGE)


def print_diagnostics(diags: Iterable, sources, err: bool = False) -> None:
    stream = sys.stderr if err else sys.stdout
    color = use_color(stream)
    for d in diags:
        typer.echo(render_text(d, sources, color=color), err=err)
        typer.echo("", err=err)


def load_or_exit(path: str, overrides: dict[str, str] | None = None):
    """Check a spec for a command that needs a clean one; diagnostics go to stderr."""
    from ctdsl.api import Study, check_runnable
    from ctdsl.check.loader import Unreadable

    try:
        result = check_runnable(path, overrides=overrides)
    except Unreadable as exc:
        if exc.shipped:
            typer.echo(f"error: {printable(str(exc))}\n  = help: {exc.help}", err=True)
            raise typer.Exit(Exit.USAGE)
        raise fail_usage(str(exc))
    if not result.ok:
        print_diagnostics(result.diagnostics, result.sources, err=True)
        typer.echo(summary_line(result.diagnostics), err=True)
        raise typer.Exit(Exit.FINDINGS)
    if result.diagnostics:  # warnings only (a --set value outside its range): said, then used
        print_diagnostics(result.diagnostics, result.sources, err=True)
    _Session.sources = result.sources
    return Study(result, overrides)


def parse_sets(values: list[str] | None) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in values or []:
        if "=" not in item:
            raise fail_usage(f"--set takes name=value, e.g. --set wan_bw='25 GB/s' (got {item!r})")
        name, value = item.split("=", 1)
        out[name.strip()] = value.strip()
    return out


class Terminated(SystemExit):
    """SIGTERM, raised where the command is by the handler `main` installs, so that it unwinds as
    Ctrl-C does: every `finally` runs, and `ctdsl.files.atomic_open` removes the hidden `.part`
    of a file half-written (a sweep stopped by SIGTERM left 896 MB of it after 30 s). The process
    exits 143 (128 + 15), as one SIGTERM ended. A command with its own handling of the signal
    (`simulate`: stop between seeds) installs it over this one while it runs."""

    def __init__(self) -> None:
        super().__init__(128 + signal.SIGTERM)


def _on_sigterm(signum, frame) -> None:
    raise Terminated()


def main() -> None:
    global _FAST_START
    _FAST_START = True
    gc.disable()  # until the command starts (`_root`): see _FAST_START
    try:
        signal.signal(signal.SIGTERM, _on_sigterm)
    except ValueError:  # pragma: no cover (not the main thread: the embedding program's to handle)
        pass
    try:
        app()
    except KeyboardInterrupt:  # pragma: no cover
        sys.exit(130)
    except Exception as exc:  # noqa: BLE001 - outside any command (option callbacks): still one line
        sys.exit(handle_exception(exc))
