"""Replacing a file keeps what it had: its mode, its links, its owner; init counts a dangling link.

Issue 25, item 11. `lint --fix` and `ctdsl init --force` replace a file by
renaming a new one over it (`ctdsl.files.atomic_open`), which dropped the
setuid, setgid and sticky bits, left a hard link's other name on the old
content, and made the file ours; and `init` wrote over a dangling symbolic link
without --force. Each case runs the real command (lint --fix, init, sweep -o)
on a real file and checks the file afterwards by stat; the rules are in
files.py's docstring. (The tests run as whatever user runs the suite; the one
that needs another owner is skipped unless that is root.)
"""

from __future__ import annotations

import os
import signal
import stat
import threading
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ctdsl import files
from ctdsl.cli import app
from ctdsl.files import Refused, atomic_open

ROOT = Path(__file__).resolve().parents[1]
FLAGSHIP = ROOT / "specs" / "llama70b_wan.ct"
runner = CliRunner()

HEAD = """\
import std.devices
import std.links
import std.models
model m : llama3_8b { tokens = 4096 }
device accel : h100 { efficiency = 0.4 }
switch tor { sum = true }
dc east { workers = 4; device = accel; link = nvlink4; switch = tor }
dc west : east {}
scheme dense { payload = dense; collective = hier_allreduce; steps = 1000 }
"""
# CTL006, an exact fix (tests/lint/test_lint_conventions.py): 100 GbE is 12.5 GB/s
SLIP = HEAD + "link eth100g_dci { bandwidth = 100 GB/s; latency = 1 ms }\nwan east <-> west = eth100g_dci\n"
FIXED = HEAD + "link eth100g_dci { bandwidth = 12.5 GB/s; latency = 1 ms }\nwan east <-> west = eth100g_dci\n"


