"""The wheel ships the grammar and the library presets, and the grammar is the one in grammar/.

Builds a wheel with `python -m build --wheel` into a temporary folder (a few
seconds). With no network to fetch the build backend, it builds without
isolation if hatchling is installed, and skips otherwise.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _build(out: Path, isolated: bool) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "build", "--wheel", "--outdir", str(out)]
    if not isolated:
        cmd.append("--no-isolation")
    return subprocess.run(cmd + [str(ROOT)], capture_output=True, text=True, timeout=600)


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
            [sys.executable, "-c", code, str(site), *args], cwd=work, capture_output=True, text=True, timeout=300
        )

    done = run("init")
    assert done.returncode == 0, done.stderr
    assert (work / "specs" / "llama70b_wan.ct").read_bytes() == (ROOT / "specs" / "llama70b_wan.ct").read_bytes()
    solved = run("solve", "specs/llama70b_wan.ct")
    assert solved.returncode == 0, solved.stderr
    assert "band_switch" in solved.stdout
    docs = run("docs", "CT105")
    assert docs.returncode == 0 and docs.stdout.startswith("### CT105 missing-field"), docs.stderr
