"""The explorer's page: the views, the template, the embedded data, the printed forms and the inlined script.

A page is a list of views (`View`): each a section of HTML (already encoded)
and the file of script that fills it, placed in a narrow column (`side`), the
wide one beside it (`main`) or across both. The page's script is `core.js`
(the data, the state, the checker's bounds, the answers of a redraw),
`numbers.js` (values printed as ctdsl prints them), `charts.js` (canvases and
ticked axes), then each view's file, then `main.js`, run in one function's
scope: a view's file registers it with `view({...})` (see core.js). A new view is a
`View` here, a file of script, and the outputs it shows added in `model.py`.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from importlib import resources

from ctdsl.report.encode import html_text
from ctdsl.report.explore.mathml import mathml
from ctdsl.report.explore.model import page_model
from ctdsl.report.explore.simview import SECTION as SIM_SECTION
from ctdsl.report.explore.simview import sim_model

_MARKER = re.compile(r"@(CSP|CSS|TITLE|INTRO|VIEWS|DATA|SCRIPT)@")
_CSP = "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:"


def _asset(name: str) -> str:
    return resources.files("ctdsl.report.explore").joinpath(name).read_text(encoding="utf-8")


def script_json(data) -> str:
    """JSON for a `<script type="application/json">`: `<`, `>` and `&` as \\u escapes, so no `</script>` can close it."""
    text = json.dumps(data, separators=(",", ":"), sort_keys=True, allow_nan=False)
    return text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")


@dataclass(frozen=True)
class View:
    """One view: its section (HTML, spec text already encoded) and its script (an asset, or none)."""

    section: str
    script: str | None = None


PARAMS = """<section id="controls" class="side" aria-labelledby="h-params">
<h2 id="h-params">Params</h2>
<div id="params"></div>
<div class="toolbar"><button id="play" type="button" aria-pressed="false">Play</button>
<button id="reset" type="button">Reset</button> <span id="timing"></span></div>
</section>"""

CURVES = """<section id="curves" class="main" aria-labelledby="h-curves">
<h2 id="h-curves">Against one param</h2>
<div class="toolbar"><label>sweep <select id="x-param"></select></label>
<label>show <select id="quantity"></select></label></div>
<canvas id="curve" role="img" aria-label="each scheme against the swept param"></canvas>
<ul class="legend" id="legend"></ul>
<h3>Break-evens</h3>
<ul id="be-list" aria-live="polite"></ul>
</section>"""

STEPS = """<section id="steps" aria-labelledby="h-steps">
<h2 id="h-steps">Step time by component</h2>
<ul class="legend" id="bars-legend"></ul>
<div id="bars"></div>
</section>"""

MAP = """<section id="map" class="side" aria-labelledby="h-map">
<h2 id="h-map">Winner map</h2>
<div class="toolbar"><label>x <select id="map-x"></select></label><label>y <select id="map-y"></select></label></div>
<canvas id="winner" role="img" aria-label="the scheme that reaches the target first at each point"></canvas>
<p id="map-caption" class="note"></p>
<ul class="legend" id="map-legend"></ul>
</section>"""

MODULES = """<section id="modules" class="main" aria-labelledby="h-modules">
<h2 id="h-modules">Module stages</h2>
<div id="stages"></div>
</section>"""

TABLE = """<section id="tables" aria-labelledby="h-table">
<h2 id="h-table">Solve table</h2>
<table id="solve-table"><thead><tr><th scope="col">scheme</th><th scope="col">step time</th><th scope="col">binds</th>
<th scope="col">time to target</th><th scope="col">energy to target</th><th scope="col">energy per step</th>
<th scope="col">payload</th><th scope="col">WAN bytes</th></tr></thead><tbody id="solve-body"></tbody></table>
</section>"""


MONEY = """<section id="money" aria-labelledby="h-money">
<h2 id="h-money">Cost and CO2e to target</h2>
<div id="money-box"></div>
</section>"""

TARGETS = """<section id="targets" aria-labelledby="h-targets">
<h2 id="h-targets">Utilisation and targets</h2>
<div id="targets-box"></div>
</section>"""

BE2 = """<section id="be2" aria-labelledby="h-be2">
<h2 id="h-be2">A break-even against a second param</h2>
<div class="toolbar"><label>break-even <select id="be2-b"></select></label><label>against <select id="be2-q"></select></label></div>
<div id="be2-box"><canvas id="be2-chart" role="img" aria-label="where two schemes tie over one param, against a second param"></canvas></div>
<p id="be2-caption" class="note"></p>
</section>"""

SCENARIOS = """<section id="scenarios" aria-labelledby="h-scenarios">
<h2 id="h-scenarios">Scenarios and observations</h2>
<div id="scenarios-box"></div>
</section>"""

RESOURCES = """<section id="job" aria-labelledby="h-job">
<h2 id="h-job">Job size</h2>
<div id="job-box"></div>
</section>
<section id="memory" aria-labelledby="h-memory">
<h2 id="h-memory">Memory per GPU</h2>
<div id="memory-box"></div>
</section>
<section id="energy" aria-labelledby="h-energy">
<h2 id="h-energy">Energy per step by part</h2>
<div id="energy-box"></div>
</section>
<section id="bytes" aria-labelledby="h-bytes">
<h2 id="h-bytes">Bytes per worker and per link class</h2>
<div id="bytes-box"></div>
</section>"""


SERVING = """<section id="serving" class="main" aria-labelledby="h-serving">
<h2 id="h-serving">Serving: TTFT and TPOT against the arrival rate</h2>
<div class="sv-charts"><div><canvas id="sv-ttft" role="img" aria-label="each path's TTFT against the arrival rate, with the SLO's target"></canvas></div>
<div><canvas id="sv-tpot" role="img" aria-label="each path's TPOT against the arrival rate, with the SLO's target"></canvas></div></div>
<ul class="legend" id="serving-legend"></ul>
<p id="serving-caption" class="note"></p>
</section>
<section id="serving-tables" aria-labelledby="h-serving-cap">
<h3 id="h-serving-cap">Serving: capacity of each pool and link, and goodput</h3>
<div id="serving-box"></div>
<p class="note">Requests/s each part of a path can serve; the binding one (outlined) sets the sustainable rate. Goodput: the highest rate at which every target of the SLO holds.</p>
<h3>Serving: latency at the current rate</h3>
<div id="serving-latency-box"></div>
</section>"""


SERVING_BE = """<section id="serving-breakevens" aria-labelledby="h-serving-be">
<h3 id="h-serving-be">Serving: break-evens of hand-offs</h3>
<ul id="sv-be-list" aria-live="polite"></ul>
<p class="note">Each break-even of two hand-offs the spec asks, at the other params as set: where the workload's paths through them tie, and which is lower on each side, over the values of the param at which both paths' queues settle (as <code>ctdsl solve</code> gives them).</p>
</section>"""


def opening_comment(text: str) -> str:
    """The spec's opening comment: its first lines that are comments (after blank ones), without the `#`."""
    lines = []
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped and not lines:
            continue
        if not stripped.startswith("#"):
            break
        lines.append(stripped[1:][1:] if stripped[1:2] == " " else stripped[1:])
    return "\n".join(lines).strip()


