"""Sensitivity (ctdsl.symbolic.sensitivity, ctdsl solve --sensitivity / --tornado): against independent figures.

- every partial of the flagship's step times, times and energies to target with
  respect to wan_bw, budget and eff, against central finite differences of the
  compiled numpy forms (ctdsl.numeric, lambdify: not the sympy diff under test),
  relative step 1e-6, agreement 1e-5 relative;
- the break-evens' implicit derivatives against finite differences of
  break-evens solved again, through the whole pipeline, at x (1 +/- 1e-6);
- one case derived by hand, numbers written out;
- the tornado's bars against `ctdsl solve --set P=LO` / `P=HI`.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from typer.testing import CliRunner

import ctdsl
from ctdsl import units as U
from ctdsl.cli import app
from ctdsl.numeric import CompiledForms, evaluate
from ctdsl.symbolic.sensitivity import sensitivity
from ctdsl.symbolic.tornado import UnknownQuantity, tornado
from solvekit import ROOT, solve_text
from backstop import HANG

FLAGSHIP = ROOT / "tests" / "data" / "llama70b_workers.ct"  # the study with single-GPU workers
H = 1e-6  # relative step of the finite differences
AGREE = 1e-5  # relative agreement asked of them
runner = CliRunner()

QUANTITIES = {"step_time": "step", "time_to_target": "time_to_target", "energy_to_target": "energy_to_target"}


@pytest.fixture(scope="module")
def flagship():
    sol = ctdsl.load(FLAGSHIP).solve()
    return sol, sensitivity(sol)


def _close(fd: float, exact: float, y: float, x: float) -> bool:
    """Agreement to AGREE relative; a derivative that is 0 must be 0 to rounding (measured against y / x)."""
    return abs(fd - exact) <= AGREE * abs(exact) + 1e-12 * abs(y / x)


@pytest.mark.parametrize("param", ["wan_bw", "budget", "eff"])
def test_partials_match_central_differences_of_the_compiled_forms(flagship, param):
    sol, sens = flagship
    forms = CompiledForms(sol)
    x = sol.spec.params[param].default
    ch = evaluate(forms, {param: np.array([x * (1 - H), x * (1 + H)])})
    checked = 0
    for r in sol.schemes.values():
        for attr, key in QUANTITIES.items():
            q = sens.get(f"{r.name}.{attr}")
            (p,) = [p for p in q.partials if p.param == param]
            lo, hi = ch.values[(r.name, key)]
            fd = (hi - lo) / (2 * x * H)
            assert _close(fd, p.derivative.value, q.value.value, x), (q.name, fd, p.derivative.value)
            if q.value.value:
                assert p.elasticity.value == pytest.approx(x * fd / q.value.value, rel=AGREE, abs=1e-9)
            assert p.derivative.dim == q.value.dim / sol.spec.params[param].dim  # dy/dx carries dim(y) / dim(x)
            assert p.elasticity.dim == U.ONE
            checked += 1
    assert checked == 3 * len(sol.schemes)


def _roots(overrides):
    sol = ctdsl.load(FLAGSHIP, overrides).solve()
    return {(b.x, b.y): b.roots[0].value for b in sol.breakevens if b.roots}


@pytest.mark.parametrize("param,unit", [("budget", "FLOP/s"), ("eff", "")])
def test_breakeven_implicit_derivative_matches_resolved_breakevens(flagship, param, unit):
    sol, sens = flagship
    x = sol.spec.params[param].default
    lo = _roots({param: f"{x * (1 - H)!r} {unit}".strip()})
    hi = _roots({param: f"{x * (1 + H)!r} {unit}".strip()})
    for pair in (("band_switch", "adamw"), ("band_module", "adamw")):
        q = sens.get(f"breakeven.{pair[0]}.{pair[1]}.wan_bw")
        (p,) = [p for p in q.partials if p.param == param]
        fd = (hi[pair] - lo[pair]) / (2 * x * H)
        assert _close(fd, p.derivative.value, q.value.value, x), (pair, fd, p.derivative.value)
        assert p.derivative.dim == U.RATE / sol.spec.params[param].dim
    # the param solved for has no partial; a break-even never in range has none, and says so
    assert all(p.param != "wan_bw" for p in sens.get("breakeven.band_switch.adamw.wan_bw").partials)
    never = sens.get("breakeven.band_ring.adamw.wan_bw")
    assert never.partials == () and never.value is None and "never in range" in never.note


HAND = """
param b = 5 GB/s in 1 GB/s .. 100 GB/s log 20
param eff = 0.5 in 0.25 .. 1
model m { params = 1e9; bytes_per_value = 2 B; tokens = 1000 }
device d { peak = 100 TFLOP/s; efficiency = eff }
link fast { bandwidth = 10 GB/s; latency = 0 s }
link wan { bandwidth = b; latency = 0 s }
switch s { sum = false }
dc a { workers = 1; device = d; link = fast; switch = s }
dc c { workers = 1; device = d; link = fast; switch = s }
wan a <-> c = wan
scheme x { payload = dense; collective = hier_allreduce; steps = 100 }
"""


def test_hand_derived_elasticity_of_time_to_target(tmp_path):
    # T = steps x (compute + D/b), one worker per dc, the WAN binding the sync:
    #   compute = 6 P tokens / (peak eff) = 6 x 1e9 x 1000 / (100e12 x 0.5) = 0.12 s
    #   sync: reduce-scatter then all-gather of the 2e9 B update across the two dcs, each
    #     sending 1e9 B over the WAN at b = 5e9 B/s: D/b = 2e9 / 5e9 = 0.4 s (the 10 GB/s port
    #     takes 0.1 s per half, less than the WAN's 0.2 s: the WAN is the active branch)
    #   T = 100 x (0.12 + 0.4) = 52 s
    #   d ln T / d ln b = -(D/b) / (compute + D/b) = -0.4 / 0.52 = -0.769230769...
    #   dT/db = -steps D / b^2 = -100 x 2e9 / 25e18 = -8e-9 s^2/B
    #   d ln T / d ln eff = -compute / (compute + D/b) = -0.12 / 0.52 = -0.230769230...
    (tmp_path / "hand.ct").write_text(HAND, encoding="utf-8")
    q = ctdsl.load(tmp_path / "hand.ct").sensitivity().get("x.time_to_target")  # through the Python API
    by = {p.param: p for p in q.partials}
    assert q.value.value == pytest.approx(52.0, rel=1e-12)
    assert by["b"].elasticity.value == pytest.approx(-0.4 / 0.52, rel=1e-12)
    assert by["b"].derivative.value == pytest.approx(-8e-9, rel=1e-12)
    assert by["b"].derivative.unit == "s^2/B"
    assert by["b"].per_unit() == "-8 s per GB/s"  # -8e-9 s^2/B x 1e9 (B/s per GB/s)
    assert by["eff"].elasticity.value == pytest.approx(-0.12 / 0.52, rel=1e-12)
    assert [p.param for p in q.partials] == ["b", "eff"]  # largest |elasticity| first
    assert q.kinks == ()


def test_a_kink_is_named_with_both_branches(tmp_path):
    # at b = 10 GB/s the WAN's half (1e9 / b = 0.1 s) ties with the port's (1e9 / 1e10 = 0.1 s):
    # the WAN branch has d/db = -1e9 / b^2 = -1e-11, the port's 0
    sol = solve_text(tmp_path, HAND, overrides={"b": "10 GB/s"})
    q = sensitivity(sol).get("x.step_time")
    assert len(q.kinks) == 1 and "max" in q.kinks[0]
    k = q.kinks[0]
    assert "d/d b:" in k and "-1e-11 on the" in k and ("0 on the active branch" in k or "0 on the other" in k), k


def _solve_json(*sets):
    args = ["solve", str(FLAGSHIP), "--format", "json"]
    for s in sets:
        args += ["--set", s]
    r = runner.invoke(app, args)
    assert r.exit_code == 0, r.stderr
    return json.loads(r.stdout)


def _set(p, v: float) -> str:
    unit = "" if p.dim.dimensionless else p.dim.symbol()
    return f"{p.name}={v!r} {unit}".strip()


def test_tornado_bars_match_solve_with_set(flagship, tmp_path):
    sol, _ = flagship
    t = tornado(sol, "band_module.time_to_target")
    # widest first; wan_load 0 .. 0.95 moves the time 0.58 -> 1.2 Ms on a WAN shared fairly (the
    # sync's flows slowed 1 / (1 - rho)), past eff 0.2 .. 0.6 (0.78 -> 0.52 Ms)
    assert [b.param for b in t.bars] == ["wan_bw", "budget", "wan_load", "eff"]
    for b in t.bars:
        p = sol.spec.params[b.param]
        for v, got in ((b.lo, b.at_lo), (b.hi, b.at_hi)):
            data = _solve_json(_set(p, v))
            want = next(s for s in data["schemes"] if s["name"] == "band_module")["time_to_target"]
            assert got == pytest.approx(want, rel=1e-12), (b.param, v)
    # a break-even's bars: solved again at each end; none in range is nan
    t = tornado(sol, "breakeven.band_switch.adamw.wan_bw")
    assert "wan_bw" in t.skipped
    eff = next(b for b in t.bars if b.param == "eff")
    for v, got in ((eff.lo, eff.at_lo), (eff.hi, eff.at_hi)):
        be = next(x for x in _solve_json(_set(sol.spec.params["eff"], v))["breakevens"] if x["x"] == "band_switch")
        if be["never"]:
            assert math.isnan(got)
        else:
            assert got == pytest.approx(be["roots"][0]["value"], rel=1e-9)
    with pytest.raises(UnknownQuantity):
        tornado(sol, "nope.time_to_target")


def test_cli_sensitivity_and_tornado(tmp_path):
    out = tmp_path / "t.png"
    r = runner.invoke(app, ["solve", str(FLAGSHIP), "--format", "json", "--sensitivity", "--tornado", str(out), "band_module.time_to_target"])
    assert r.exit_code == 0, r.stderr
    data = json.loads(r.stdout)
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    names = [q["name"] for q in data["sensitivity"]["quantities"]]
    assert "adamw.time_to_target" in names and "breakeven.band_ring.adamw.wan_bw" in names
    assert [b["param"] for b in data["tornado"]["bars"]][0] == "wan_bw"
    again = runner.invoke(app, ["solve", str(FLAGSHIP), "--format", "json", "--sensitivity"])
    assert json.loads(again.stdout)["sensitivity"] == data["sensitivity"]  # deterministic
    plain = _solve_json()
    assert "sensitivity" not in plain and "tornado" not in plain  # only when asked
    r = runner.invoke(app, ["solve", str(FLAGSHIP), "--sensitivity"])
    assert r.exit_code == 0 and "Sensitivity of time to target of adamw" in r.stdout and "elasticity" in r.stdout
    r = runner.invoke(app, ["solve", str(FLAGSHIP), "--tornado", str(out), "adamw.time"])
    assert r.exit_code == 2 and "no quantity 'adamw.time'" in r.stderr
    r = runner.invoke(app, ["solve", str(FLAGSHIP), "--sensitivity", "--format", "csv"])
    assert r.exit_code == 2
    r = runner.invoke(app, ["solve", str(FLAGSHIP), "--sensitivity", "--explain", "adamw"])
    assert r.exit_code == 2 and "--explain" in r.stderr
    r = runner.invoke(app, ["export", "latex", str(FLAGSHIP), "--sensitivity"])
    assert r.exit_code == 0 and r"\label{tab:ctdsl:sensitivity}" in r.stdout


def test_sensitivity_json_keys_are_documented(tmp_path):
    import re

    data = _solve_json_sens(tmp_path)
    doc = (ROOT / "docs" / "solve-json.md").read_text() + (ROOT / "docs" / "sensitivity.md").read_text()
    documented = set(re.findall(r"`([a-z_]+)`", doc))

    def keys(node):
        if isinstance(node, dict):
            for k, v in node.items():
                yield k
                yield from keys(v)
        elif isinstance(node, list) and node:
            yield from keys(node[0])

    missing = sorted(set(keys({"sensitivity": data["sensitivity"], "tornado": data["tornado"]})) - documented)
    assert not missing, missing


def _solve_json_sens(tmp_path):
    out = str(tmp_path / "t.svg")
    r = runner.invoke(app, ["solve", str(FLAGSHIP), "--format", "json", "--sensitivity", "--tornado", out, "adamw.step_time"])
    return json.loads(r.stdout) if r.exit_code == 0 else pytest.fail(r.stderr)


DOC = (ROOT / "docs" / "sensitivity.md").read_text(encoding="utf-8")


def _blocks(lang: str) -> list[str]:
    import re

    return re.findall(rf"^```{lang}\n(.*?)^```", DOC, flags=re.M | re.S)


def test_the_docs_example_prints_what_the_page_shows(tmp_path, monkeypatch):
    (spec,) = _blocks("ct")
    (tmp_path / "two_sites.ct").write_text(spec, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    for command in _blocks("sh"):
        import shlex

        words = shlex.split(command.strip())
        assert words[0] == "ctdsl"
        r = runner.invoke(app, words[1:])
        assert r.exit_code == 0, r.stderr
        if "--sensitivity" in words:
            for shown in _blocks("text"):
                assert shown.strip() in r.stdout, shown
        else:
            assert (tmp_path / "tornado.png").read_bytes()[:4] == b"\x89PNG"


def test_the_docs_break_even_by_hand(tmp_path):
    # b* = 1e11 eff / 18 (derived on the page): db*/deff = 1e11 / 18 B/s, elasticity 1
    (spec,) = _blocks("ct")
    sol = solve_text(tmp_path, spec)
    q = sensitivity(sol).get("breakeven.q2.dense.b")
    (p,) = q.partials
    assert q.value.value == pytest.approx(1e11 * 0.5 / 18, rel=1e-12)
    assert p.param == "eff" and p.derivative.value == pytest.approx(1e11 / 18, rel=1e-12)
    assert p.elasticity.value == pytest.approx(1.0, rel=1e-12)


def test_implicit_derivative_of_a_numeric_root(tmp_path):
    # the WAN's latency log2(b / 1 GB/s) x 10 ms: sympy cannot solve for b, the root is found by Brent's
    # method; its partial in eff comes from the implicit function theorem, checked against the root
    # solved again at eff (1 +/- 1e-6) through the whole pipeline
    (spec,) = _blocks("ct")
    spec = spec.replace("link wan { bandwidth = b; latency = 0 s }", "link wan { bandwidth = b; latency = log2(b / (1 GB/s)) * 10 ms }")
    sol = solve_text(tmp_path, spec)
    (be,) = sol.breakevens
    (root,) = be.roots
    assert root.numeric
    (p,) = sensitivity(sol).get("breakeven.q2.dense.b").partials
    ends = []
    for v in (0.5 * (1 - H), 0.5 * (1 + H)):
        (b,) = solve_text(tmp_path, spec, overrides={"eff": repr(v)}).breakevens
        ends.append(b.roots[0].value)
    fd = (ends[1] - ends[0]) / (2 * 0.5 * H)
    assert fd == pytest.approx(p.derivative.value, rel=AGREE)


def test_report_has_a_sensitivity_section(tmp_path):
    out = tmp_path / "r.md"
    r = runner.invoke(app, ["report", str(FLAGSHIP), "--sensitivity", "-o", str(out)])
    assert r.exit_code == 0, r.stderr
    text = out.read_text(encoding="utf-8")
    section = text[text.index("## Sensitivity") :]
    assert "Sensitivity of break-even of band_module vs adamw over wan_bw" in section
    assert "never in range" in section  # band_ring vs adamw: stated, no derivative
    # tornadoes of the baseline's time to target and of the two break-even roots, as embedded images
    assert section.count("![tornado chart of") == 3, section[:2000]


def _elasticities(tex: str, name: str) -> list[str]:
    import re

    row = next(l for l in tex.splitlines() if l.startswith(r"\texttt{" + name.replace("_", r"\_\allowbreak{}")))
    return [c.strip() for c in row.removesuffix(r" \\").split(" & ")[1:]]  # S columns: the bare numbers siunitx aligns


def test_latex_table_of_elasticities(flagship, tmp_path):
    import shutil
    import subprocess

    sol, sens = flagship
    r = runner.invoke(app, ["export", "latex", str(FLAGSHIP), "--sensitivity", "--standalone", "--columns", "2", "-o", str(tmp_path / "s.tex")])
    assert r.exit_code == 0, r.stderr
    tex = (tmp_path / "s.tex").read_text(encoding="utf-8")
    # columns in the spec's order: wan_bw, budget, eff, wan_load; four figures of each elasticity
    by = {p.param: p.elasticity.value for p in sens.get("band_module.time_to_target").partials}
    assert _elasticities(tex, "band_module.time_to_target") == [f"{by[p]:.4g}" for p in ("wan_bw", "budget", "eff", "wan_load")]
    pdflatex = shutil.which("pdflatex")
    kpse = shutil.which("kpsewhich")
    if pdflatex is None or kpse is None or subprocess.run([kpse, "siunitx.sty"], capture_output=True).returncode != 0:
        pytest.skip("pdflatex with siunitx is not installed")
    proc = subprocess.run([pdflatex, "-interaction=nonstopmode", "-halt-on-error", "-no-shell-escape", "s.tex"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=HANG)  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert "Overfull" not in (tmp_path / "s.log").read_text(encoding="latin-1")


def test_plain_solve_does_not_load_the_sensitivity_code():
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from typer.testing import CliRunner\n"
        "from ctdsl.cli import app\n"
        f"r = CliRunner().invoke(app, ['solve', {str(FLAGSHIP)!r}, '--format', 'json'])\n"
        "assert r.exit_code == 0, r.stdout\n"
        "print(sorted(m for m in ('ctdsl.symbolic.sensitivity', 'ctdsl.symbolic.tornado', 'ctdsl.report.sensitivity_out') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=HANG)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_explorer_shows_the_elasticities_when_asked(flagship, tmp_path):
    sol, sens = flagship
    page = tmp_path / "e.html"
    r = runner.invoke(app, ["explore", str(FLAGSHIP), "--sensitivity", "-o", str(page)])
    assert r.exit_code == 0, r.stderr
    html = page.read_text(encoding="utf-8")
    section = html[html.index('<section id="sensitivity"') :]
    section = section[: section.index("</section>")]
    el = next(p for p in sens.get("band_module.time_to_target").partials if p.param == "budget").elasticity.value
    assert "<td>band_module.time_to_target</td>" in section and f"<td>{el:.4g}</td>" in section
    plain = ctdsl.load(FLAGSHIP).explore()
    assert 'id="sensitivity"' not in plain
