"""The explorer's views of every kind of answer, in a real browser, against `ctdsl solve`'s JSON.

Cost and CO2e to target and their parts, the break-evens on cost, compute utilisation and MFU,
the targets' roots, memory per GPU and whether it fits (with the checker's CT425), energy per
step by part, bytes per worker and per class of link, the job's size, the spec's opening comment
and diagnostics. The expected numbers are the solver's (`ctdsl.load(path, sets).solve().to_json()`,
what `ctdsl solve --set ... --format json` prints), at the defaults and at random points typed
into the page's boxes (fixed seed); they agree to 1e-9 relative.

Skips, with the reason, where Playwright or Chromium is missing.
"""

from __future__ import annotations

import math
import random
from collections import defaultdict
from pathlib import Path

import pytest

import ctdsl
from explorekit import launch, open_page, why_no_browser
from test_explore_browser import BE, close, compare_breakevens, random_point, type_point

ROOT = Path(__file__).resolve().parents[1]
CODESIGN = ROOT / "examples" / "20_codesign_study.ct"
TARGETS = ROOT / "examples" / "19_utilisation_targets.ct"
FLAGSHIP = ROOT / "specs" / "llama70b_wan.ct"
BIG = ROOT / "specs" / "llama405b_3dc.ct"

_why = why_no_browser()
pytestmark = pytest.mark.skipif(_why is not None, reason=_why or "")


@pytest.fixture(scope="module")
def browser():
    pw, b = launch()
    yield b
    b.close()
    pw.stop()


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    d = tmp_path_factory.mktemp("views")
    out = {}
    for spec in (CODESIGN, TARGETS, FLAGSHIP, BIG):
        out[spec] = d / (spec.stem + ".html")
        ctdsl.load(spec).explore(out[spec])
    return out


READ = """() => {
  const num = (s) => (s === undefined ? null : Number(s));
  const rows = (sec) => {
    const out = {};
    for (const tr of document.querySelectorAll('#' + sec + ' tbody tr')) {
      const r = {};
      for (const td of tr.querySelectorAll('td')) r[td.dataset.key] = td.dataset.value === undefined || td.dataset.key === 'fits' ? (td.dataset.value || td.textContent) : num(td.dataset.value);
      out[tr.dataset.scheme || (tr.dataset.model + '@' + tr.dataset.dc)] = r;
    }
    return out;
  };
  const targets = [];
  for (const tr of document.querySelectorAll('#targets tr[data-q]'))
    for (const td of tr.querySelectorAll('td')) if (td.dataset.roots !== undefined)
      targets.push({ q: tr.dataset.q, target: Number(tr.dataset.target), over: tr.dataset.over, scheme: td.dataset.key,
                     roots: JSON.parse(td.dataset.roots), rises: JSON.parse(td.dataset.rises || '[]') });
  const be = @BE@;
  const diags = Array.from(document.querySelectorAll('#memory pre.diag')).filter((p) => !p.hidden).map((p) => p.textContent);
  return { money: rows('money'), util: rows('targets'), job: rows('job'), memory: rows('memory'), energy: rows('energy'),
           bytes: rows('bytes'), targets, be, diags };
}""".replace("@BE@", BE)

def compare(got: dict, want: dict, where: str) -> list[str]:
    bad = []

    def check(what, a, b):
        if not close(a, b):
            bad.append(f"{where}: {what}: page {a!r}, solve {b!r}")

    for s in want["schemes"]:
        n = s["name"]
        if "cost_to_target" in s or "co2e_to_target" in s:
            m = got["money"][n]
            for key in ("cost", "co2e"):
                if f"{key}_to_target" in s:
                    check(f"{n} {key}", m[key], s[f"{key}_to_target"])
                    for part, v in s[f"{key}_parts"].items():
                        check(f"{n} {key} {part}", m[f"{key}:{part}"], v)
        u = got["util"][n]
        check(f"{n} utilisation", u["utilisation"], s["step"]["utilisation"])
        check(f"{n} mfu", u["mfu"], s["step"]["mfu"])
        for k in ("gpus", "nodes", "sites"):
            check(f"{n} job {k}", got["job"][n][k], s["job"][k])
        e = got["energy"][n]
        for part, v in s["energy_per_step"].items():
            check(f"{n} energy {part}", e[part], v)
        check(f"{n} energy per step", e["eps"], math.fsum(s["energy_per_step"].values()))
        b = got["bytes"][n]
        for k in ("dense", "payload", "wire", "wan"):
            check(f"{n} bytes {k}", b[k], s["bytes"][k])
        kinds = defaultdict(list)
        for link in s["links"]:
            kinds[link["kind"]].append(link["bytes_per_sync"])
        for kind, vs in kinds.items():
            check(f"{n} bytes on {kind}", b[f"kind:{kind}"], math.fsum(vs))
    for m in want["memory"]:
        row = got["memory"][f"{m['model']}@{m['dc']}"]
        for part, v in m["parts"].items():
            check(f"memory {m['dc']} {part}", row[part], v)
        check(f"memory {m['dc']} total", row["total"], m["total"])
        check(f"memory {m['dc']} capacity", row["capacity"], m["capacity"])
        if row["fits"] != str(m["fits"]).lower():
            bad.append(f"{where}: memory {m['dc']} fits: page {row['fits']}, solve {m['fits']}")
    page_targets = {(t["q"], t["target"], t["scheme"]): t for t in got["targets"]}
    keys = {"utilisation": "utilisation", "step_time": "step", "time": "time", "energy": "energy", "cost": "cost", "co2e": "co2e"}
    for t in want["targets"]:
        g = page_targets[(keys[t["quantity"]], t["target"], t["scheme"])]
        roots = [r["value"] for r in t["roots"]]
        if len(g["roots"]) != len(roots) or not all(close(a, b) for a, b in zip(g["roots"], roots)):
            bad.append(f"{where}: target {t['quantity']} = {t['target']} of {t['scheme']}: page {g['roots']}, solve {roots}")
        elif g["rises"] != [r["above_target_above"] for r in t["roots"]]:
            bad.append(f"{where}: target {t['quantity']} = {t['target']} of {t['scheme']}: rises {g['rises']}")
    bad += compare_breakevens(got["be"], want["breakevens"], where)
    return bad


