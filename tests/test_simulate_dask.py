"""The simulation on a Dask cluster (`--scheduler`, `Study.simulate(client=...)`): the local run's numbers.

One LocalCluster of 2 worker processes (1 thread each) serves the module. The
reference is the in-process run (-j 1): a run is a function of its task alone
(SeedSequence([seed, k]), the spec's edge order), so the cluster, whatever order
its workers finish in, must give the same floats (compared as repr, and as the
CLI's bytes). A scheduler that does not answer is CT801 (exit 2); a run that
raises on a worker is named, and the runs finished are kept.
"""

from __future__ import annotations

import dataclasses
import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

import ctdsl
from ctdsl.cli import app
from ctdsl.simulate.errors import TaskError
from ctdsl.simulate.plan import build_plans
from ctdsl.simulate.runner import settings, spawn_keys

distributed = pytest.importorskip("distributed")
from ctdsl.simulate import cluster  # noqa: E402  (needs distributed)
from ctdsl.simulate import tasks as T  # noqa: E402
from backstop import HANG

ROOT = Path(__file__).resolve().parents[1]
CONTENTION = str(ROOT / "examples" / "15_contention.ct")
runner = CliRunner()


@pytest.fixture(scope="module")
def client():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as lc:
        with distributed.Client(lc, set_as_default=False) as c:  # the code must use the client it is given
            yield c


def test_api_on_the_cluster_equals_the_local_run(client):
    study = ctdsl.load(CONTENTION)
    local = study.simulate(steps=6, seeds=3, warmup=2, jobs=1)
    seen = []
    remote = study.simulate(steps=6, seeds=3, warmup=2, client=client, progress=lambda done, total, what: seen.append((done, total)))
    assert {n: repr(s.runs) for n, s in remote.schemes.items()} == {n: repr(s.runs) for n, s in local.schemes.items()}
    assert {n: s.step for n, s in remote.schemes.items()} == {n: s.step for n, s in local.schemes.items()}
    assert seen == [(k, 9) for k in range(1, 10)]


def test_cli_scheduler_prints_the_local_bytes(client, tmp_path):
    args = ["simulate", CONTENTION, "--seeds", "3", "--steps", "5", "--warmup", "1", "--format", "json", "--no-progress"]
    out = tmp_path / "runs.json"
    local = runner.invoke(app, [*args, "-j", "1"])
    remote = runner.invoke(app, [*args, "--scheduler", client.scheduler.address, "--partial", str(out)])
    assert remote.exit_code == 0, remote.output
    assert remote.stdout == local.stdout
    assert out.exists()


def test_sweep_on_the_cluster_equals_the_local_sweep(client):
    args = ["simulate", CONTENTION, "--sweep", "rho=0.2:0.6:2", "--seeds", "2", "--steps", "4", "--warmup", "1", "-f", "csv", "--no-progress"]
    local = runner.invoke(app, [*args, "-j", "1"])
    remote = runner.invoke(app, [*args, "--scheduler", client.scheduler.address])
    assert remote.exit_code == 0, remote.output
    assert remote.stdout == local.stdout and remote.stdout.count("\n") == 1 + 2 * 3


def test_a_run_that_raises_on_a_worker_is_named(client):
    """adamw's seed 1 given a plan with no phases list fails inside the engine on the worker."""
    study = ctdsl.load(CONTENTION)
    plans = build_plans(study.spec, ["adamw"])
    work = T.make_tasks(plans, 0, 3, 4, 1, spawn_keys=spawn_keys(study.spec))
    work[1] = dataclasses.replace(work[1], plan=dataclasses.replace(work[1].plan, phases=None))
    got = []
    with pytest.raises(TaskError) as info:
        for task, result in cluster.stream(client, work, T.execute, lambda: True):
            got.append(task.run)
    assert str(info.value).startswith("scheme 'adamw' seed 1: TypeError")
    assert 0 in got and 1 not in got  # seed 0 started with it: it finished and was handed over