@pytest.fixture
def here(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tmp_path


def fix(path: Path):
    r = runner.invoke(app, ["lint", str(path), "--fix", "--unsafe-fixes"])
    assert "Fixed 1 finding" in r.stderr, r.output
    return r


@pytest.mark.parametrize("mode", [0o4755, 0o2755, 0o1644, 0o6750, 0o640], ids=oct)
def test_lint_fix_keeps_the_whole_mode(here, mode):
    spec = here / "s.ct"
    spec.write_text(SLIP, encoding="utf-8")
    os.chmod(spec, mode)
    fix(spec)
    assert spec.read_text(encoding="utf-8") == FIXED
    assert stat.S_IMODE(os.stat(spec).st_mode) == mode


def test_lint_fix_keeps_a_hard_link(here):
    spec, other = here / "s.ct", here / "same.ct"
    spec.write_text(SLIP, encoding="utf-8")
    os.link(spec, other)
    inode = os.stat(spec).st_ino
    fix(spec)
    assert os.stat(spec).st_ino == inode and os.stat(spec).st_nlink == 2
    assert other.read_text(encoding="utf-8") == FIXED  # the other name sees the fix: one file
    assert sorted(p.name for p in here.iterdir()) == ["s.ct", "same.ct"]  # no .part left


def test_a_file_with_extended_attributes_is_written_in_place(here):
    spec = here / "s.ct"
    spec.write_text(SLIP, encoding="utf-8")
    try:
        os.setxattr(spec, "user.ctdsl-test", b"kept")
    except OSError:
        pytest.skip("no user extended attributes on this file system")
    fix(spec)
    assert os.getxattr(spec, "user.ctdsl-test") == b"kept" and spec.read_text(encoding="utf-8") == FIXED


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a file another owner needs root")
def test_a_file_of_another_owner_keeps_its_owner(here):
    spec = here / "s.ct"
    spec.write_text(SLIP, encoding="utf-8")
    os.chown(spec, 12345, 12346)
    fix(spec)
    st = os.stat(spec)
    assert (st.st_uid, st.st_gid) == (12345, 12346) and spec.read_text(encoding="utf-8") == FIXED


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a file another owner needs root")
def test_a_setuid_file_of_another_owner_is_refused_when_not_root(here, monkeypatch):
    """Not root, and the file another user's with the setuid bit: writing it would clear the bit
    (the kernel does, for a writer without CAP_FSETID), and replacing it would make it ours."""
    spec = here / "s.ct"
    spec.write_text("old\n", encoding="utf-8")
    os.chown(spec, 12345, 12346)
    os.chmod(spec, 0o4777)
    monkeypatch.setattr(files.os, "geteuid", lambda: 1000)  # as a user who is neither root nor the owner
    with pytest.raises(Refused, match="setuid or setgid bit and another owner"):
        with atomic_open(str(spec)) as fh:
            fh.write("new\n")
    assert spec.read_text(encoding="utf-8") == "old\n" and [p.name for p in here.iterdir()] == ["s.ct"]
    spec.write_text(SLIP, encoding="utf-8")  # and through lint --fix: said, exit 2, the file as it was
    os.chmod(spec, 0o4777)
    r = runner.invoke(app, ["lint", str(spec), "--fix", "--unsafe-fixes"])
    assert r.exit_code == 2 and f"error: cannot write {spec}: it has the setuid or setgid bit" in r.stderr, r.output
    assert spec.read_text(encoding="utf-8") == SLIP and stat.S_IMODE(os.stat(spec).st_mode) == 0o4777


def test_init_counts_a_dangling_link_as_a_file_that_exists(here):
    dst = here / "specs" / "llama70b_wan.ct"
    dst.parent.mkdir()
    nowhere = here / "elsewhere" / "target.ct"
    os.symlink(nowhere, dst)
    r = runner.invoke(app, ["init", str(here)])
    assert r.exit_code == 2 and "exists; give --force" in r.stderr
    assert os.path.islink(dst) and not nowhere.exists()
    r = runner.invoke(app, ["init", str(here), "--force"])
    assert r.exit_code == 0, r.output
    # replaced by the file, never written through: the link's target is not made
    assert not os.path.islink(dst) and dst.read_text(encoding="utf-8") == FLAGSHIP.read_text(encoding="utf-8")
    assert not nowhere.exists()


def test_init_force_keeps_the_mode_of_the_file_it_replaces(here):
    dst = here / "specs" / "llama70b_wan.ct"
    dst.parent.mkdir()
    dst.write_text("old\n", encoding="utf-8")
    os.chmod(dst, 0o4750)
    assert runner.invoke(app, ["init", str(here), "--force"]).exit_code == 0
    assert stat.S_IMODE(os.stat(dst).st_mode) == 0o4750 and dst.read_text(encoding="utf-8") != "old\n"


def test_output_to_a_fifo_and_to_a_link_to_one_is_written_into_it(here):
    """-o at a FIFO (or a link to one, as /dev/stdout is): written into, never renamed over."""
    fifo = here / "pipe"
    os.mkfifo(fifo)
    os.symlink(fifo, here / "link")
    for name in ("pipe", "link"):
        got: list[bytes] = []
        reader = threading.Thread(target=lambda: got.append(Path(fifo).read_bytes()))
        reader.start()
        r = runner.invoke(app, ["sweep", str(FLAGSHIP), "--sweep", "wan_bw=1 GB/s:10 GB/s:3", "-o", name])
        reader.join(60)
        assert r.exit_code == 0, r.output
        assert got and got[0].decode().count("\n") == 4 and got[0].startswith(b"wan_bw")
        assert stat.S_ISFIFO(os.stat(fifo).st_mode) and os.path.islink(here / "link")
    assert sorted(p.name for p in here.iterdir()) == ["link", "pipe"]


def test_output_to_a_directory_fails_before_anything_is_written(here):
    (here / "out").mkdir()
    r = runner.invoke(app, ["sweep", str(FLAGSHIP), "-o", "out"])
    assert r.exit_code == 2 and "cannot write out" in r.stderr
    assert sorted(p.name for p in here.iterdir()) == ["out"] and not list((here / "out").iterdir())


def test_a_signal_during_the_copy_in_place_waits_for_its_end():
    # Python's own handler, as under a terminal: a shell without job control starts a background
    # command (a CI step's `cmd &`, a test run in the background) with SIGINT ignored
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt):
            with files._signals_held():
                os.kill(os.getpid(), signal.SIGINT)
                done = True  # reached: the signal is held while the block runs
        assert done
    finally:
        signal.signal(signal.SIGINT, before)