def sets_of(params: dict, point: dict[str, float]) -> dict[str, str]:
    """--set values: in the declared unit, or in the base unit where the param declares none."""
    out = {}
    for n, v in point.items():
        unit = params[n]["declared_unit"] or (params[n]["unit"] if params[n]["unit"] != "1" else "")
        out[n] = f"{v!r} {unit}" if unit else repr(v)
    return out


def _points(browser, pages, spec, n, seed):
    o = open_page(browser, pages[spec])
    want = ctdsl.load(spec).solve().to_json()
    bad = compare(o.page.evaluate(READ), want, "defaults")
    params = want["params"]
    rng = random.Random(seed)
    for k in range(n):
        point = random_point(rng, params)
        type_point(o.page, point)
        bad += compare(o.page.evaluate(READ), ctdsl.load(spec, sets_of(params, point)).solve().to_json(), f"point {k} {point}")
    assert o.problems == []
    assert o.requests == [pages[spec].resolve().as_uri()]
    o.page.close()
    return bad


def test_cost_and_co2e_and_their_breakevens_match_solve(browser, pages):
    """examples/20_codesign_study.ct asks three break-evens on cost: the page shows all three."""
    assert _points(browser, pages, CODESIGN, 3, 29001) == []


def test_utilisation_and_targets_match_solve(browser, pages):
    """examples/19_utilisation_targets.ct: 45 targets (5 levels x 9 schemes) over wan_bw."""
    assert _points(browser, pages, TARGETS, 3, 29002) == []


def test_memory_energy_bytes_and_job_match_solve(browser, pages):
    assert _points(browser, pages, FLAGSHIP, 3, 29003) == []


def test_job_size_of_the_405b_spec_and_no_memory_warning(browser, pages):
    o = open_page(browser, pages[BIG])
    got = o.page.evaluate(READ)
    assert {n: r["gpus"] for n, r in got["job"].items()} == {"adamw": 102400, "fp8": 102400, "band": 102400, "diloco": 102400}
    assert compare(got, ctdsl.load(BIG).solve().to_json(), "defaults") == []
    assert got["diags"] == []
    o.page.close()


def test_opening_comment_diagnostics_and_the_memory_warning(browser, pages):
    """examples/19's 405B model does not fit an 80 GB H100: the page shows CT425 as solve prints it,
    in the diagnostics and at the memory table; its opening comment is the page's introduction."""
    o = open_page(browser, pages[TARGETS])
    page = o.page
    first = TARGETS.read_text(encoding="utf-8").splitlines()[0].lstrip("# ")
    assert page.locator("#intro").inner_text().startswith(first)
    diags = page.locator("#diagnostics pre.diag").all_inner_texts()
    assert len(diags) == 2 and all("CT425 [warning] a GPU of dc" in d for d in diags)
    shown = page.evaluate(READ)["diags"]
    # the same words as the solver's warning (its first line, after the place)
    heads = sorted(d.splitlines()[0].split(": ", 1)[1] for d in diags)
    assert sorted(shown) == heads
    # a wan_bw far larger changes no memory: still two; the table says by how much
    assert page.locator("#memory td[data-key=fits].bad").count() == 2
    o.page.close()


def test_spec_text_in_the_intro_and_diagnostics_is_encoded(browser, tmp_path):
    hostile = '# a </p><script>window.pwned = 1</script> & <b>bold</b>\n' + FLAGSHIP.read_text(encoding="utf-8")
    spec = tmp_path / "hostile.ct"
    spec.write_text(hostile, encoding="utf-8")
    out = tmp_path / "hostile.html"
    ctdsl.load(spec).explore(out)
    o = open_page(browser, out)
    assert o.page.locator("#intro").inner_text().startswith("a </p><script>window.pwned = 1</script> & <b>bold</b>")
    assert o.page.evaluate("() => window.pwned") is None
    assert o.problems == []
    o.page.close()


