"""Run one input through every command, in-process, and classify what happened.

Each command runs through typer's CliRunner on `ctdsl.cli.app`, as a user would
run it, so the exit code and both streams are seen. A clean outcome is an exit
code of 0, 1 or 2 with no Python traceback on either stream. Anything else is a
crash: an exception out of the command, an exit code 3 ("internal error") or any
other code, a traceback printed. A crash is named by its signature, the exception
type and the innermost frame inside the ctdsl package (`OverflowError @
ctdsl/symbolic/stragglers.py:sum_law`), which is how crashes are deduplicated.

Each command runs under a time limit: a timer signal raises `Interrupted` (a
BaseException, so neither the CLI's own handler nor CliRunner swallows it) in the
command's own frame, and keeps firing every quarter second until it gets out.
A command over `slow` seconds (2 by default) is slow; one stopped at `limit` is a
hang, with the frame where it was stopped as its signature. Both are measured in
CPU seconds of the process by default (`clock="cpu"`): on a shared machine a
command's wall-clock time says as much about the other processes as about it (a
campaign at `nice -n 19` beside two test suites gets a quarter of a core, and a
command of 0.3 CPU-seconds passed a 10 s wall-clock limit), its CPU time is what
it takes on a core of its own. A command that waits without computing is still
stopped, by a wall-clock backstop at WALL_BACKSTOP times the limit. With
`clock="wall"` both are wall-clock. Each outcome holds both times, and a hang
which clock stopped it (`stopped_by`).

The times are for the campaign (bench/fuzz.py) and the benchmark of the
regression cases (bench/bench_regressions.py), never for an assertion: the test
suite runs the harness with a limit far above any command's time on a loaded
machine (tests/fuzz/cases.py, LIMIT), so a command is stopped there only when
it would never end, and it checks no command's time (tests/test_no_timed_asserts.py).
The clocks are the harness's to read (`clocks`), so a test can give it clocks
of its own and check how it classifies without measuring anything.

The commands (tests/fuzz/commands.py): every input goes through check and lint
(SARIF, text, github); one that checks clean also through solve (table, JSON with
the input's --set overrides, Markdown, CSV), export latex, graph (JSON), report
(Markdown and HTML, to a temporary directory), explore, a sweep of at most 3 x 3
points over the spec's own ranges, simulate (2 seeds of a few steps) and lint --fix
on a copy. A spec that does not check clean goes through check and lint only: every
other command stops at the same checker (they share `load_or_exit`). The commands
run in the scratch directory and name the input as given (a file name may be
hostile, tests/fuzz/payloads.py). Each command's outputs are read by the oracle of
each sink they reach (tests/fuzz/sinks.py): spec text arriving active there is a
leak, kept on the outcome; and its peak resident set is measured (`Peak`), a
"memory" outcome over `max_memory`.

What the harness itself would repeat on every input, it does once: typer's click
command is built from the app when the harness is made (CliRunner would build it
on every invoke), and whether an input checked clean is read from the check
command's own `CheckResult` (the input is not checked again to find out). Every
command still runs, in full, on every input that reaches it.
"""

from __future__ import annotations

import contextlib
import gc
import os
import shutil
import re
import signal
import tempfile
import time
import traceback
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from fuzz import commands as commands_mod
from fuzz import sinks

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "ctdsl"
SLOW = 2.0  # seconds: over this a command is slow (issue 18: no input over 2 s)
CAMPAIGN_LIMIT = 10.0  # seconds: the campaign stops a command here (the limit of issue 18's hostile run); the suite gives its own
WALL_BACKSTOP = 6  # with the CPU clock, a command is stopped after this many times its limit of wall-clock too
CLEAN_CODES = (0, 1, 2)
_TRACEBACK = "Traceback (most recent call last)"
_FRAME = re.compile(r'^\s*File "([^"]+)", line (\d+), in (\S+)', re.M)
_INTERNAL = re.compile(r"internal error: ([A-Za-z_][\w.]*)")


class Interrupted(BaseException):
    """The limit of one command ran out; `clock` says which timer fired ("cpu" or "wall")."""

    def __init__(self, clock: str = "wall"):
        super().__init__(clock)
        self.clock = clock


