"""The explorer's recorded-simulation view (`ctdsl explore --simulate`): its section, data and script.

The CLI records a short run (`ctdsl.simulate.trace.record`, plain lists and
dicts) and passes it here; report does not import simulate. Every name from the
spec (schemes, labels, nodes, links) is HTML-encoded here, and the data is
embedded as the page's other JSON is (`page.script_json`). Without a recording
the page has none of this and is byte-identical to the plain explorer.
"""

from __future__ import annotations

from ctdsl.report.encode import html_text

SECTION = """<section id="sim" aria-labelledby="h-sim">
<h2 id="h-sim">Recorded simulation</h2>
<p class="note" id="sim-note"></p>
<div class="toolbar"><label>scheme <select id="sim-scheme"></select></label>
<button id="sim-play" type="button" aria-pressed="false">Play</button>
<label>time <input type="range" id="sim-time" min="0" max="1000" step="1" value="0" aria-valuetext="0 s"></label>
<span id="sim-now" aria-live="off"></span></div>
<canvas id="sim-canvas" width="960" height="420" role="img" aria-label="queue length per WAN direction, sync transfers and rounds over the recorded run"></canvas>
<p id="sim-steps" aria-live="polite"></p>
</section>
"""


def sim_model(rec: dict) -> dict:
    """The recording with its spec text HTML-encoded (numbers as they are)."""
    schemes = []
    for s in rec["schemes"]:
        schemes.append(
            {
                **s,
                "name": html_text(s["name"]),
                "label": html_text(s["label"]),
                "directions": [{**d, "from": html_text(d["from"]), "to": html_text(d["to"]), "link": html_text(d["link"])} for d in s["directions"]],
                "phases": [[html_text(n), a, b] for n, a, b in s["phases"]],
            }
        )
    return {**rec, "latency": html_text(rec["latency"]), "schemes": schemes}
