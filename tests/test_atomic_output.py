"""Nothing half-written (issue 18): an output file is replaced only by a whole one."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from ctdsl.cli import app
from ctdsl.files import atomic_open
from ctdsl.report import sweepout

ROOT = Path(__file__).resolve().parents[1]
SPEC = str(ROOT / "specs" / "llama70b_wan.ct")
runner = CliRunner()


def test_a_failed_write_keeps_the_old_file(tmp_path):
    out = tmp_path / "data.csv"
    out.write_text("the good file\n", encoding="utf-8")
    with pytest.raises(RuntimeError):
        with atomic_open(str(out)) as fh:
            fh.write("half of a new")
            raise RuntimeError("interrupted")
    assert out.read_text(encoding="utf-8") == "the good file\n"
    assert [p.name for p in tmp_path.iterdir()] == ["data.csv"]  # no temporary file left


def test_a_sweep_that_fails_half_way_leaves_the_old_csv(tmp_path, monkeypatch):
    out = tmp_path / "sweep.csv"
    out.write_text("the good file\n", encoding="utf-8")
    calls = []
    real = sweepout.CsvWriter.write

    def write_then_fail(self, chunk):
        calls.append(1)
        real(self, chunk)
        raise KeyboardInterrupt  # as Ctrl-C would, after rows were written

    monkeypatch.setattr(sweepout.CsvWriter, "write", write_then_fail)
    r = runner.invoke(app, ["sweep", SPEC, "-o", str(out)])
    assert calls and r.exit_code != 0
    assert out.read_text(encoding="utf-8") == "the good file\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sweep.csv"]


def test_a_whole_write_replaces_it(tmp_path):
    out = tmp_path / "sweep.csv"
    out.write_text("old\n", encoding="utf-8")
    r = runner.invoke(app, ["sweep", SPEC, "--sweep", "wan_bw=1 GB/s:10 GB/s:3", "-o", str(out)])
    assert r.exit_code == 0, r.output
    text = out.read_text(encoding="utf-8")
    assert text.count("\n") == 4 and text.startswith("wan_bw")