@dataclass
class Outcome:
    command: str
    kind: str  # ok | crash | hang | memory | slow
    exit_code: int | None
    seconds: float  # wall-clock
    signature: str = ""  # for crash and hang: "Type @ ctdsl/file.py:function"
    where: str = ""  # the innermost ctdsl frame with its line: ctdsl/file.py:123 function
    message: str = ""
    trace: str = ""
    cpu: float = 0.0  # CPU seconds of the process while the command ran
    stopped_by: str = ""  # for a hang stopped by a timer: "cpu" or "wall"
    memory: int = 0  # bytes: the process's peak resident set while the command ran (0: not measured)
    grew: int = 0  # bytes: how far that peak was over the resident set when the command started
    leaks: list = field(default_factory=list)  # sinks.Leak: spec text that reached one of its outputs active

    def signatures(self) -> list[str]:
        """The crash, hang, memory or slow signature, and one per leak."""
        return ([self.signature] if self.signature else []) + [leak_signature(x, self.command) for x in self.leaks]


def leak_signature(leak, command: str) -> str:
    return f"Leak({leak.sink}: {leak.rule}) @ {command}"


@dataclass
class Result:
    outcomes: list[Outcome] = field(default_factory=list)
    clean: bool = False  # did the input check clean (so every command ran)

    @property
    def kind(self) -> str:
        """The worst of its outcomes: crash, hang, memory, leak, slow, then ok."""
        kinds = {o.kind for o in self.outcomes}
        for k in ("crash", "hang", "memory"):
            if k in kinds:
                return k
        if any(o.leaks for o in self.outcomes):
            return "leak"
        return "slow" if "slow" in kinds else "ok"

    def problems(self) -> list[Outcome]:
        return [o for o in self.outcomes if o.kind != "ok" or o.leaks]


# commands.py holds the command table; these names stay here for the callers that import them from the harness
FIRST = commands_mod.FIRST_NAMES
ALL_COMMANDS = commands_mod.ALL_COMMANDS


# ---- running one command -----------------------------------------------------------------


@contextmanager
def time_limit(seconds: float, clock: str = "wall", backstop: float = WALL_BACKSTOP):
    """Raise Interrupted in this thread after `seconds`, and every 0.25 s after that until it is out.

    Seconds of wall-clock time, or with clock="cpu" of the process's CPU time
    (ITIMER_PROF), with a wall-clock backstop at `backstop` times as many for a
    command that waits without computing.
    """

    def fire(signum, frame):
        raise Interrupted("cpu" if signum == signal.SIGPROF else "wall")

    timers = [(signal.SIGALRM, signal.ITIMER_REAL, seconds * (backstop if clock == "cpu" else 1))]
    if clock == "cpu":
        timers.append((signal.SIGPROF, signal.ITIMER_PROF, seconds))
    old = [(sig, signal.signal(sig, fire)) for sig, _, _ in timers]
    for _, which, after in timers:
        signal.setitimer(which, after, 0.25)
    try:
        yield
    finally:
        for _, which, _ in timers:
            signal.setitimer(which, 0)
        for sig, handler in old:
            signal.signal(sig, handler)


def innermost(frames: list[tuple[str, int, str]]) -> tuple[str, str]:
    """(file:function, file:line function) of the innermost frame in the ctdsl package."""
    for filename, line, func in reversed(frames):
        try:
            rel = Path(filename).resolve().relative_to(ROOT)
        except ValueError:
            continue
        if rel.parts and rel.parts[0] == "ctdsl":
            return f"{rel.as_posix()}:{func}", f"{rel.as_posix()}:{line} {func}"
    if frames:
        filename, line, func = frames[-1]
        return f"{Path(filename).name}:{func}", f"{filename}:{line} {func}"
    return "?", "?"


def _from_exception(exc: BaseException) -> tuple[str, str, str]:
    frames = [(f.filename, f.lineno or 0, f.name) for f in traceback.extract_tb(exc.__traceback__)]
    sig, where = innermost(frames)
    return f"{type(exc).__name__} @ {sig}", where, "".join(traceback.format_exception(exc))


def _from_text(text: str) -> tuple[str, str]:
    """Signature and place of a traceback printed as text (exit 3 under --debug, or a stray one)."""
    frames = [(m.group(1), int(m.group(2)), m.group(3)) for m in _FRAME.finditer(text)]
    sig, where = innermost(frames)
    m = _INTERNAL.search(text)
    if m:
        etype = m.group(1)
    else:
        last = [line for line in text.splitlines() if re.match(r"^[A-Za-z_][\w.]*(Error|Exception|Exit|Warning)?:", line)]
        etype = last[-1].split(":", 1)[0] if last else "exit"
    return f"{etype.rsplit('.', 1)[-1]} @ {sig}", where


