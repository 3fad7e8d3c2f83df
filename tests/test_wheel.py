"""The wheel ships the grammar and the library presets, and the grammar is the one in grammar/;
installed bare, it runs every command's --help examples.

Builds a wheel with `python -m build --wheel` into a temporary folder (a few
seconds). With no network to fetch the build backend, it builds without
isolation if hatchling is installed, and skips otherwise.

The bare install (the last tests, slow: a few minutes) puts the wheel, with its
dependencies and no extra, in a fresh venv, once for this file; `ctdsl init -e`
writes the specs and examples into a folder, and each example line of each
command's --help runs there in a shell, as a user would paste it, from a fresh
copy of that folder. An example passes when it exits 0 (1 for check and lint,
whose findings are their result) with no traceback. One that needs an extra
must say so in its command's help (`ctdsl[data]`), must exit 2 with CT890 and
that extra's pip install in the bare venv, and then runs in this environment,
which has every extra. The test skips only where this machine cannot make a
venv.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from backstop import HANG

ROOT = Path(__file__).resolve().parents[1]


def _build(out: Path, isolated: bool) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "build", "--wheel", "--outdir", str(out)]
    if not isolated:
        cmd.append("--no-isolation")
    return subprocess.run(cmd + [str(ROOT)], capture_output=True, text=True, timeout=HANG)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    done = _build(out, isolated=True)
    if done.returncode != 0:
        if importlib.util.find_spec("hatchling") is None:
            pytest.skip("cannot build the wheel: the isolated build failed and hatchling is not installed\n" + done.stderr[-2000:])
        done = _build(out, isolated=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    wheels = list(out.glob("ctdsl-*.whl"))
    assert len(wheels) == 1
    return wheels[0]


def test_wheel_ships_grammar_and_stdlib(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    assert "ctdsl/grammar/ctdsl.lark" in names
    stdlib = sorted(p.name for p in (ROOT / "ctdsl" / "stdlib").glob("*.ct"))
    assert stdlib, "no library presets in the source tree"
    for name in stdlib:
        assert f"ctdsl/stdlib/{name}" in names


def test_wheel_grammar_is_the_source_grammar(wheel):
    shipped = zipfile.ZipFile(wheel).read("ctdsl/grammar/ctdsl.lark").decode("utf-8")
    assert shipped == (ROOT / "grammar" / "ctdsl.lark").read_text(encoding="utf-8")


def test_wheel_stdlib_is_the_source_stdlib(wheel):
    z = zipfile.ZipFile(wheel)
    for path in (ROOT / "ctdsl" / "stdlib").glob("*.ct"):
        assert z.read(f"ctdsl/stdlib/{path.name}").decode("utf-8") == path.read_text(encoding="utf-8")


def test_wheel_has_the_command(wheel):
    z = zipfile.ZipFile(wheel)
    entry = next(n for n in z.namelist() if n.endswith(".dist-info/entry_points.txt"))
    assert "ctdsl = ctdsl.cli:main" in z.read(entry).decode("utf-8")


def test_parser_reads_the_same_grammar():
    from ctdsl.syntax.parser import grammar_text

    assert grammar_text() == (ROOT / "grammar" / "ctdsl.lark").read_text(encoding="utf-8")


def test_wheel_ships_the_flagship_examples_and_docs(wheel):
    z = zipfile.ZipFile(wheel)
    names = set(z.namelist())
    for kind in ("specs", "examples", "docs"):
        for path in sorted((ROOT / kind).rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                rel = path.relative_to(ROOT / kind).as_posix()
                assert f"ctdsl/data/{kind}/{rel}" in names, f"{kind}/{rel} is not in the wheel"
    assert z.read("ctdsl/data/specs/llama70b_wan.ct") == (ROOT / "specs" / "llama70b_wan.ct").read_bytes()


def test_the_readme_job_runs_from_the_unpacked_wheel_via_init(wheel, tmp_path):
    """`ctdsl init && ctdsl solve specs/llama70b_wan.ct` with only the wheel's files on the path.

    The wheel is unpacked into a folder put first on sys.path (its dependencies come
    from this environment), in an empty working folder, so nothing of the checkout
    can be read: the spec comes from the package's own copy.
    """
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    work = tmp_path / "work"
    work.mkdir()
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]); sys.argv = ['ctdsl'] + sys.argv[2:]\n"
        "import ctdsl; assert ctdsl.__file__.startswith(sys.path[0]), ctdsl.__file__\n"
        "from ctdsl.cli import main; main()\n"
    )

    def run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-c", code, str(site), *args], cwd=work, capture_output=True, text=True, timeout=HANG
        )

    done = run("init")
    assert done.returncode == 0, done.stderr
    assert (work / "specs" / "llama70b_wan.ct").read_bytes() == (ROOT / "specs" / "llama70b_wan.ct").read_bytes()
    solved = run("solve", "specs/llama70b_wan.ct")
    assert solved.returncode == 0, solved.stderr
    assert "band_switch" in solved.stdout
    docs = run("docs", "CT105")
    assert docs.returncode == 0 and docs.stdout.startswith("### CT105 missing-field"), docs.stderr


# ---- a bare install runs every --help example ------------------------------------------------


def help_examples() -> list[tuple[str, tuple[str, ...], str]]:
    """(command, its path of subcommands, example line) for every example of every command's --help.

    The help as shown is rendered only where a test reads it (`shown`): at collection,
    which every worker does, only the commands' help and epilog are read.
    """
    from typer.main import get_command

    from ctdsl.cli import app

    out = []
    todo = [((), get_command(app))]
    while todo:
        path, cmd = todo.pop(0)
        text = (cmd.help or "") + "\n" + (cmd.epilog or "")
        lines = text.splitlines()
        if any(line.strip() == "Examples:" for line in lines):
            start = next(i for i, line in enumerate(lines) if line.strip() == "Examples:")
            out += [(" ".join(path) or "ctdsl", path, ln.strip()) for ln in lines[start + 1 :] if ln.strip().startswith("ctdsl ")]
        for name in sorted(getattr(cmd, "commands", {}) or {}):
            todo.append((path + (name,), cmd.commands[name]))
    return out


def shown(path: tuple[str, ...]) -> str:
    """The command's --help as a user sees it."""
    from typer.testing import CliRunner

    from ctdsl.cli import app

    return CliRunner().invoke(app, [*path, "--help"], env={"COLUMNS": "200", "TERM": "dumb"}).stdout


