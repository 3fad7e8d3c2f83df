"""`ctdsl simulate --trace out.json`: the simulated steps as a Chrome / Perfetto trace (Trace Event Format).

Perfetto's trace processor cannot run here: the `perfetto` package is pure Python
and downloads its trace_processor_shell binary on first use, which a closed
network refuses. So the file is checked against the format's documented schema
(tests/data/trace_event_format.schema.json, written from Google's Trace Event
Format document, whose address it gives) and against the simulation's own
numbers: with no background load, each phase's duration is the phase's closed
form from `ctdsl solve` (the symbolic back end, an independent path), and each
step's duration the simulated step time it carries; with load, each transfer lies inside the run and
each link has its queue counter.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import jsonschema
import pytest
from typer.testing import CliRunner

from ctdsl.cli import app

ROOT = Path(__file__).resolve().parents[1]
SCHEMA = json.loads((ROOT / "tests" / "data" / "trace_event_format.schema.json").read_text(encoding="utf-8"))
CONTENTION = str(ROOT / "examples" / "15_contention.ct")
FLAGSHIP = str(ROOT / "specs" / "llama70b_wan.ct")


def simulate(tmp_path, spec: str, *args: str) -> dict:
    out = tmp_path / "trace.json"
    r = CliRunner().invoke(app, ["simulate", spec, "--steps", "4", "--seeds", "2", "--no-progress", *args, "--trace", str(out)])
    assert r.exit_code == 0, r.output
    assert "open it in ui.perfetto.dev" in r.stderr
    data = json.loads(out.read_text(encoding="utf-8"))
    jsonschema.validate(data, SCHEMA)
    return data


def by_process(data: dict) -> dict[str, list[dict]]:
    """Events by the name of their process (the scheme), from the M events."""
    names = {e["pid"]: e["args"]["name"].split(":")[0].removeprefix("scheme ") for e in data["traceEvents"]
             if e["ph"] == "M" and e["name"] == "process_name"}  # fmt: skip
    out: dict[str, list[dict]] = {n: [] for n in names.values()}
    for e in data["traceEvents"]:
        out[names[e["pid"]]].append(e)
    return out


def threads(events: list[dict]) -> dict[int, str]:
    return {e["tid"]: e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "thread_name"}


def test_the_schema_rejects_what_the_format_does_not_allow():
    """Not vacuous: an X event without dur, a counter with a text value, an unnamed process."""
    for bad in ({"ph": "X", "pid": 1, "tid": 1, "name": "a", "ts": 0},
                {"ph": "C", "pid": 1, "name": "q", "ts": 0, "args": {"n": "3"}},
                {"ph": "M", "pid": 1, "name": "process_name", "args": {}},
                {"ph": "Z", "pid": 1}):  # fmt: skip
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate({"traceEvents": [bad]}, SCHEMA)


def test_unloaded_phases_and_steps_are_the_closed_forms(tmp_path):
    data = simulate(tmp_path, CONTENTION, "--set", "rho=0")
    solved = CliRunner().invoke(app, ["solve", CONTENTION, "--set", "rho=0", "--format", "json"])
    closed = {s["name"]: s for s in json.loads(solved.stdout)["schemes"]}
    events = by_process(data)
    assert set(events) == set(closed)
    for name, evs in events.items():
        assert threads(evs)[1] == "steps" and threads(evs)[2] == "collective phases"
        phases = [e for e in evs if e["ph"] == "X" and e["tid"] == 2]
        want = {p["name"]: p["seconds"] for p in closed[name]["phases"]}
        assert phases and {e["name"] for e in phases} == set(want)
        # the recording keeps its times to 9 significant digits (trace.DIGITS): in a run of a few tens of
        # seconds, a start or an end to 0.1 us, so a duration to 0.2 us
        for e in phases:
            assert e["dur"] == pytest.approx(want[e["name"]] * 1e6, abs=0.2), (name, e["name"])
        steps = sorted((e for e in evs if e["ph"] == "X" and e["tid"] == 1), key=lambda e: e["ts"])
        assert len(steps) == data["otherData"]["warmup"] + 4 or all(s["args"]["steps"] > 1 for s in steps)
        for s in steps:  # the simulated step (stragglers draw each worker's compute: not the closed form's mean)
            assert s["dur"] == pytest.approx(s["args"]["steps"] * s["args"]["step_time_s"] * 1e6, abs=0.2)
        for a, b in zip(steps, steps[1:]):  # the steps tile the run
            assert b["ts"] == pytest.approx(a["ts"] + a["dur"], abs=1e-3)
    assert not [e for e in data["traceEvents"] if e["ph"] == "C"]  # no loaded link: no queue


def test_loaded_links_have_transfers_and_queue_counters(tmp_path):
    data = simulate(tmp_path, CONTENTION, "--set", "rho=0.6", "--scheme", "adamw")
    (evs,) = by_process(data).values()
    names = threads(evs)
    links = {tid: n for tid, n in names.items() if n.startswith("link ")}
    assert len(links) == 2  # east -> west and west -> east
    end = max(e["ts"] + e["dur"] for e in evs if e["ph"] == "X" and e["tid"] == 1)
    transfers = [e for e in evs if e["ph"] == "X" and e["tid"] in links]
    assert transfers and all(0 <= e["ts"] and e["ts"] + e["dur"] <= end + 1e-3 for e in transfers)
    assert all(e["args"]["queued_us"] >= 0 for e in transfers)
    counters = Counter(e["name"] for e in evs if e["ph"] == "C")
    assert set(counters) == {"queue " + n.removeprefix("link ").rsplit(" (", 1)[0] for n in links.values()}
    assert set(counters.values()) == {300}  # one a slice of the run (trace.BINS)
    assert max(e["args"]["transfers"] for e in evs if e["ph"] == "C") >= 1


def test_the_flagship_trace_is_deterministic_and_per_scheme(tmp_path):
    a = simulate(tmp_path, FLAGSHIP, "--set", "wan_load=0.3", "--scheme", "adamw", "--scheme", "band_switch")
    b = simulate(tmp_path, FLAGSHIP, "--set", "wan_load=0.3", "--scheme", "adamw", "--scheme", "band_switch")
    assert a == b
    assert sorted(by_process(a)) == ["adamw", "band_switch"]
    assert a["otherData"]["seed"] == 0 and a["displayTimeUnit"] == "ms"


def test_trace_takes_no_validate_or_sweep(tmp_path):
    r = CliRunner().invoke(app, ["simulate", CONTENTION, "--validate", "--trace", str(tmp_path / "t.json")])
    assert r.exit_code == 2 and "--trace" in r.stderr and not (tmp_path / "t.json").exists()