class Peak:
    """The process's peak resident set over one command.

    Linux keeps a process's high-water mark of resident memory (VmHWM) and lets the
    process reset it to the current size (writing 5 to /proc/self/clear_refs): reset
    before a command, read after, it is that command's peak. Where that is not
    allowed, the peak of the whole process so far (getrusage's ru_maxrss) stands in,
    which shows only a command that raises it.
    """

    def __init__(self) -> None:
        self.resettable = self._reset()

    @staticmethod
    def _reset() -> bool:
        try:
            with open("/proc/self/clear_refs", "w") as fh:
                fh.write("5")
        except OSError:
            return False
        return True

    @staticmethod
    def _status(key: str) -> int:
        try:
            with open("/proc/self/status", encoding="ascii") as fh:
                for line in fh:
                    if line.startswith(key + ":"):
                        return int(line.split()[1]) * 1024
        except (OSError, ValueError, IndexError):
            pass
        return 0

    def start(self) -> int:
        """Reset the mark; the resident set now, in bytes."""
        if self.resettable:
            self._reset()
        return self._status("VmRSS")

    def peak(self) -> int:
        """The peak resident set since `start`, in bytes."""
        if self.resettable:
            return self._status("VmHWM")
        import resource

        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


class Harness:
    """The CLI app, a runner and a scratch directory, reused for every input.

    `max_memory` (bytes): a command whose peak resident set goes over it is a
    "memory" outcome. `oracles`: read each command's outputs for spec text arriving
    active (tests/fuzz/sinks.py); a leak is kept on the outcome.
    """

    def __init__(self, slow: float = SLOW, limit: float = CAMPAIGN_LIMIT, clock: str = "cpu", backstop: float = WALL_BACKSTOP,
                 clocks=(time.perf_counter, time.process_time), max_memory: int | None = None, oracles: bool = True) -> None:
        import typer.main
        from typer.testing import CliRunner

        from ctdsl.cli import app

        self.app = app
        self.runner = CliRunner()
        self.slow, self.limit, self.clock, self.backstop = slow, limit, clock, backstop
        self.wall, self.cpu = clocks  # what a command's times are read from
        self.max_memory, self.oracles = max_memory, oracles
        self.peak = Peak()
        # the click command typer builds from the app: built once here, not on every invoke (typer's
        # CliRunner rebuilds it each time, a quarter of the time of a command that fails at the checker)
        self.command = typer.main.get_command(app)
        self.checked = None  # the CheckResult the last `check` command computed (see `_record_check`)
        root_opts = {o for p in self.command.params for o in p.opts}
        self.prefix = ["--debug"] if "--debug" in root_opts else []  # the traceback of an exit 3, when there is one
        lint = getattr(self.command, "commands", {}).get("lint")
        lint_opts = {o for p in getattr(lint, "params", []) for o in p.opts}
        # a fix a rule calls unsafe is applied only when asked (where the option exists): the oracle checks every fix
        self.fix_args = ["--fix"] + (["--unsafe-fixes"] if "--unsafe-fixes" in lint_opts else [])
        self._last_stdout: bytes | None = None  # what the last command printed
        self.kept: dict[str, bytes] = {}  # the last input's export latex output, for a compile now and then
        self._tmp = tempfile.TemporaryDirectory(prefix="ctdsl-fuzz-")
        self.dir = Path(self._tmp.name)
        # quoted imports of the examples resolve next to the input, as they would in examples/
        (self.dir / "common").mkdir()
        for p in (ROOT / "examples" / "common").glob("*.ct"):
            (self.dir / "common" / p.name).write_text(p.read_text(encoding="utf-8"), encoding="utf-8")

    def close(self) -> None:
        self._tmp.cleanup()

    def warm_up(self, text: str | bytes) -> None:
        """Run `text` once (imports, caches), then keep what is loaded out of the garbage collector's way.

        After the warm-up a process holds a few hundred thousand objects (sympy,
        matplotlib, lark's tables) that live as long as it does; every full
        collection would walk them all again. `gc.freeze` moves them out of the
        collector's generations (they are still freed when nothing refers to them):
        the collector then walks only what the inputs make. A long campaign calls
        this again now and then, for the caches the inputs fill.
        """
        if text:
            self.run(text)
        gc.collect()
        gc.freeze()

    def invoke(self, name: str, argv: list[str], command: commands_mod.Command | None = None) -> Outcome:
        """Run one command and classify it; with `command`, its outputs are read by its oracles too."""
        rss = self.peak.start()
        start, cpu = self.wall(), self.cpu()
        o, r = self._invoke(name, argv, start)
        o.cpu = self.cpu() - cpu
        self._last_stdout = r.stdout_bytes if r is not None else None
        o.memory = self.peak.peak()
        o.grew = max(0, o.memory - rss)
        if o.kind == "ok" and self.max_memory is not None and o.memory > self.max_memory:
            o.kind, o.signature = "memory", f"memory @ {name}"
            o.message = f"peak resident set {o.memory / 2**20:.0f} MB (the command added {o.grew / 2**20:.0f} MB)"
        elif o.kind == "ok" and (o.cpu if self.clock == "cpu" else o.seconds) > self.slow:
            o.kind, o.signature = "slow", f"slow @ {name}"
        if r is not None and command is not None and self.oracles:
            o.leaks = self._oracle(lambda: commands_mod.check_outputs(command, r.stdout_bytes, _stderr(r)))
        return o

    def _oracle(self, read) -> list:
        """The leaks `read()` finds, under a wall-clock limit (an oracle that fails or hangs is itself reported)."""
        try:
            with time_limit(max(60.0, self.limit * self.backstop)):
                return read()
        except Interrupted:
            return [sinks.Leak("oracle", "timed out", "")]
        except Exception as exc:  # noqa: BLE001 - a bug of the oracle's, shown as a class of its own
            return [sinks.Leak("oracle", f"failed: {type(exc).__name__}", _one_line(exc))]

    def _invoke(self, name: str, argv: list[str], start: float):
        try:
            with time_limit(self.limit, self.clock, self.backstop), _built(self.app, self.command), _record_check(self, name == "check"):
                r = self.runner.invoke(self.app, self.prefix + argv, catch_exceptions=True)
        except Interrupted as exc:
            seconds = self.wall() - start
            sig, where, trace = _from_exception(exc)
            return Outcome(name, "hang", None, seconds, sig.replace("Interrupted", "Timeout"), where,
                           f"stopped after {self.limit:g} s{' of CPU' if exc.clock == 'cpu' else ''}", trace, stopped_by=exc.clock), None
        finally:
            _close_figures()
        seconds = self.wall() - start
        out, err = r.stdout, _stderr(r)
        if r.exception is not None and not isinstance(r.exception, SystemExit):
            sig, where, trace = _from_exception(r.exception)
            return Outcome(name, "crash", r.exit_code, seconds, sig, where, _one_line(r.exception), trace), r
        if r.exit_code in CLEAN_CODES and "Interrupted" in err and "Exception ignored in" in err:
            # the alarm fired inside a callback that cannot raise (a gc callback): Python printed it as
            # unraisable and went on; the command did overrun the limit, and the traceback is ours, not ctdsl's
            return Outcome(name, "hang", r.exit_code, seconds, f"Timeout @ {name} (unraisable)", "",
                           f"over {self.limit:g} s", err[-2000:]), None
        if r.exit_code not in CLEAN_CODES or _TRACEBACK in out or _TRACEBACK in err:
            sig, where = _from_text(err + "\n" + out)
            message = next((ln for ln in err.splitlines() if "internal error" in ln), err.strip()[-300:])
            return Outcome(name, "crash", r.exit_code, seconds, sig, where, message, err[-4000:]), r
        return Outcome(name, "ok", r.exit_code, seconds), r

    def _checked_spec(self):
        """The spec the check command just checked, when it checked clean (None otherwise)."""
        result, self.checked = self.checked, None
        return result.spec if result is not None and result.ok else None

    def _run_command(self, c: commands_mod.Command, data: bytes) -> Outcome:
        if c.name == "lint-fix":
            return self._lint_fix(c, data)
        o = self.invoke(c.name, list(c.argv), c)
        if c.name == "export-latex" and self._last_stdout is not None:
            self.kept[c.name] = self._last_stdout
        return o

    def _lint_fix(self, c: commands_mod.Command, data: bytes) -> Outcome:
        """`lint --fix` on a copy of the input, which may change only the spans its fixable findings name."""
        copy = self.dir / "fixcopy.ct"
        copy.write_bytes(data)
        # the copy's own findings: under another name its imports can resolve otherwise than the
        # input's (an input that imports a file of its own name imports itself; the copy imports it)
        self.invoke("lint-sarif", ["lint", str(copy.name), "--format", "sarif"])
        sarif = (self._last_stdout or b"").decode("utf-8", "replace")
        o = self.invoke(c.name, ["lint", copy.name, *self.fix_args], commands_mod.Command(c.name, c.argv))
        if o.kind in ("ok", "slow", "memory") and self.oracles:
            before = data.decode("utf-8", "replace")
            after = copy.read_bytes().decode("utf-8", "replace") if copy.exists() else ""
            o.leaks += self._oracle(lambda: sinks.fix(before, after, sarif))
        return o

    def run(self, text: str | bytes, sets: tuple[str, ...] = (), only: set[str] | None = None,
            filename: str = "fuzz.ct", first_problem: bool = False, files: tuple = ()) -> Result:
        """Every command (or those in `only`) on `text` written to `filename` in the scratch directory.

        The commands run in that directory and name the file as given (relative), as a CI
        job names a spec; `files` (name, text) are written beside it first (imports) and
        removed after.
        """
        data = text if isinstance(text, bytes) else encode(text)
        # the imports first and the input last, so that an import named as the input (a payload that
        # plants one name in both places) makes the input import itself, never replaces it
        written = [(self.dir / name, encode(body)) for name, body in files if name != filename]
        written += [(self.dir / filename, data)]
        out_dir = self.dir / "out"
        shutil.rmtree(out_dir, ignore_errors=True)  # no output of the last input is read as this one's
        out_dir.mkdir()
        cwd = os.getcwd()
        try:
            for path, content in written:
                _write(path, content)
            os.chdir(self.dir)
            return self._run(data, filename, sets, only, first_problem, str(out_dir))
        finally:
            os.chdir(cwd)
            for path, _ in written:
                with contextlib.suppress(OSError):
                    os.unlink(os.fsencode(str(path)))

    def _run(self, data: bytes, path: str, sets, only, first_problem: bool, out_dir: str) -> Result:
        self.checked = None
        self.kept = {}
        res = Result()
        for c in commands_mod.first(path):
            if only is None or c.name in only:
                res.outcomes.append(self._run_command(c, data))
        if first_problem and any(o.kind in ("crash", "hang") for o in res.outcomes):
            return res
        if any(o.kind == "hang" and o.command == "check" for o in res.outcomes):
            return res  # the checker itself hangs: every other command would hang in it too
        ran_check = any(o.command == "check" for o in res.outcomes)
        spec = self._checked_spec() if ran_check else _clean_spec(path, self.limit, self.clock, self.backstop)
        res.clean = spec is not None
        if spec is None:
            return res
        limit = self.limit
        try:
            todo = commands_mod.clean(path, out_dir, spec, sets)
            if only is not None:
                todo = [c for c in todo + commands_mod.extra(path, out_dir) if c.name in only]
            for c in todo:
                res.outcomes.append(self._run_command(c, data))
                if first_problem and res.outcomes[-1].kind in ("crash", "hang"):
                    break
                if res.outcomes[-1].kind == "hang":  # the rest share the solve: a shorter wait is enough to tell
                    self.limit = min(self.limit, max(3.0, 1.5 * self.slow))
        finally:
            self.limit = limit
        return res


