"""The explorer's recorded-simulation view (`ctdsl explore --simulate`): its section and its data.

The CLI records a short run (`ctdsl.simulate.trace.record`, plain lists and
dicts) and passes it here; report does not import simulate. Every name from the
spec (schemes, labels, nodes, links) is HTML-encoded here, and the data is
embedded as the page's other JSON is (`page.script_json`). Without a recording
the page has none of this and is byte-identical to the plain explorer.

The closed-form step time the view shows beside the simulated one is the
solver's, from the result tree (`closed`, the value `ctdsl solve` prints at the
same start values), not the recording's.

The recording is embedded compactly, for what the view draws: a canvas of at
most a thousand pixels across the run. Each scheme's times are whole numbers
of `tick` seconds, a power of ten a millionth of its run or finer (so from 1e6
to 1e7 ticks a run), and each sequence is written as differences:

- `rounds`: the first round's start, then each round's length, in ticks (a
  round starts where the one before ends, so no time is written twice), and
  `per`, each round's steps (one number when every round has as many); a
  round's step time is its length over its steps;
- `jobs`: per sync job, sorted by arrival, four numbers: the direction's index,
  ticks since the job before arrived, ticks it waited, ticks on the wire;
- `phases`: `names` once, then per phase, sorted by start, three numbers: the
  name's index, ticks since the phase before started, its length in ticks (a
  phase recorded twice at the same times, as two dcs' alike syncs are, once);
- `queue`: per direction, the longest queue in each slice, as recorded.

`mean` (the simulated mean step over the measured steps, what `ctdsl simulate`
reports for the seed) and `free` are kept as the run gave them.
"""

from __future__ import annotations

import math

from ctdsl.report.encode import html_text

SECTION = """<section id="sim" aria-labelledby="h-sim">
<h2 id="h-sim">Recorded simulation</h2>
<p class="note" id="sim-note"></p>
<div class="toolbar"><label>scheme <select id="sim-scheme"></select></label>
<button id="sim-play" type="button" aria-pressed="false">Play</button>
<label>time <input type="range" id="sim-time" min="0" max="1000" step="1" value="0" aria-valuetext="0 s"></label>
<span id="sim-now" aria-live="off"></span></div>
<div class="sim-charts">
<div><canvas id="sim-canvas" role="img" aria-label="queue length per WAN direction, sync transfers, phases and rounds over the recorded run"></canvas></div>
<div><canvas id="sim-rounds" role="img" aria-label="the step time of each measured round, the closed form and the simulated mean so far"></canvas></div>
</div>
<p id="sim-steps" aria-live="polite"></p>
</section>
"""

TICKS = 6  # a tick is a power of ten at most 1e-6 of a run


def tick_of(end: float) -> float:
    """Seconds per tick of a run of `end` seconds: 10^(floor(log10 end) - TICKS)."""
    return 10.0 ** (math.floor(math.log10(end)) - TICKS) if end > 0 else 10.0**-TICKS


def _deltas(values: list[int]) -> list[int]:
    out, before = [], 0
    for v in values:
        out.append(v - before)
        before = v
    return out


def _scheme(s: dict, closed: float | None) -> dict:
    tick = tick_of(s["end"])
    q = lambda t: round(t / tick)  # noqa: E731
    rounds = s["rounds"]
    per = [r[2] for r in rounds]
    jobs = sorted(s["jobs"], key=lambda j: (j[1], j[0]))
    flat_jobs: list[int] = []
    before = 0
    for i, a, b, e in jobs:
        flat_jobs += [i, q(a) - before, q(b) - q(a), q(e) - q(b)]
        before = q(a)
    names = list(dict.fromkeys(n for n, _, _ in s["phases"]))
    spans = sorted({(q(a), names.index(n), q(b)) for n, a, b in s["phases"]})
    flat_phases: list[int] = []
    before = 0
    for a, k, b in spans:
        flat_phases += [k, a - before, b - a]
        before = a
    return {
        "name": html_text(s["name"]),
        "label": html_text(s["label"]),
        "closed": closed if closed is not None else s["closed"],
        "free": s["free"],
        "mean": s["mean"],
        "steps": s["steps"],
        "warm": s["warm"],
        "clipped": s["clipped"],
        "tick": tick,
        "end": q(s["end"]),
        "rounds": _deltas([q(rounds[0][0])] + [q(r[1]) for r in rounds]) if rounds else [],
        "per": per[0] if per and all(m == per[0] for m in per) else per,
        "directions": [{"from": html_text(d["from"]), "to": html_text(d["to"]), "link": html_text(d["link"]), "rho": d["rho"]} for d in s["directions"]],
        "jobs": flat_jobs,
        "names": [html_text(n) for n in names],
        "phases": flat_phases,
        "queue": s["queue"],
    }


def sim_model(rec: dict, closed: dict[str, float] | None = None) -> dict:
    """The recording as the page embeds it (see the module's docstring); `closed`: each scheme's
    closed-form step time from the result tree, by name."""
    closed = closed or {}
    schemes = [_scheme(s, closed.get(s["name"])) for s in rec["schemes"]]
    return {"seed": rec["seed"], "run": rec["run"], "steps": rec["steps"], "warmup": rec["warmup"], "latency": html_text(rec["latency"]), "schemes": schemes}
