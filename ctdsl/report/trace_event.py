"""A recorded simulation run as a Chrome / Perfetto trace: the Trace Event Format's JSON.

`ctdsl simulate --trace out.json` writes it; Perfetto's UI (ui.perfetto.dev) and
chrome://tracing open it. The format is Google's "Trace Event Format" document
(docs.google.com/document/d/1CvAClvFfyA5R-PhYUmn5OOQtYMH4h6I0nSsKchNAySU): an
object whose `traceEvents` is a list of events, each with a phase `ph`, a
timestamp `ts` in microseconds, a process `pid` and a thread `tid`.

What the trace holds, from `ctdsl.simulate.trace.record` (the first seed's run of
each scheme, at most MAX_STEPS measured steps, the warm-up left out: t = 0 is the
start of the first measured step):

- a process per scheme (pid 1, 2, ... in spec order), named `scheme NAME: LABEL`
  by an "M" `process_name` event;
- in it, a thread `steps` (tid 1): each measured step (or round of steps) as a
  complete event ("X", `ts` and `dur`), with its step time in `args`;
- a thread `collective phases` (tid 2): each phase of each sync as an "X" event
  named by the phase, as simulated (queueing included);
- a thread per loaded WAN direction (tid 3, 4, ...), named `link A -> B (LINK)`:
  each sync transfer on it as an "X" event from when it went on the wire to when
  it left, its wait in the queue before in `args`;
- a counter per loaded direction ("C" events, `queue A -> B`): the number of
  transfers waiting or on the wire (background and sync), as the longest queue
  in each of the recording's 300 equal slices of the run (trace.BINS), one
  event at the start of each slice: a loaded link changes its queue at every
  background arrival, far more often than a file should hold.

Times are written in microseconds to the nanosecond (3 decimals). Names come
from the spec and are written as JSON strings (json.dumps escapes them); the
file is deterministic for a seed.
"""

from __future__ import annotations

import json
from typing import TextIO

US = 1e6  # microseconds a second
PROCESS_SORT = "process_sort_index"


def _us(seconds: float) -> float:
    return round(seconds * US, 3)


def _meta(pid: int, tid: int | None, kind: str, name: str) -> dict:
    e = {"ph": "M", "pid": pid, "name": kind, "args": {"name": name}}
    if tid is not None:
        e["tid"] = tid
    return e


def trace_events(recorded: dict, spec: str) -> dict:
    """The Trace Event Format object of a recorded run (`ctdsl.simulate.trace.record`)."""
    events: list[dict] = []
    for pid, s in enumerate(recorded["schemes"], start=1):
        events.append(_meta(pid, None, "process_name", f"scheme {s['name']}: {s['label']}"))
        events.append({"ph": "M", "pid": pid, "name": PROCESS_SORT, "args": {"sort_index": pid}})
        events.append(_meta(pid, 1, "thread_name", "steps"))
        events.append(_meta(pid, 2, "thread_name", "collective phases"))
        names = [f"{d['from']} -> {d['to']}" for d in s["directions"]]
        for i, d in enumerate(s["directions"]):
            events.append(_meta(pid, 3 + i, "thread_name", f"link {names[i]} ({d['link']})"))
        for k, (start, end, steps, step) in enumerate(s["rounds"]):
            events.append({"ph": "X", "pid": pid, "tid": 1, "name": f"step {k + 1}" if steps == 1 else f"steps {k + 1} ({steps})",
                           "cat": "step", "ts": _us(start), "dur": _us(end - start),
                           "args": {"steps": steps, "step_time_s": step}})  # fmt: skip
        for name, start, end in s["phases"]:
            events.append({"ph": "X", "pid": pid, "tid": 2, "name": name, "cat": "phase", "ts": _us(start), "dur": _us(end - start)})
        for i, arrived, start, end in s["jobs"]:
            events.append({"ph": "X", "pid": pid, "tid": 3 + i, "name": "sync transfer", "cat": "transfer", "ts": _us(start),
                           "dur": _us(end - start), "args": {"queued_us": _us(start - arrived), "link": names[i]}})  # fmt: skip
        for i, row in enumerate(s["queue"]):
            for k, q in enumerate(row):
                events.append({"ph": "C", "pid": pid, "name": f"queue {names[i]}", "ts": _us(k * s["bin"]), "args": {"transfers": q}})
    other = {"generator": "ctdsl simulate --trace", "spec": spec, "seed": recorded["seed"], "steps": recorded["steps"],
             "warmup": recorded["warmup"], "latency": recorded["latency"],
             "clipped": [s["name"] for s in recorded["schemes"] if s["clipped"]]}  # fmt: skip
    return {"traceEvents": events, "displayTimeUnit": "ms", "otherData": other}


def write_trace(recorded: dict, spec: str, fh: TextIO) -> None:
    json.dump(trace_events(recorded, spec), fh, separators=(",", ":"), allow_nan=False)
    fh.write("\n")