def _write(path: Path, content: bytes) -> None:
    """Write a file whose name may hold any byte but '/' and NUL (a str name with surrogate escapes)."""
    with open(os.fsencode(str(path)), "wb") as fh:
        fh.write(content)


@contextmanager
def _built(app, command):
    """typer's CliRunner, for the duration of one invoke, gets `command` as the click command of `app`."""
    import typer.testing

    build = typer.testing._get_command
    typer.testing._get_command = lambda a: command if a is app else build(a)
    try:
        yield
    finally:
        typer.testing._get_command = build


@contextmanager
def _record_check(harness: Harness, on: bool):
    """While the check command runs, keep the CheckResult it gets from `ctdsl.api.check` on `harness.checked`.

    The command's own call, unchanged (the function is wrapped, not replaced): the
    harness learns whether the input checked clean, and the spec, without checking it
    a second time.
    """
    if not on:
        yield
        return
    harness.checked = None
    import ctdsl.api

    real = ctdsl.api.check

    def check(*args, **kwargs):
        result = real(*args, **kwargs)
        harness.checked = result
        return result

    ctdsl.api.check = check
    try:
        yield
    finally:
        ctdsl.api.check = real


def encode(text: str) -> bytes:
    """The bytes of an input; a lone surrogate (a generated one) becomes invalid UTF-8, as intended."""
    return text.encode("utf-8", "surrogatepass")


def _clean_spec(path: str, limit: float = CAMPAIGN_LIMIT, clock: str = "wall", backstop: float = WALL_BACKSTOP):
    """The checked spec, or None when it has diagnostics (or the checker itself fails: check reports that)."""
    from ctdsl.api import check

    try:
        with time_limit(limit, clock, backstop):
            result = check(path)
    except (Exception, Interrupted):  # noqa: BLE001 - the check command already classified it
        return None
    return result.spec if result.ok else None


def _stderr(r) -> str:
    try:
        return r.stderr
    except ValueError:  # an older click mixing the streams
        return ""


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text[:300]}"


def _close_figures() -> None:
    import sys

    plt = sys.modules.get("matplotlib.pyplot")
    if plt is not None:
        plt.close("all")