def _first_of_each(examples: list[tuple[str, tuple[str, ...], str]]) -> list[tuple[str, tuple[str, ...], str]]:
    """Each example line once: a line shown in two commands' help (the root's and its own) runs once."""
    seen: set[str] = set()
    return [e for e in examples if not (e[2] in seen or seen.add(e[2]))]


EXAMPLES = _first_of_each(help_examples())


@pytest.fixture(scope="module")
def bare(wheel, tmp_path_factory) -> Path:
    """The bin/ of a fresh venv with the wheel installed and no extra."""
    venv = tmp_path_factory.mktemp("bare") / "venv"
    made = subprocess.run([sys.executable, "-m", "venv", str(venv)], capture_output=True, text=True, timeout=HANG)
    if made.returncode != 0:
        pytest.skip(f"this machine cannot make a venv (python -m venv: {made.stderr.strip()[-300:]})")
    bin_ = venv / "bin"
    # --no-compile: pip would compile every module of every dependency (sympy's ~1,500: 21 CPU-s where the install
    # is 9.5 without); the examples compile what they import once, on first use, as a user's first command does
    done = subprocess.run([str(bin_ / "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-compile", str(wheel)],
                          capture_output=True, text=True, timeout=HANG)  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return bin_


@pytest.fixture(scope="module")
def initialised(bare, tmp_path_factory) -> Path:
    """A folder `ctdsl init -e` of the bare install wrote."""
    folder = tmp_path_factory.mktemp("init")
    done = subprocess.run([str(bare / "ctdsl"), "init", "-e"], cwd=folder, capture_output=True, text=True, timeout=HANG, env=_env(bare))
    assert done.returncode == 0, done.stderr
    return folder


def _env(bin_: Path) -> dict[str, str]:
    # PYTHONDONTWRITEBYTECODE dropped: the bare venv is installed --no-compile, so each example would compile
    # sympy again (about 2.4 CPU-s each) where Python's default caches it once
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "COLUMNS", "PYTHONDONTWRITEBYTECODE")}
    env["PATH"] = f"{bin_}{os.pathsep}{env.get('PATH', '')}"
    env["MPLBACKEND"] = "Agg"
    return env


def _run(line: str, cwd: Path, bin_: Path) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", "-o", "pipefail", "-c", line], cwd=cwd, capture_output=True, text=True,
                          timeout=HANG, env=_env(bin_), stdin=subprocess.DEVNULL)  # fmt: skip


def _passed(command: str, done: subprocess.CompletedProcess) -> bool:
    findings = command.split()[0] in ("check", "lint", "validate")  # exit 1: the findings are the result (validate: over --max-mape)
    clean = "Traceback" not in done.stderr + done.stdout and "internal error" not in done.stderr
    return clean and (done.returncode == 0 or (findings and done.returncode == 1))


def test_init_e_writes_every_spec_and_example(initialised):
    for kind in ("specs", "examples"):
        want = sorted(p.relative_to(ROOT / kind).as_posix() for p in (ROOT / kind).rglob("*") if p.is_file() and "__pycache__" not in p.parts)
        got = sorted(p.relative_to(initialised / kind).as_posix() for p in (initialised / kind).rglob("*") if p.is_file())
        assert got == want
        for rel in want:
            assert (initialised / kind / rel).read_bytes() == (ROOT / kind / rel).read_bytes()


def test_every_help_example_is_found():
    """Not vacuous: every command has examples, and the list holds the ones this file must run."""
    lines = [e for _, _, e in EXAMPLES]
    assert len(lines) >= 60
    assert "ctdsl init -e && ctdsl solve examples/07_pluggable.ct" in lines
    assert any(" -f parquet " in e for e in lines)


@pytest.mark.parametrize("command, path, line", EXAMPLES, ids=[f"{c}: {e}" for c, _, e in EXAMPLES])
def test_help_example_runs_from_a_bare_install(bare, initialised, tmp_path, command, path, line):
    if re.search(r"\|\s*dot\b", line) and shutil.which("dot") is None:
        pytest.skip("pipes into Graphviz's dot, which is not installed here (apt-get install graphviz)")
    cwd = tmp_path / "work"
    if command == "init":  # init writes the files itself, into an empty folder
        cwd.mkdir()
    else:
        shutil.copytree(initialised, cwd)
    done = _run(line, cwd, bare)
    if _passed(command, done):
        return
    m = re.search(r"^CT890 .*\n\s*= help: pip install 'ctdsl\[(\w+)\]'", done.stderr, re.M)
    assert m and done.returncode == 2, f"{line}\nexit {done.returncode}\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}"
    extra = m.group(1)
    assert f"ctdsl[{extra}]" in shown(path), f"{command}'s help does not say that {line!r} needs ctdsl[{extra}]"
    # with the extra: this environment has every extra installed
    full = _run(line, cwd, Path(sys.executable).parent)
    assert _passed(command, full), f"{line} (with ctdsl[{extra}])\nexit {full.returncode}\n{full.stderr[-3000:]}"
