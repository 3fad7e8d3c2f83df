"""Hostile paths (issue 18, classes 5 and 11): every case is made in tmp_path and run
through `ctdsl check`, `ctdsl solve`, `ctdsl lint` (text) and `ctdsl lint --format
sarif`, in-process with typer's CliRunner and, for the cases that could hang or
exhaust memory, in a subprocess with a timeout.

Expected outcomes:
- a FIFO, a device (/dev/zero), a symbolic link loop, a path with a NUL byte or
  a name too long, named as the input: CT001, exit 2, nothing opened for reading;
- the same things reached by an `import`: CT501 at the import, exit 1;
- a file over the size limit: CT601 (exit 1), found from its size before reading;
- `ctdsl lint DIR`: a *.ct symlink leading out of DIR, a FIFO or a device in the
  tree is CT001 "not read" (exit 2), and the target's content never appears;
  a directory symlink cycle is not entered;
- an import fan-out: CT505 at the first import past the bound, once.
No output ever holds a traceback.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ctdsl import limits
from ctdsl.check import loader, reading
from ctdsl.cli import app
from backstop import HANG

ROOT = Path(__file__).resolve().parents[1]
SECRET = "SECRET_3f9a_do_not_print"
LINK = "link l { bandwidth = 1 GB/s; latency = 1 us }\n"

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="POSIX paths")


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("NO_COLOR", "1")


def run(*args: str):
    result = CliRunner().invoke(app, list(args))
    out = result.stdout + result.stderr
    assert "Traceback" not in out
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    return result.exit_code, out


def run_sarif(*args: str):
    """Exit code and the SARIF results (ruleId, message) of `ctdsl lint --format sarif`."""
    result = CliRunner().invoke(app, ["lint", "--format", "sarif", *args])
    assert "Traceback" not in result.stdout + result.stderr
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    return result.exit_code, sarif_results(result.stdout), result.stdout + result.stderr


def run_subprocess(*args: str, cwd: Path):
    """A case that could hang or fill memory: a real process, killed at the timeout."""
    done = subprocess.run(
        [sys.executable, "-c", "from ctdsl.cli import main; main()", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=HANG,
        env={**os.environ, "NO_COLOR": "1", "PYTHONPATH": str(ROOT)},
    )
    out = done.stdout + done.stderr
    assert "Traceback" not in out
    return done.returncode, out


def sarif_results(text: str) -> list[tuple[str, str]]:
    doc = json.loads(text)
    return [(r["ruleId"], r["message"]["text"]) for r in doc["runs"][0]["results"]]


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


# ---- the file named on the command line --------------------------------------------------


def _hostile_inputs(tmp: Path) -> dict[str, tuple[str, str]]:
    """name -> (path given, words the CT001 message must hold)."""
    os.mkfifo(tmp / "fifo.ct")
    os.symlink("loop.ct", tmp / "loop.ct")
    os.symlink("/dev/zero", tmp / "zero.ct")
    return {
        "fifo": ("fifo.ct", "is a FIFO (named pipe), not a spec file"),
        "loop": ("loop.ct", "symbolic link loop"),
        "dev-zero": ("/dev/zero", "is a character device, not a spec file"),
        # a link out of its folder is never followed (the path policy, docs/ci.md), whatever it leads to
        "link-to-dev-zero": ("zero.ct", "zero.ct not read: a symbolic link that leads outside"),
        "long-name": ("n" * 300 + ".ct", "too long"),
        "nul": ("a\0b.ct", "NUL byte"),
        "directory": (".", "is a directory"),
    }


@pytest.mark.parametrize("case", ["fifo", "loop", "dev-zero", "link-to-dev-zero", "long-name", "nul", "directory"])
def test_unreadable_input_is_ct001_on_every_command(tmp_path, case):
    path, words = _hostile_inputs(tmp_path)[case]
    code, out = run("check", path)
    assert code == 2 and words in out
    code, out = run("check", "--format", "json", path)
    assert code == 2 and "CT001" in out and words in out
    code, out = run("solve", path)
    assert code == 2 and words in out
    if case == "directory":
        return  # lint walks a directory (below)
    code, results, out = run_sarif(path)
    assert code == 2 and any(r == "CT001" and words in m for r, m in results)
    code, out = run("lint", path)
    assert code == 2 and words in out


def test_dev_zero_and_fifo_do_not_hang_a_real_process(tmp_path):
    os.mkfifo(tmp_path / "fifo.ct")
    for args in (["check", "/dev/zero"], ["solve", "/dev/zero"], ["check", "fifo.ct"], ["lint", "fifo.ct"]):
        code, out = run_subprocess(*args, cwd=tmp_path)
        assert code == 2 and "not a spec file" in out, (args, out)


def test_file_over_the_size_limit_is_ct601_before_reading(tmp_path):
    big = tmp_path / "big.ct"
    with open(big, "wb") as f:  # a sparse gigabyte: reading it would take the memory
        f.truncate(1 << 30)
    code, out = run("check", "big.ct")
    assert code == 1 and "CT601" in out and "larger than 256 KiB" in out
    code, out = run("solve", "big.ct")
    assert code == 1 and "CT601" in out
    code, results, out = run_sarif(".")
    assert code == 1 and [r for r, _ in results] == ["CT601"] and "big.ct is larger than 256 KiB" in results[0][1]


def test_a_file_that_lies_about_its_size_is_read_only_to_the_limit(tmp_path, monkeypatch):
    # the stat said small (a file growing while read): the read stops one byte past the limit
    path = tmp_path / "grows.ct"
    path.write_bytes(b"#" * (4 * limits.MAX_FILE_BYTES))
    monkeypatch.setattr(reading, "stat_source", lambda p: None)
    reads: list[int] = []
    real_read = os.read
    monkeypatch.setattr(reading.os, "read", lambda fd, n: reads.append(n) or real_read(fd, n))
    with pytest.raises(reading.TooLarge):
        reading.read_source(path)
    assert sum(reads) <= limits.MAX_FILE_BYTES + 1


# ---- the same through an import -----------------------------------------------------------


@pytest.mark.parametrize(
    "target, words",
    [
        ("fifo.ct", "it is a FIFO (named pipe), not a spec file"),
        ("loop.ct", "symbolic link loop"),
        ("zero.ct", "resolves outside the directory"),  # /dev/zero: outside the tree, never opened
        ("n" * 300 + ".ct", "the file name or path is too long"),
        ("a\0b.ct", "the path contains a NUL byte"),
        ("d/" * 2100 + "x.ct", "too long"),  # a path over PATH_MAX
    ],
    ids=["fifo", "loop", "dev-zero", "long-name", "nul", "long-path"],
)
def test_hostile_import_is_a_diagnostic_at_the_import(tmp_path, target, words):
    _hostile_inputs(tmp_path)
    write(tmp_path / "root.ct", f'import "{target}"\n' + LINK)
    code, out = run("check", "root.ct")
    assert code == 1 and "root.ct:1:1" in out and words in out
    code, out = run("solve", "root.ct")
    assert code == 1 and words in out
    code, results, out = run_sarif("root.ct")
    assert code == 1 and any(r in {"CT501", "CT502"} and words in m for r, m in results)


def test_fifo_import_does_not_block_a_real_process(tmp_path):
    os.mkfifo(tmp_path / "fifo.ct")
    write(tmp_path / "root.ct", 'import "fifo.ct"\n')
    code, out = run_subprocess("check", "root.ct", cwd=tmp_path)
    assert code == 1 and "CT501" in out and "FIFO" in out


def test_a_symlink_cannot_take_an_import_out_of_the_tree(tmp_path):
    write(tmp_path / "outside" / "secret.ct", f"# {SECRET}\n" + LINK)
    spec = tmp_path / "spec"
    spec.mkdir()
    os.symlink("../outside/secret.ct", spec / "leak.ct")
    os.symlink("../outside", spec / "door")
    write(spec / "root.ct", 'import "leak.ct"\nimport "door/secret.ct"\n')
    code, out = run("check", "spec/root.ct")
    assert code == 1 and out.count("CT502") == 2 and "resolves outside" in out
    assert SECRET not in out


# ---- lint DIR ---------------------------------------------------------------------------------


def _hostile_tree(tmp: Path) -> Path:
    write(tmp / "outside" / "secret.ct", f"# {SECRET}\n" + LINK)
    tree = tmp / "tree"
    write(tree / "good.ct", LINK)
    os.symlink("../outside/secret.ct", tree / "leak.ct")  # out of the root
    os.symlink("/dev/zero", tree / "zero.ct")  # a device, out of the root
    (tree / "sub").mkdir()
    os.mkfifo(tree / "sub" / "fifo.ct")  # a FIFO
    os.symlink("loop.ct", tree / "loop.ct")  # a link loop
    os.symlink("..", tree / "sub" / "up")  # a directory cycle
    os.symlink("../../outside", tree / "sub" / "out")  # a directory out of the root
    return tree


REFUSED = {
    "tree/leak.ct not read: a symbolic link that leads outside the linted directory",
    "tree/zero.ct not read: a symbolic link that leads outside the linted directory",
    "tree/sub/fifo.ct not read: it is a FIFO (named pipe), not a spec file",
    "tree/loop.ct not read: too many levels of symbolic links (a symbolic link loop)",
}


def test_lint_dir_refuses_links_out_fifos_devices_and_loops(tmp_path):
    _hostile_tree(tmp_path)
    code, results, out = run_sarif("tree")
    assert code == 2 and SECRET not in out and "outside/secret" not in out
    assert {m.split("\n")[0] for r, m in results if r == "CT001"} == REFUSED
    code, out = run("lint", "tree")
    assert code == 2 and SECRET not in out
    for line in REFUSED:
        assert f"error: {line}" in out


def test_lint_dir_terminates_in_a_real_process(tmp_path):
    _hostile_tree(tmp_path)
    code, out = run_subprocess("lint", "--format", "sarif", "tree", cwd=tmp_path)
    assert code == 2 and SECRET not in out
    code, out = run_subprocess("lint", "tree", cwd=tmp_path)
    assert code == 2 and SECRET not in out and "FIFO" in out


def test_lint_dir_import_through_a_link_is_import_outside(tmp_path):
    tree = _hostile_tree(tmp_path)
    write(tree / "imp.ct", 'import "sub/out/secret.ct"\nimport "leak.ct"\n' + LINK)
    code, out = run("lint", "tree")
    assert code == 2 and out.count("CT502") == 2 and SECRET not in out


def test_lint_path_with_nul_or_long_name_is_ct001(tmp_path):
    code, out = run("lint", "a\0b")
    assert code == 2 and "NUL byte" in out
    code, out = run("lint", "n" * 300)
    assert code == 2 and "too long" in out


# ---- import bounds -----------------------------------------------------------------------------


def test_import_depth_is_bounded(tmp_path):
    for i in range(limits.MAX_IMPORT_DEPTH + 3):
        write(tmp_path / f"d{i}.ct", f'import "d{i + 1}.ct"\n')
    write(tmp_path / f"d{limits.MAX_IMPORT_DEPTH + 3}.ct", LINK)
    code, out = run("check", "d0.ct")
    assert code == 1 and out.count("CT505") == 1 and f"deeper than {limits.MAX_IMPORT_DEPTH}" in out


def test_import_statements_are_bounded_and_reported_once(tmp_path):
    write(tmp_path / "x.ct", LINK)
    n = loader.MAX_IMPORT_STATEMENTS + 500
    write(tmp_path / "many.ct", 'import "x.ct"\n' * n)
    code, out = run("check", "many.ct")
    assert code == 1 and out.count("CT505") == 1
    assert f"many.ct:{loader.MAX_IMPORT_STATEMENTS + 1}:1" in out
    # missing files too: one CT501 each up to the bound, then one CT505
    write(tmp_path / "missing.ct", "".join(f'import "m{i}.ct"\n' for i in range(n)))
    code, out = run_subprocess("check", "missing.ct", cwd=tmp_path)
    assert code == 1 and out.count("CT505") == 1 and out.count("CT501") == loader.MAX_IMPORT_STATEMENTS


def test_import_fan_out_is_bounded_by_the_bytes_of_one_load(tmp_path):
    body = "# padding\n" * (limits.MAX_FILE_BYTES // 11)
    for i in range(8):
        write(tmp_path / f"f{i}.ct", body)
    write(tmp_path / "root.ct", "".join(f'import "f{i}.ct"\n' for i in range(8)))
    per_load = loader.MAX_LOAD_BYTES // len(body.encode())
    code, out = run("check", "root.ct")
    assert code == 1 and out.count("CT505") == 1 and f"at most {loader.MAX_LOAD_BYTES // 1024} KiB" in out
    assert f"root.ct:{per_load + 1}:1" in out


def test_import_count_is_bounded(tmp_path):
    n = limits.MAX_IMPORTS + 10
    for i in range(n):
        write(tmp_path / f"f{i}.ct", "")
    write(tmp_path / "root.ct", "".join(f'import "f{i}.ct"\n' for i in range(n)))
    code, out = run("check", "root.ct")
    assert code == 1 and out.count("CT505") == 1 and f"at most {limits.MAX_IMPORTS} files" in out


def test_lint_reads_a_bounded_pyproject(tmp_path):
    tree = tmp_path / "tree"
    write(tree / "good.ct", LINK)
    with open(tree / "pyproject.toml", "wb") as f:  # a sparse gigabyte where the settings would be
        f.truncate(1 << 30)
    code, out = run("lint", "tree")
    assert code == 2 and "pyproject.toml: cannot read" in out and "larger than 256 KiB" in out


def test_lint_refuses_a_file_name_that_is_not_utf8(tmp_path):
    tree = tmp_path / "tree"
    write(tree / "good.ct", LINK)
    with open(os.fsencode(tree) + b"/\xff.ct", "wb") as f:
        f.write(LINK.encode())
    code, results, out = run_sarif("tree")
    assert code == 2 and ("CT001", "tree/\\xff.ct not read: the file name is not valid UTF-8") in [
        (r, m.split("\n")[0]) for r, m in results
    ]
    code, out = run("lint", "tree")
    assert code == 2 and "error: tree/\\xff.ct not read: the file name is not valid UTF-8" in out
    code, out = run("check", os.fsdecode(os.fsencode(tree) + b"/\xff.ct"))
    assert code == 2 and "the file name is not valid UTF-8" in out


# ---- one path policy: a file named on the command line (issue 25, item 6) ------------------------


@pytest.mark.parametrize(
    "command",
    [("check",), ("check", "--format", "json"), ("lint",), ("lint", "--format", "sarif"), ("solve",), ("graph",), ("simulate",)],
    ids=lambda c: "-".join(c),
)
def test_a_link_named_on_the_command_line_is_held_to_its_own_folder(tmp_path, command):
    # `lint repo/*.ct` as a shell expands it: repo/leak.ct leads out of repo; its text (a
    # spec that does not parse, so an excerpt would quote it) must never be printed
    write(tmp_path / "outside" / "secret.ct", f"{SECRET} (\n")
    write(tmp_path / "repo" / "good.ct", LINK)
    os.symlink("../outside/secret.ct", tmp_path / "repo" / "leak.ct")
    code, out = run(*command, "repo/leak.ct")
    assert code == 2, out
    assert SECRET not in out and "outside" not in out.replace("leads outside", "")
    assert "repo/leak.ct not read: a symbolic link that leads outside repo" in out


def test_the_same_policy_for_a_glob_a_walk_and_a_link_that_stays_inside(tmp_path):
    write(tmp_path / "outside" / "secret.ct", f"{SECRET} (\n")
    write(tmp_path / "repo" / "sub" / "real.ct", LINK)
    os.symlink("../outside/secret.ct", tmp_path / "repo" / "leak.ct")
    os.symlink("sub/real.ct", tmp_path / "repo" / "inside.ct")  # stays in repo: read, as its target
    code, out = run("lint", "repo/inside.ct", "repo/leak.ct", "repo/sub/real.ct")
    assert code == 2 and SECRET not in out
    assert "error: repo/leak.ct not read: a symbolic link that leads outside repo" in out
    code, walked = run("lint", "repo")
    assert code == 2 and SECRET not in walked and "repo/leak.ct not read" in walked
    assert run("check", "repo/inside.ct")[0] == 0
