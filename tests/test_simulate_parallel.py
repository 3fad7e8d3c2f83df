"""`ctdsl simulate -j N`: the (scheme, seed) runs over processes give the numbers of one process, bit for bit.

The reference is the in-process run (-j 1), which tests/test_simulate_engine.py
and test_simulate_closed_forms.py check against the closed forms. Each run
draws from SeedSequence([seed, k]) and edge i from its stream 1 + i, so the
order in which runs finish cannot change them: a pool of 2, and the tasks run
one by one in reverse order, must give the same floats (compared as repr, so
that a nan compares too). A run that raises, and a worker process that dies,
are named by (scheme, seed); the runs finished before are kept.
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

import ctdsl
from ctdsl.cli import app
from ctdsl.simulate import pool
from ctdsl.simulate import tasks as T
from ctdsl.simulate.errors import TaskError
from ctdsl.simulate.plan import build_plans
from ctdsl.simulate.runner import seed_ranges, settings, simulate, spawn_keys
from backstop import HANG

ROOT = Path(__file__).resolve().parents[1]
CONTENTION = str(ROOT / "examples" / "15_contention.ct")  # schemes adamw, two_bit, diloco; a loaded WAN
runner = CliRunner()
WAIT = HANG  # seconds at most for a subprocess to reach a point (a backstop, not a measure: tests/backstop.py)


def _runs(res) -> dict[str, str]:
    return {n: repr(s.runs) for n, s in res.schemes.items()}


@pytest.fixture(scope="module")
def study():
    return ctdsl.load(CONTENTION)


def test_two_processes_give_the_one_process_numbers(study):
    cfg = settings(study.spec, 6, 3, 2)
    one, two = simulate(study.spec, cfg, jobs=1), simulate(study.spec, cfg, jobs=2)
    assert _runs(two) == _runs(one)
    assert {n: s.step for n, s in two.schemes.items()} == {n: s.step for n, s in one.schemes.items()}
    assert all(s.seed_list == [0, 1, 2] for s in two.schemes.values())


def test_a_run_depends_on_its_task_alone(study):
    """The tasks run here last to first give each (scheme, seed) the number the ordered run gives it."""
    cfg = settings(study.spec, 6, 3, 2)
    plans = build_plans(study.spec)
    work = T.make_tasks(plans, cfg.seed, cfg.seeds, cfg.steps, cfg.warmup, spawn_keys=spawn_keys(study.spec))
    assert [t.index for t in work] == list(range(9)) and [(t.scheme, t.run) for t in work[:4]] == [("adamw", 0), ("adamw", 1), ("adamw", 2), ("two_bit", 0)]
    backwards = {(t.scheme, t.run): T.execute(t) for t in reversed(work)}
    ordered = simulate(study.spec, cfg, jobs=1, plans=plans)
    for name, s in ordered.schemes.items():
        assert repr([backwards[(name, k)] for k in range(3)]) == repr(s.runs)


def test_cli_output_is_the_same_for_any_j():
    args = ["simulate", CONTENTION, "--seeds", "3", "--steps", "5", "--warmup", "1", "--format", "json", "--no-progress"]
    one, two = runner.invoke(app, [*args, "-j", "1"]), runner.invoke(app, [*args, "-j", "2"])
    assert one.exit_code == 0 and two.exit_code == 0, two.output
    assert two.stdout == one.stdout


def test_seed_ranges_name_the_seeds_kept():
    assert seed_ranges([]) == "no seed"
    assert seed_ranges([0]) == "seed 0"
    assert seed_ranges([0, 1]) == "seeds 0-1"
    assert seed_ranges([5, 0, 1, 2, 7, 8]) == "seeds 0-2, 5, 7-8"


def _raise_on_adamw_2(task):
    if (task.scheme, task.run) == ("adamw", 2):
        raise ValueError("boom")
    return T.execute(task)


def _die_on_adamw_1(task):
    if (task.scheme, task.run) == ("adamw", 1):
        os._exit(3)  # the worker process ends with no exception: what a kill or the OOM killer does
    return T.execute(task)


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_run_that_raises_is_named_and_the_finished_runs_kept(study, jobs):
    cfg = settings(study.spec, 4, 4, 1)
    seen = []
    with pytest.raises(TaskError) as info:
        simulate(study.spec, cfg, jobs=jobs, execute=_raise_on_adamw_2, on_seed=lambda res, done, total: seen.append(done))
    err = info.value
    assert str(err) == "scheme 'adamw' seed 2: ValueError: boom"
    kept = err.partial.schemes["adamw"]
    assert 0 in kept.seed_list and 1 in kept.seed_list and 2 not in kept.seed_list  # started before seed 2: let finish
    reference = simulate(study.spec, settings(study.spec, 4, 2, 1), ["adamw"], jobs=1).schemes["adamw"]
    assert repr(kept.runs[:2]) == repr(reference.runs)
    assert seen == list(range(1, len(seen) + 1)) and len(seen) >= 2


def test_a_worker_that_dies_is_named(study):
    cfg = settings(study.spec, 4, 3, 1)
    with pytest.raises(TaskError) as info:
        simulate(study.spec, cfg, jobs=2, execute=_die_on_adamw_1)
    err = info.value
    assert "a worker process died" in err.reason
    assert ("adamw", 1) in [(t.scheme, t.run) for t in err.tasks]
    assert "adamw" not in err.partial.schemes or 1 not in err.partial.schemes["adamw"].seed_list


def test_cli_failure_is_ct802_and_keeps_the_partial_file(tmp_path, monkeypatch):
    monkeypatch.setattr(T, "execute", _make_raiser(T.execute))
    out = tmp_path / "runs.json"
    r = runner.invoke(app, ["simulate", CONTENTION, "--seeds", "3", "--steps", "4", "--warmup", "1", "-j", "1", "--partial", str(out), "--no-progress"])
    assert r.exit_code == 1, r.output
    assert "CT802" in r.stderr and "scheme 'adamw' seed 2: ValueError: boom" in r.stderr and "Traceback" not in r.stderr
    assert f"kept in {out}: scheme 'adamw' seeds 0-1" in r.stderr
    assert json.loads(out.read_text(encoding="utf-8"))["partial"]["seeds"] == {"adamw": [0, 1]}


def _make_raiser(real):
    def fake(task):
        if (task.scheme, task.run) == ("adamw", 2):
            raise ValueError("boom")
        return real(task)

    return fake


def test_options_that_do_not_go_together():
    r = runner.invoke(app, ["simulate", CONTENTION, "-j", "2", "--scheduler", "tcp://127.0.0.1:1"])
    assert r.exit_code == 2 and "give one" in r.stderr
    r = runner.invoke(app, ["simulate", CONTENTION, "-j", "0"])
    assert r.exit_code == 2


@pytest.mark.parametrize("signals", [1, 2])
def test_ctrl_c_with_two_processes_keeps_the_finished_seeds(tmp_path, signals):
    """SIGINT to a -j 2 run once a seed is written: exit 130, no traceback. Once: the running runs
    finish, so every scheme's kept seeds are 0..n-1 (runs start in order). Twice: the pool's processes
    are ended at once. Either way the kept step times are a fresh run's, and no worker is left."""
    out = tmp_path / "runs.json"
    cmd = [sys.executable, "-c", "from ctdsl.cli import main; main()", "simulate", CONTENTION, "--seeds", "200", "--steps", "40",
           "--warmup", "2", "-j", "2", "--partial", str(out), "--format", "json", "--no-progress"]  # fmt: skip
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))  # fmt: skip
    try:
        deadline = time.monotonic() + WAIT
        while not out.exists() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert out.exists(), "no seed finished in time"
        workers = _children(proc.pid)
        assert len(workers) >= 2  # the pool's processes (and the forkserver)
        for _ in range(signals):
            proc.send_signal(signal.SIGINT)
            time.sleep(0.05)
        stdout, stderr = proc.communicate(timeout=WAIT)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 130, stderr
    assert stdout == "" and "Traceback" not in stderr
    doc = json.loads(out.read_text(encoding="utf-8"))
    kept = doc["partial"]["seeds"]
    assert sum(map(len, kept.values())) == doc["partial"]["runs_done"]
    if signals == 1:
        assert all(s == list(range(len(s))) for s in kept.values())
    assert stderr.strip().endswith(f"interrupted after {doc['partial']['runs_done']} of {doc['partial']['runs_total']} runs: kept in {out}: "
                                   + ", ".join(f"scheme '{n}' {seed_ranges(s)}" for n, s in kept.items()))  # fmt: skip
    first = list(kept)[0]
    seeds = kept[first]
    spec = ctdsl.load(CONTENTION).spec
    fresh = simulate(spec, settings(spec, 40, max(seeds) + 2, 2), [first])
    per_seed = {s["name"]: s["simulated"]["per_seed"] for s in doc["schemes"]}
    assert per_seed[first] == [fresh.schemes[first].runs[k].step for k in seeds]
    assert not [p for p in workers if Path(f"/proc/{p}").exists() and "zombie" not in _state(p)]