SCENARIOS = ROOT / "examples" / "21_scenarios.ct"


def _step(page, scheme):
    return page.evaluate(f"() => Number(document.querySelector('#solve-body tr[data-scheme=\"{scheme}\"] td[data-key=step]').dataset.value)")


def _predicted(page):
    return page.evaluate("() => Array.from(document.querySelectorAll('#scenarios tr[data-obs] td[data-key=predicted]')).map((td) => Number(td.dataset.value))")


def test_scenarios_are_presets_and_observations_are_drawn(browser, tmp_path):
    """examples/21_scenarios.ct: four scenarios (tp 1, 2, 4, 8 with dp 64, 32, 16, 8), a measured step time in each
    and eff fitted on tp8. A preset gives `solve --scenario`'s numbers; the observed table's model column is solve's in
    each scenario, and with the fit held, the Observed table's predictions (`Study.observe`); the measured points
    are drawn over the step-time curve against tp, at tp = 1, 2, 4, 8, the one of the scenario shown filled."""
    out = tmp_path / "scenarios.html"
    study = ctdsl.load(SCENARIOS)
    study.explore(out)
    o = open_page(browser, out)
    page = o.page
    names = ["tp1", "tp2", "tp4", "tp8"]
    in_scenario = {n: ctdsl.load(SCENARIOS, scenario=n).solve().to_json()["schemes"][0]["step"]["seconds"] for n in names}
    assert all(close(a, in_scenario[n]) for a, n in zip(_predicted(page), names)), _predicted(page)
    page.click("button[data-preset=tp2]")
    assert close(_step(page, "dp_sync"), in_scenario["tp2"])
    assert page.evaluate("() => window.ctdslExplorer.values()")[1:3] == [2, 32]
    # the measured points over the step time against tp: at 1, 2, 4, 8; only tp2's where the other params are its own
    page.select_option("#x-param", label="tp")
    drawn = page.evaluate("() => window.ctdslExplorer.observed()")
    assert [(d["x"], d["value"], d["here"]) for d in drawn] == [(1, 3.5665, False), (2, 3.9752, True), (4, 4.6344, False), (8, 5.178, False)]
    colour = page.evaluate("""(d) => { const c = document.getElementById('curve'), r = window.devicePixelRatio || 1;
      const px = c.getContext('2d').getImageData(Math.round(d.px * r), Math.round(d.py * r), 1, 1).data; return [px[0], px[1], px[2]]; }""", drawn[1])
    want = page.evaluate("() => { const s = document.querySelector('#legend .swatch').style.background; return s; }")
    assert want == f"rgb({colour[0]}, {colour[1]}, {colour[2]})"
    # hold the fit: the start values with eff fitted, as solve's Observed table
    observed = study.observe()
    page.check("#hold-fit")
    page.click("button[data-preset='']")
    assert close(page.evaluate("() => window.ctdslExplorer.values()")[0], observed.fit.value)
    got = _predicted(page)
    assert all(close(a, r.predicted) for a, r in zip(got, observed.rows, strict=True)), (got, [r.predicted for r in observed.rows])
    errors = page.evaluate("() => Array.from(document.querySelectorAll('#scenarios tr[data-obs] td[data-key=error]')).map((td) => Number(td.dataset.value))")
    assert all(abs(a - r.error) <= 1e-9 for a, r in zip(errors, observed.rows)), (errors, [r.error for r in observed.rows])
    assert o.problems == []
    page.close()


def test_breakeven_against_a_second_param_matches_solve(browser, pages):
    """The flagship's first break-even (band_switch vs adamw over wan_bw) against eff: at 40 values of eff the page's
    roots; at three of them, solve's with --set eff=... (the other params at their defaults)."""
    o = open_page(browser, pages[FLAGSHIP])
    page = o.page
    page.select_option("#be2-q", label="eff")
    got = page.evaluate("() => { window.ctdslExplorer.be2Now(); return window.ctdslExplorer.be2(); }")
    assert got["done"] and got["b"] == 0 and len(got["xs"]) == 40
    want0 = ctdsl.load(FLAGSHIP).solve().to_json()["breakevens"][0]
    assert (want0["x"], want0["y"], want0["over"]) == ("band_switch", "adamw", "wan_bw")
    bad = []
    for k in (0, 17, 39):
        eff = got["xs"][k]
        want = [r["value"] for r in ctdsl.load(FLAGSHIP, {"eff": repr(eff)}).solve().to_json()["breakevens"][0]["roots"]]
        if len(want) != len(got["roots"][k]) or not all(close(a, b) for a, b in zip(got["roots"][k], want)):
            bad.append((eff, got["roots"][k], want))
    assert bad == []
    # the roots move with eff (the chart is not flat) and a point was drawn for each
    assert len({round(r[0], 3) for r in got["roots"] if r}) > 10
    assert o.problems == []
    page.close()
