"""`ctdsl simulate --partial FILE`: the finished seeds written as they complete, and a stop that says what it kept.

After each finished seed the file holds every run done so far, written whole
(ctdsl.files.atomic_open); Ctrl-C (exit 130) and SIGTERM (exit 143) stop the runs
when the seed running ends, and they and the wall budget (CT608) name the seeds kept. What was kept is checked against a separate
run of those seeds alone: run k of a scheme draws from SeedSequence([seed, k])
whatever the number of seeds, so the kept per-seed step times must be the same
numbers, bit for bit.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ctdsl import limits
from ctdsl.cli import app
from backstop import HANG

ROOT = Path(__file__).resolve().parents[1]
CONTENTION = str(ROOT / "examples" / "15_contention.ct")  # schemes adamw, then others; a loaded WAN
runner = CliRunner()
WAIT = HANG  # seconds at most for a subprocess to reach a point (a backstop, not a measure: tests/backstop.py)


def _per_seed(doc: dict) -> dict[str, list]:
    return {s["name"]: s["simulated"]["per_seed"] for s in doc["schemes"]}


def _fresh(seeds: int, steps: int, scheme: str) -> list:
    r = runner.invoke(app, ["simulate", CONTENTION, "--seeds", str(seeds), "--steps", str(steps), "--warmup", "2",
                            "--scheme", scheme, "--format", "json", "--no-progress"])  # fmt: skip
    assert r.exit_code == 0, r.output
    return _per_seed(json.loads(r.stdout))[scheme]


def test_complete_run_leaves_the_file_complete(tmp_path):
    """3 seeds of every scheme: the file says complete, 3 x (number of schemes) runs, seeds [0, 1, 2]
    each, and the same per-seed numbers the JSON on stdout shows."""
    out = tmp_path / "runs.json"
    r = runner.invoke(app, ["simulate", CONTENTION, "--seeds", "3", "--steps", "4", "--warmup", "2",
                            "--partial", str(out), "--format", "json", "--no-progress"])  # fmt: skip
    assert r.exit_code == 0, r.output
    doc, shown = json.loads(out.read_text(encoding="utf-8")), json.loads(r.stdout)
    n = len(shown["schemes"])
    assert doc["partial"] == {"complete": True, "runs_done": 3 * n, "runs_total": 3 * n,
                              "seeds": {s["name"]: [0, 1, 2] for s in shown["schemes"]}}  # fmt: skip
    assert _per_seed(doc) == _per_seed(shown)
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".part")]  # no temporary file left


def test_wall_budget_names_the_seeds_kept(tmp_path, monkeypatch):
    """A wall budget of 0 s stops after the first run: CT608 says 1 of 3 x n runs and where they are
    kept; the file holds scheme adamw's seed 0, the same number as a fresh 2-seed run's first."""
    fresh = _fresh(2, 4, "adamw")
    monkeypatch.setattr(limits, "MAX_SIM_WALL_SECONDS", 0)
    out = tmp_path / "runs.json"
    r = runner.invoke(app, ["simulate", CONTENTION, "--seeds", "3", "--steps", "4", "--warmup", "2",
                            "--partial", str(out), "--format", "json", "--no-progress"])  # fmt: skip
    assert r.exit_code == 1
    doc = json.loads(out.read_text(encoding="utf-8"))
    n_total = doc["partial"]["runs_total"]
    assert "CT608" in r.stderr and f"1 of {n_total} runs done" in r.stderr and f"kept in {out}" in r.stderr
    assert doc["partial"]["complete"] is False and doc["partial"]["seeds"] == {"adamw": [0]}
    assert _per_seed(doc)["adamw"] == fresh[:1]


def test_partial_with_validate_is_a_usage_error(tmp_path):
    r = runner.invoke(app, ["simulate", CONTENTION, "--validate", "--partial", str(tmp_path / "p.json")])
    assert r.exit_code == 2 and "--partial" in r.output


def _interrupted(tmp_path: Path, sig: int) -> tuple[subprocess.CompletedProcess, Path]:
    """A 200-seed run sent `sig` once its --partial file first appears (so at least one seed is done)."""
    out = tmp_path / "runs.json"
    cmd = [sys.executable, "-c", "from ctdsl.cli import main; main()", "simulate", CONTENTION, "--seeds", "200", "--steps", "40", "--warmup", "2",
           "--partial", str(out), "--format", "json", "--no-progress"]  # fmt: skip
    # SIGINT back to its default in the child: a shell that ran the suite in the background ignores it
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))  # fmt: skip
    try:
        deadline = time.monotonic() + WAIT
        while not out.exists() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert out.exists(), "no seed finished in time"
        proc.send_signal(sig)
        stdout, stderr = proc.communicate(timeout=WAIT)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    return subprocess.CompletedProcess(cmd, proc.returncode, stdout, stderr), out


@pytest.mark.parametrize("sig, code, word", [(signal.SIGINT, 130, "interrupted"), (signal.SIGTERM, 143, "terminated")])
def test_signal_keeps_the_finished_seeds(tmp_path, sig, code, word):
    """Stopped by a signal: exit 130 (SIGINT) or 143 (SIGTERM), nothing on stdout, and one line naming the
    runs done and the seeds kept; the file is whole JSON holding exactly those seeds, and their step times
    are those of a fresh run of as many seeds (common random numbers)."""
    r, out = _interrupted(tmp_path, sig)
    assert r.returncode == code, r.stderr
    assert r.stdout == ""
    doc = json.loads(out.read_text(encoding="utf-8"))
    p = doc["partial"]
    assert p["complete"] is False and 1 <= p["runs_done"] < p["runs_total"]
    kept = p["seeds"]
    names = ", ".join(f"scheme '{n}' " + (f"seeds 0-{len(s) - 1}" if len(s) > 1 else "seed 0") for n, s in kept.items())
    assert r.stderr.strip().endswith(f"{word} after {p['runs_done']} of {p['runs_total']} runs: kept in {out}: {names}")
    assert sum(len(s) for s in kept.values()) == p["runs_done"] and all(s == list(range(len(s))) for s in kept.values())
    last = list(kept)[-1]
    seeds = len(kept[last])
    assert _per_seed(doc)[last] == _fresh(max(seeds, 2), 40, last)[:seeds]
    assert not [q for q in tmp_path.iterdir() if q.name.endswith(".part")]
    assert os.path.getsize(out) > 0