def _diagnostics(texts: tuple[str, ...]) -> str:
    body = "".join(f'<pre class="diag">{html_text(t)}</pre>' for t in texts) or '<p class="note">None: the checker and the solver found nothing to say.</p>'
    return (
        '<section id="diagnostics" aria-labelledby="h-diag">\n<h2 id="h-diag">Diagnostics</h2>\n'
        '<p class="note">What <code>ctdsl solve</code> prints on its error stream for this spec at its start values.</p>\n'
        + body + "\n</section>"
    )


def _equations(solution) -> str:
    infos = list(solution.symbols.info.values())
    args = tuple(i.symbol for i in infos)
    displays = {i.symbol: i.param.display for i in infos if i.param.display}
    parts = []
    for r in solution.schemes.values():
        label = html_text(r.label or r.name)
        rows = [f'<div class="eq"><span>step time, s =</span>{mathml(r.step_time.expr, args, displays)}</div>']
        if r.time_to_target is not None:
            rows.append(f'<div class="eq"><span>time to target, s =</span>{mathml(r.time_to_target.expr, args, displays)}</div>')
        parts.append(f'<details data-scheme="{html_text(r.name)}"><summary>{label} <code>{html_text(r.name)}</code></summary>{"".join(rows)}</details>')
    return (
        '<section id="equations" aria-labelledby="h-eq">\n<h2 id="h-eq">Equations</h2>\n'
        '<p id="subst-row"><label><input type="checkbox" id="subst"> show the current values in place of the params (base units)</label></p>\n'
        + "\n".join(parts)
        + "\n</section>"
    )


def _hidden(section: str) -> str:
    return section.replace("<section ", "<section hidden ")


