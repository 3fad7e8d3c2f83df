"""The explorer's page: the template, the embedded data, the printed forms and the inlined script."""

from __future__ import annotations

import json
import re
from importlib import resources

from ctdsl.report.encode import html_text
from ctdsl.report.explore.mathml import mathml
from ctdsl.report.explore.model import page_model
from ctdsl.report.explore.simview import SECTION, sim_model

_MARKER = re.compile(r"@(CSP|CSS|TITLE|EQUATIONS|DATA|SCRIPT|SENSITIVITY|SIMVIEW|SIMDATA)@")
_CSP = "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:"


def _asset(name: str) -> str:
    return resources.files("ctdsl.report.explore").joinpath(name).read_text(encoding="utf-8")


def script_json(data) -> str:
    """JSON for a `<script type="application/json">`: `<`, `>` and `&` as \\u escapes, so no `</script>` can close it."""
    text = json.dumps(data, separators=(",", ":"), sort_keys=True, allow_nan=False)
    return text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")


def _equations(solution) -> str:
    args = tuple(i.symbol for i in solution.symbols.info.values())
    parts = []
    for r in solution.schemes.values():
        label = html_text(r.label or r.name)
        rows = [f'<div class="eq"><span>step time, s =</span>{mathml(r.step_time.expr, args)}</div>']
        if r.time_to_target is not None:
            rows.append(f'<div class="eq"><span>time to target, s =</span>{mathml(r.time_to_target.expr, args)}</div>')
        parts.append(f'<details data-scheme="{html_text(r.name)}"><summary>{label} <code>{html_text(r.name)}</code></summary>{"".join(rows)}</details>')
    return "\n".join(parts)


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
<p id="winner-now" aria-live="polite"></p>
</header>
<main>
<div class="grid">
<section id="controls" aria-labelledby="h-params">
<h2 id="h-params">Params</h2>
<div id="params"></div>
<div class="toolbar"><button id="play" type="button" aria-pressed="false">Play</button>
<button id="reset" type="button">Reset</button> <span id="timing"></span></div>
</section>
<section id="curves" aria-labelledby="h-curves">
<h2 id="h-curves">Against one param</h2>
<div class="toolbar"><label>sweep <select id="x-param"></select></label>
<label>show <select id="quantity"><option value="time">time to target</option><option value="step">step time</option><option value="energy">energy to target</option></select></label></div>
<canvas id="curve" width="760" height="380" role="img" aria-label="each scheme against the swept param"></canvas>
<ul class="legend" id="legend"></ul>
<h3>Break-evens</h3>
<ul id="be-list" aria-live="polite"></ul>
</section>
</div>
<section id="steps" aria-labelledby="h-steps">
<h2 id="h-steps">Step time by component</h2>
<ul class="legend" id="bars-legend"></ul>
<div id="bars"></div>
</section>
<div class="grid2">
<section id="map" aria-labelledby="h-map">
<h2 id="h-map">Winner map</h2>
<div class="toolbar"><label>x <select id="map-x"></select></label><label>y <select id="map-y"></select></label></div>
<canvas id="winner" width="400" height="400" role="img" aria-label="the scheme that reaches the target first at each point"></canvas>
<p id="map-caption" class="note"></p>
<ul class="legend" id="map-legend"></ul>
</section>
<section id="modules" aria-labelledby="h-modules">
<h2 id="h-modules">Module stages</h2>
<div id="stages"></div>
</section>
</div>
<section id="tables" aria-labelledby="h-table">
<h2 id="h-table">Solve table</h2>
<table id="solve-table"><thead><tr><th scope="col">scheme</th><th scope="col">step time</th><th scope="col">binds</th>
<th scope="col">time to target</th><th scope="col">energy to target</th><th scope="col">energy per step</th>
<th scope="col">payload</th><th scope="col">WAN bytes</th></tr></thead><tbody id="solve-body"></tbody></table>
</section>
<section id="equations" aria-labelledby="h-eq">
<h2 id="h-eq">Equations</h2>
<p id="subst-row"><label><input type="checkbox" id="subst"> show the current values in place of the params (base units)</label></p>
@EQUATIONS@
</section>
@SENSITIVITY@@SIMVIEW@</main>
<script type="application/json" id="ct-data">@DATA@</script>
<script>
@SCRIPT@
</script>
@SIMDATA@</body>
</html>
"""


def _sim_parts(sim) -> tuple[str, str]:
    """The recorded simulation's section and its data and script (both empty without a recording)."""
    if sim is None:
        return "", ""
    script = _asset("simview.js")
    if "</script" in script.lower() or "<!--" in script:
        raise ValueError("the simulation view's script would close the page's script")
    data = f'<script type="application/json" id="ct-sim">{script_json(sim_model(sim))}</script>\n<script>\n{script}\n</script>\n'
    return SECTION, data


def explorer_html(solution, sim: dict | None = None, sensitivity: str = "") -> str:
    """The whole page, self-contained; `sim`: a recorded run (`ctdsl.simulate.trace.record`) to animate;
    `sensitivity`: a static section of HTML (`ctdsl.report.sensitivity_out.sensitivity_html`), already encoded."""
    data, forms = page_model(solution)
    script = _asset("explorer.js").replace("/*@FORMS@*/", forms)
    if "</script" in script.lower() or "<!--" in script:
        raise ValueError("the printed forms would close the page's script")  # cannot happen: they are numbers and names a0.., t0..
    parts = {
        "@CSP@": _CSP,
        "@CSS@": _asset("explorer.css"),
        "@TITLE@": data["title"],
        "@EQUATIONS@": _equations(solution),
        "@DATA@": script_json(data),
        "@SCRIPT@": script,
        "@SENSITIVITY@": sensitivity + "\n" if sensitivity else "",
    }
    parts["@SIMVIEW@"], parts["@SIMDATA@"] = _sim_parts(sim)
    if sim is not None:
        parts["@CSS@"] += "\n" + _asset("simview.css")
    # one pass, so that nothing inserted is read as a marker
    return _MARKER.sub(lambda m: parts[m.group(0)], _TEMPLATE)
