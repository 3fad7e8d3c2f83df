"""`ctdsl explore --simulate`: the recorded run (ctdsl/simulate/trace.py) against `ctdsl simulate`, and the page it goes into.

The recording's step times are checked by an independent path: the same spec,
seed and settings run through `ctdsl.simulate.runner.simulate` (what `ctdsl
simulate --seeds 1 --steps N --warmup W` runs), whose per-seed result is the
mean step over the measured steps. The recorded rounds' step times, weighted by
their steps, must give that mean, and the recorded run must process as many
events as the plain one (the recording does not change the run: `test_traced_run_is_the_plain_run`).
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import math
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

import ctdsl
from ctdsl.cli import app
from ctdsl.report.explore import explorer_html
from ctdsl.simulate import trace
from ctdsl.simulate.runner import Settings, settings, simulate

ROOT = Path(__file__).resolve().parents[1]
FLAGSHIP = ROOT / "specs" / "llama70b_wan.ct"
CONTENTION = ROOT / "examples" / "15_contention.ct"
runner = CliRunner()


def loaded(path, overrides=None):
    return ctdsl.load(path, overrides or {})


# the flagship's schemes are simulated step by step: at 90% WAN load a dense scheme's step is minutes of
# simulated time, so the recorder's tests take a few (both kinds of sync schedule) where they need not all
FEW = ("demo", "diloco", "streaming")


def few(study):
    return dataclasses.replace(study.spec, schemes={n: s for n, s in study.spec.schemes.items() if n in FEW})


CASES = [(FLAGSHIP, {"wan_load": "0.9"}), (FLAGSHIP, {}), (CONTENTION, {})]


@pytest.mark.parametrize("path,overrides", CASES, ids=["flagship-loaded", "flagship", "contention"])
def test_recorded_steps_are_simulate_s(path, overrides):
    study = loaded(path, overrides)
    spec = few(study) if path == FLAGSHIP else study.spec
    rec = trace.record(spec)
    base = settings(spec)
    # the caps, by hand: at most 20 measured steps after at most 2 of warm-up, one seed
    assert rec["steps"] == min(base.steps, 20) and rec["warmup"] == min(base.warmup, 2)
    # the recorder runs the SimPy engine: compare with SimPy's run (the numpy engine agrees to rounding)
    plain = simulate(spec, Settings(rec["steps"], 1, rec["warmup"], base.seed, base.latency, engine="simpy"))
    assert [s["name"] for s in rec["schemes"]] == list(plain.schemes)
    for s in rec["schemes"]:
        run = plain.schemes[s["name"]].runs[0]
        measured = s["rounds"][s["warm"]:]
        n = sum(r[2] for r in measured)
        assert n == run.steps == s["steps"]
        mean = math.fsum(r[3] * r[2] for r in measured) / n
        assert mean == pytest.approx(run.step, rel=1e-12)
        assert s["mean"] == run.step
        assert s["closed"] == plain.schemes[s["name"]].plan.step
        for r in s["rounds"]:  # a round's step time is its length over its steps (the drawn times have 9 digits)
            assert r[3] * r[2] == pytest.approx(r[1] - r[0], rel=1e-6, abs=1e-6 * s["end"])


def test_recording_traces_the_queues_when_loaded():
    rec = trace.record(few(loaded(FLAGSHIP, {"wan_load": "0.9"})))
    for s in rec["schemes"]:
        assert s["directions"], s["name"]
        assert all(d["rho"] == 0.9 for d in s["directions"])
        assert all(len(q) == trace.BINS for q in s["queue"])
        assert max(max(q) for q in s["queue"]) >= 1  # a busy link at rho 0.9 has a queue
        assert 0 < len(s["jobs"]) <= trace.MAX_JOBS
        for i, a, b, e in s["jobs"]:  # joined, then on the wire, then off it
            assert 0 <= i < len(s["directions"]) and a <= b <= e <= s["end"]
    unloaded = trace.record(few(loaded(FLAGSHIP)))
    assert all(s["directions"] == [] and s["jobs"] == [] for s in unloaded["schemes"])


def test_recording_is_deterministic():
    spec = few(loaded(FLAGSHIP, {"wan_load": "0.9"}))
    assert json.dumps(trace.record(spec)) == json.dumps(trace.record(spec))


def test_plain_page_has_no_simulation():
    study = loaded(FLAGSHIP)
    page = study.explore()
    from ctdsl.report.explore.page import opening_comment

    intro = opening_comment(FLAGSHIP.read_text(encoding="utf-8"))  # the flagship has no warning to show
    assert page == explorer_html(study.solve(), intro=intro)
    assert "ct-sim" not in page and 'id="sim"' not in page and "@SIM" not in page


def test_page_with_simulation_and_its_size(tmp_path, monkeypatch):
    # 6 measured steps, not 20: a dense scheme's step at 90% load is minutes of simulated time; the page's
    # size is bounded by the recording's caps on jobs, phases and queue changes, which 6 steps reach
    monkeypatch.setattr(trace, "MAX_STEPS", 6)
    out = tmp_path / "e.html"
    result = runner.invoke(app, ["explore", str(FLAGSHIP), "--set", "wan_load=0.9", "--simulate", "-o", str(out)])
    assert result.exit_code == 0, result.output
    page = out.read_text(encoding="utf-8")
    assert len(page.encode("utf-8")) < 1.5e6
    assert page.count('id="ct-sim"') == 1 and page.count('<section id="sim"') == 1
    data = json.loads(re.search(r'<script type="application/json" id="ct-sim">(.*?)</script>', page, re.S).group(1))
    same_as_recorded(data, trace.record(loaded(FLAGSHIP, {"wan_load": "0.9"}).spec))
    # the page at the spec's own load, at full length: test_the_docs_state_each_pages_size writes it and holds its
    # size to the docs' figure (202 kB), under the bound above


def decoded(s: dict) -> dict:
    """One scheme of the page's embedded recording back in seconds, read as ctdsl/report/explore/simview.py
    documents it: whole ticks, each sequence as differences."""
    tick = s["tick"]
    bounds = list(itertools.accumulate(s["rounds"]))
    per = s["per"] if isinstance(s["per"], list) else [s["per"]] * (len(bounds) - 1)
    rounds = [(bounds[k] * tick, bounds[k + 1] * tick, per[k]) for k in range(len(bounds) - 1)]
    jobs, t = [], 0
    for i, da, wait, on in zip(*[iter(s["jobs"])] * 4):
        t += da
        jobs.append((i, t * tick, (t + wait) * tick, (t + wait + on) * tick))
    phases, t = [], 0
    for k, da, span in zip(*[iter(s["phases"])] * 3):
        t += da
        phases.append((s["names"][k], t * tick, (t + span) * tick))
    return {"end": s["end"] * tick, "rounds": rounds, "jobs": jobs, "phases": phases}


def same_as_recorded(data: dict, rec: dict) -> None:
    """The embedded recording is the recording: every time to within half a tick (a tick is at
    most a millionth of the run), the names encoded, the phases recorded twice at the same times once."""
    assert [s["name"] for s in data["schemes"]] == [s["name"] for s in rec["schemes"]]
    for got, want in zip(data["schemes"], rec["schemes"]):
        tick = got["tick"]
        assert tick <= want["end"] * 1e-6 and tick > want["end"] * 1e-7
        near = lambda a, b: abs(a - b) <= tick / 2 + 1e-9 * abs(b)  # noqa: E731
        d = decoded(got)
        assert near(d["end"], want["end"])
        assert len(d["rounds"]) == len(want["rounds"])
        for (a, b, m), r in zip(d["rounds"], want["rounds"]):
            assert near(a, r[0]) and near(b, r[1]) and m == r[2]
        assert len(d["jobs"]) == len(want["jobs"])
        for j, w in zip(d["jobs"], sorted(want["jobs"], key=lambda j: (j[1], j[0]))):
            assert j[0] == w[0] and all(near(x, y) for x, y in zip(j[1:], w[1:]))
        assert len(d["phases"]) == len({(n, a, b) for n, a, b in want["phases"]})
        for p, w in zip(d["phases"], sorted({(n, a, b) for n, a, b in want["phases"]}, key=lambda p: (p[1], p[0], p[2]))):
            assert p[0] == w[0] and near(p[1], w[1]) and near(p[2], w[2])
        assert got["queue"] == want["queue"] and got["mean"] == want["mean"] and got["steps"] == want["steps"]
        assert got["warm"] == want["warm"] and got["clipped"] == want["clipped"]


def test_spec_text_in_the_recording_is_encoded():
    study = loaded(FLAGSHIP)
    rec = trace.record(study.spec)
    evil = "</script><b x='1'>&"
    s = rec["schemes"][0]
    s["label"] = evil
    s["phases"] = [[evil, 0.0, 1.0]]
    s["directions"] = [{"from": evil, "to": "b", "link": evil, "rho": 0.5}]
    s["queue"] = [[0] * trace.BINS]
    page = explorer_html(study.solve(), rec)
    blob = re.search(r'id="ct-sim">(.*?)</script>', page, re.S).group(1)
    assert "<" not in blob and ">" not in blob and "&" not in blob.replace("\\u0026", "")
    data = json.loads(blob)["schemes"][0]
    assert data["label"] == data["names"][0] == data["directions"][0]["from"] == "&lt;/script&gt;&lt;b x=&#x27;1&#x27;&gt;&amp;"


def test_traced_run_is_the_plain_run():
    """The recording changes nothing: the traced run's result equals the engine's, events included (in
    rounds, or step by step where `ctdsl simulate` runs the scheme so)."""
    from ctdsl.simulate import tasks
    from ctdsl.simulate.plan import build_plans
    from ctdsl.simulate.runner import spawn_keys

    spec = few(loaded(FLAGSHIP, {"wan_load": "0.9"}))
    keys = spawn_keys(spec)
    for name, plan in build_plans(spec, None).items():
        plain = tasks.simpy_run(plan)(plan, 0, 0, 12, 2, spawn_keys=keys)
        tr = trace.traced(plan, 0, 0, 12, 2, True, True, keys, False)
        traced = tr.result(tr.execute())
        assert (traced.step, traced.steps, traced.events, traced.background, traced.stragglers) == (
            plain.step, plain.steps, plain.events, plain.background, plain.stragglers), name
        assert [(l.utilisation, l.sync_wait, l.sync_count) for l in traced.links] == [(l.utilisation, l.sync_wait, l.sync_count) for l in plain.links]


def test_the_docs_state_each_pages_size():
    """docs/explorer.md's table of page sizes: each page written here, its size within 3% of the
    figure stated (in kB of 1,000 bytes)."""
    doc = (ROOT / "docs" / "explorer.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| `ctdsl explore (\S+)((?: --\S+)*)(?: --set (\S+)=(\S+))?` \| ([0-9.]+) kB \|$", doc, re.M)
    assert len(rows) >= 4, rows
    for spec, flags, name, value, stated in rows:
        study = ctdsl.load(ROOT / spec, {name: value} if name else {})
        size = len(study.explore(simulate="--simulate" in flags).encode("utf-8"))
        assert abs(size / 1000 - float(stated)) <= 0.03 * float(stated), (spec, flags, name, value, size, stated)