def views(solution, sim: dict | None = None, sensitivity: str = "", diagnostics: tuple[str, ...] = ()) -> list[View]:
    """The page's views, in the order of the page."""
    out = [
        View(PARAMS, "view_params.js"),
        View(CURVES, "view_curves.js"),
        View(STEPS, "view_steps.js"),
        View(MAP, "view_map.js"),
        View(MODULES),  # filled by view_steps.js
        View(TABLE),  # filled by view_steps.js
        View(BE2, "view_be2.js"),
        View(SCENARIOS, "view_scenarios.js"),
        View(MONEY, "view_money.js"),
        View(TARGETS, "view_targets.js"),
        View(RESOURCES, "view_resources.js"),
        View(_diagnostics(diagnostics)),
        View(_equations(solution)),  # its script is in view_steps.js
    ]
    if getattr(solution, "serving", ()):
        handoffs = any(b.workload is not None for b in solution.breakevens)
        shown = (PARAMS, SCENARIOS) + ((BE2,) if handoffs else ())  # a hand-off's break-even against a second param is drawn in BE2
        if not solution.schemes:  # serving only: the views of training stay in the page (their scripts run) but hidden
            out = [View(_hidden(v.section), v.script) if v.section not in shown and 'id="diagnostics"' not in v.section else v for v in out]
        out.insert(1, View(SERVING, "view_serving.js"))  # a spec that serves: first after the params
        if handoffs:
            out.insert(2, View(SERVING_BE, "view_serving_be.js"))
    if sensitivity:
        out.append(View(sensitivity))
    if sim is not None:
        out.append(View(SIM_SECTION, "view_sim.js"))
    return out


_TEMPLATE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="@CSP@">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>ctdsl explorer: @TITLE@</title>
<style>
@CSS@
</style>
</head>
<body>
<header>
<h1>ctdsl explorer</h1>
<p>Spec <code>@TITLE@</code>. Every number on this page is computed in your browser from the exact
expressions <code>ctdsl solve</code> derives, printed as JavaScript by ctdsl; the page works offline.</p>
@INTRO@<p id="winner-now" aria-live="polite"></p>
</header>
<main>
@VIEWS@
</main>
@DATA@<script>
@SCRIPT@
</script>
</body>
</html>
"""


def explorer_html(
    solution, sim: dict | None = None, sensitivity: str = "", intro: str = "", diagnostics: tuple[str, ...] = (), fit: tuple[str, float, str] | None = None
) -> str:
    """The whole page, self-contained; `sim`: a recorded run (`ctdsl.simulate.trace.record`) to animate;
    `sensitivity`: a static section of HTML (`ctdsl.report.sensitivity_out.sensitivity_html`), already encoded;
    `intro`: the spec's opening comment (`opening_comment`), plain text; `diagnostics`: what solve prints
    on stderr, each as plain text. Both are HTML-encoded here. `fit`: (param, fitted value, scenario) of the
    spec's `fit`, which the page offers to hold under its presets."""
    data, forms, checks = page_model(solution, fit)
    page_views = views(solution, sim, sensitivity, tuple(diagnostics))
    files = ["core.js", "numbers.js", "charts.js", *dict.fromkeys(v.script for v in page_views if v.script), "main.js"]
    code = "\n".join(_asset(f) for f in files).replace("/*@FORMS@*/", forms).replace("/*@CHECKS@*/", checks)
    script = '(function () {\n"use strict";\n' + code + "})();"
    if "</script" in script.lower() or "<!--" in script:
        raise ValueError("the printed forms would close the page's script")  # cannot happen: they are numbers and names a0.., t0..
    blobs = f'<script type="application/json" id="ct-data">{script_json(data)}</script>\n'
    if sim is not None:
        closed = {name: r.step_time.value for name, r in solution.schemes.items()}  # the closed form solve prints
        blobs += f'<script type="application/json" id="ct-sim">{script_json(sim_model(sim, closed))}</script>\n'
    parts = {
        "@CSP@": _CSP,
        "@CSS@": _asset("explorer.css"),
        "@TITLE@": data["title"],
        "@INTRO@": f'<p class="intro" id="intro">{html_text(intro)}</p>\n' if intro else "",
        "@VIEWS@": "\n".join(v.section.strip() for v in page_views),
        "@DATA@": blobs,
        "@SCRIPT@": script,
    }
    # one pass, so that nothing inserted is read as a marker
    return _MARKER.sub(lambda m: parts[m.group(0)], _TEMPLATE)