@pytest.mark.parametrize("address, why", [("tcp://127.0.0.1:9", "Connection refused"), ("nonsense", "missing port number")])
def test_a_scheduler_that_does_not_answer_is_ct801(address, why):
    """Port 9 (discard) has no listener on the loopback: refused at once; 'nonsense' is no address."""
    code = "from ctdsl.cli import main; main()"
    r = subprocess.run([sys.executable, "-c", code, "simulate", CONTENTION, "--seeds", "2", "--steps", "2", "--scheduler", address],
                       capture_output=True, text=True, cwd=ROOT, timeout=HANG)  # fmt: skip
    assert r.returncode == 2, r.stderr
    assert "CT801" in r.stderr and address in r.stderr and why in r.stderr
    assert "Traceback" not in r.stderr and r.stdout == ""  # nothing at exit either


@pytest.mark.parametrize("signals", [1, 2])
def test_ctrl_c_on_the_cluster_keeps_the_finished_seeds_and_leaves_no_task(client, tmp_path, signals):
    """SIGINT once (the running runs finish) or twice (the cluster's runs cancelled at once) to a
    --scheduler run whose --partial file exists: exit 130, no traceback, the kept seeds are the step
    times a local run gives them, and the scheduler holds no task of the run afterwards."""
    out = tmp_path / "runs.json"
    before = _keys(client)
    cmd = [sys.executable, "-c", "from ctdsl.cli import main; main()", "simulate", CONTENTION, "--seeds", "200", "--steps", "40",
           "--warmup", "2", "--scheduler", client.scheduler.address, "--partial", str(out), "--format", "json", "--no-progress"]  # fmt: skip
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))  # fmt: skip
    try:
        deadline = time.monotonic() + HANG
        while not out.exists() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert out.exists(), "no seed finished in time"
        for _ in range(signals):  # the second soon after the first, while the running runs still run
            proc.send_signal(signal.SIGINT)
            time.sleep(0.05)
        stdout, stderr = proc.communicate(timeout=HANG)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 130, stderr
    assert stdout == "" and "Traceback" not in stderr and "interrupted after" in stderr
    doc = json.loads(out.read_text(encoding="utf-8"))
    kept = doc["partial"]["seeds"]
    first = list(kept)[0]
    seeds = kept[first]
    local = ctdsl.load(CONTENTION).simulate(steps=40, seeds=max(seeds) + 2, warmup=2, schemes=[first])
    per_seed = {s["name"]: s["simulated"]["per_seed"] for s in doc["schemes"]}
    assert per_seed[first] == [local.schemes[first].runs[k].step for k in seeds]
    deadline = time.monotonic() + HANG
    while _keys(client) - before and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not _keys(client) - before  # the run's tasks are gone (the other tests' are not its)


def _keys(client) -> set:
    return set(client.run_on_scheduler(lambda dask_scheduler: [str(k) for k in dask_scheduler.tasks]))


def test_study_sweep_on_the_cluster_equals_the_local_sweep(client):
    """The flagship over wan_bw (41 log) x eff (3) = 123 points, every column: Study.sweep(client=)
    (one chunk), and chunks of 16 points (chunks ending inside a row of 3, a last one of 11) on the
    workers, give the local values bit for bit."""
    import numpy as np

    from ctdsl.api import AxisRequest, sweep_axes
    from ctdsl.numeric import CompiledForms, Grid
    from ctdsl.numeric.dask_sweep import collect_on

    study = ctdsl.load(str(ROOT / "specs" / "llama70b_wan.ct"))
    axes = {"wan_bw": ("0.1 GB/s", "1000 GB/s", 41, "log"), "eff": ("0.2", "0.6", 3)}
    local = study.sweep(axes, components=True)
    grid = Grid(sweep_axes(study, [AxisRequest(n, *given) for n, given in axes.items()]))
    for remote in (study.sweep(axes, components=True, client=client), collect_on(client, CompiledForms(study.solve()), grid, True, chunk=16)):
        assert remote.columns == local.columns and len(remote) == 123 and remote.units == local.units
        for name in local.columns:
            assert np.array_equal(local[name], remote[name], equal_nan=local[name].dtype.kind == "f"), name