def _children(pid: int) -> list[int]:
    """Every process below `pid` (the forkserver and the pool's workers), from /proc."""
    kids = {}
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                kids.setdefault(int((d / "stat").read_text().rsplit(")", 1)[1].split()[1]), []).append(int(d.name))
            except (OSError, IndexError, ValueError):
                pass
    out, todo = [], [pid]
    while todo:
        for c in kids.get(todo.pop(), []):
            out.append(c)
            todo.append(c)
    return out


def _state(pid: int) -> str:
    try:
        return "zombie" if (Path(f"/proc/{pid}") / "stat").read_text().rsplit(")", 1)[1].split()[0] == "Z" else "alive"
    except OSError:
        return "zombie"


def test_the_wall_budget_starts_no_further_run_on_a_pool(study, monkeypatch):
    """A budget of 0 s: the first run is submitted, then no other (runs are submitted as slots free up,
    each after the budget check), so -j 2 stops after 1 of 3 x 3 runs as -j 1 does, and says so."""
    from ctdsl import limits

    monkeypatch.setattr(limits, "MAX_SIM_WALL_SECONDS", 0)
    res = simulate(study.spec, settings(study.spec, 4, 3, 1), jobs=2)
    assert list(res.schemes) == ["adamw"] and res.schemes["adamw"].seed_list == [0]
    assert res.stopped == "stopped after 0 s (the wall budget): 1 of 9 runs done; scheme 'adamw' has 1 of 3 seeds, not simulated: two_bit, diloco"
