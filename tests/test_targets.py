"""Compute utilisation, MFU, targets and bytes per step, against figures derived by hand.

The hand spec (HAND below): one worker in each of two dcs, a WAN of bandwidth b
and zero latency, the dc links a million times faster, a ring all-reduce of the
dense update every H = 4 steps, no overlap.

  D = 2 B x 1e9 params = 2e9 B; a ring of n = 2 sends 2 (n - 1) / n D = D per
  worker per sync, all of it over the WAN: sync = D / b = 2 s at b = 1 GB/s
  compute c = 6 GFLOP x 1000 tokens / (100 TFLOP/s x 0.5) = 6e12 / 5e13 = 0.12 s
  step T = c + (D / b) / H = 0.12 + 0.5 = 0.62 s at b = 1 GB/s

  CU = c / T; CU = u  <=>  b* = D / (H c (1/u - 1))
  u = 0.95: b* = 2e9 / (4 x 0.12 x (1/0.95 - 1)) = 2e9 x 19 / 0.48 = 7.916666...e10 B/s (237500000000/3)
  MFU = 6e12 / (0.62 x 100e12) = 0.0967741935... (= efficiency x CU with one kind of device)
  bytes per step = per sync / H = 2e9 / 4 = 5e8 B

With `overlap = true` the step is max(c, (D / b) / H), so CU = c / max(c, D / (H b)) and
CU = u < 1 <=> D / (H b) = c / u <=> b* = u D / (H c): 0.95 x 2e9 / 0.48 = 3.958333...e9 B/s.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import sympy as sp

import ctdsl
from ctdsl.report.paper import paper_latex
from ctdsl.report.tables import all_tables

ROOT = Path(__file__).resolve().parent.parent

HAND = """\
param wan_bw = 1 GB/s in 0.01 GB/s .. 1000 GB/s log 41
model m { params = 1000000000; bytes_per_value = 2 B; tokens = 1000; flops_per_token = 6 GFLOP }
device g { peak = 100 TFLOP/s; efficiency = 0.5 }
link fast { bandwidth = 1000000 GB/s; latency = 0 s }
link wan { bandwidth = wan_bw; latency = 0 s }
switch sw { sum = true; loopback = true; ops = [add] }
dc east { workers = 1; device = g; link = fast; switch = sw }
dc west : east {}
wan east <-> west = wan
scheme dense { payload = dense; collective = ring_allreduce; period = 4 OVERLAP }
TARGETS
"""

D, H, C = 2e9, 4, 0.12
FIVE = [0.5, 0.8, 0.9, 0.95, 0.99]


def _spec(tmp_path, targets="target utilisation = [0.5, 0.8, 0.9, 0.95, 0.99] over wan_bw", overlap=False, name="hand.ct"):
    path = tmp_path / name
    path.write_text(HAND.replace(" OVERLAP", "; overlap = true" if overlap else "").replace("TARGETS", targets))
    return path


def test_utilisation_mfu_and_bytes_per_step_by_hand(tmp_path):
    sol = ctdsl.load(_spec(tmp_path)).solve()
    r = sol.schemes["dense"]
    assert r.step_time.value == pytest.approx(0.62, rel=1e-12)
    assert r.utilisation.value == pytest.approx(0.12 / 0.62, rel=1e-12)
    assert r.mfu.value == pytest.approx(6e12 / (0.62 * 100e12), rel=1e-12)
    assert r.utilisation.dim.dimensionless and r.mfu.dim.dimensionless
    out = sol.to_json()
    by = out["schemes"][0]["bytes"]
    assert by["per_step"] == {"payload": pytest.approx(5e8, rel=1e-12), "wire": pytest.approx(5e8, rel=1e-12), "wan": pytest.approx(5e8, rel=1e-12)}
    assert by["payload_over_dense"] == 1.0 and by["wire_over_dense"] == 1.0
    assert out["schemes"][0]["step"]["utilisation"] == pytest.approx(0.12 / 0.62, rel=1e-12)


def test_five_targets_exact_by_hand(tmp_path):
    sol = ctdsl.load(_spec(tmp_path)).solve()
    assert [t.target for t in sol.targets] == FIVE
    for t, u in zip(sol.targets, FIVE):
        (root,) = t.roots
        assert not root.numeric and root.rises
        assert root.value == pytest.approx(D / (H * C * (1 / u - 1)), rel=1e-12)
    # u = 0.95 exactly: 2e9 x 19 / 0.48 = 237500000000/3
    assert sp.nsimplify(sol.targets[3].roots[0].expr) == sp.Rational(237500000000, 3)
    table = next(t for t in all_tables(sol) if t.title == "Targets")
    assert len(table.rows) == 5
    assert [row[1] for row in table.rows] == ["0.5", "0.8", "0.9", "0.95", "0.99"]
    assert table.rows[3][4] == "79.17 GB/s"


def test_overlap_form(tmp_path):
    sol = ctdsl.load(_spec(tmp_path, "target utilisation = 0.95 over wan_bw", overlap=True)).solve()
    (root,) = sol.targets[0].roots
    assert root.value == pytest.approx(0.95 * D / (H * C), rel=1e-12)


def test_root_against_brentq_on_solve_values(tmp_path):
    """CU at points from solve with --set values (not the target's expression), narrowed by scipy."""
    optimize = pytest.importorskip("scipy.optimize")
    path = _spec(tmp_path, "target utilisation = 0.9 over wan_bw")
    study = ctdsl.load(path)
    exact = study.solve().targets[0].roots[0].value

    def cu_minus(b: float) -> float:
        return study.solve({"wan_bw": f"{b!r} B/s"}).schemes["dense"].utilisation.value - 0.9

    root = optimize.brentq(cu_minus, 1e9, 1e12, xtol=1.0, rtol=1e-13)
    assert root == pytest.approx(exact, rel=1e-9)
    assert root == pytest.approx(37.5e9, rel=1e-9)  # 2e9 / (0.48 x (1/0.9 - 1)) = 2e9 x 9 / 0.48


def test_never_in_range(tmp_path):
    text = HAND.replace("1000 GB/s log 41", "10 GB/s log 41")
    path = tmp_path / "narrow.ct"
    path.write_text(text.replace(" OVERLAP", "").replace("TARGETS", "target utilisation = 0.95 over wan_bw"))
    (t,) = ctdsl.load(path).solve().targets
    assert not t.roots
    assert "stays below 0.95" in t.reason and "outside the range" in t.reason and "79.17 GB/s" in t.reason
    j = ctdsl.load(path).solve().to_json()["targets"][0]
    assert j["never"] is True and j["roots"] == []


def test_step_time_target_and_for(tmp_path):
    """step_time = 0.7 s: 0.12 + 0.5e9 / b = 0.7 <=> b = 0.5e9 / 0.58."""
    sol = ctdsl.load(_spec(tmp_path, "target step_time = 0.7 s over wan_bw for dense")).solve()
    (root,) = sol.targets[0].roots
    assert root.value == pytest.approx(0.5e9 / 0.58, rel=1e-12)
    assert not root.rises  # the step time falls as the WAN gets faster


def test_numeric_root_where_the_form_is_not_a_polynomial(tmp_path):
    """overhead = log2(x) x 0.1 s per sync: step = 0.12 + 0.5 + 0.025 log2(x) = 0.7 s
    <=> log2(x) = 0.08 / 0.025 = 3.2 <=> x = 2^3.2 = 9.18958683997628..."""
    text = "param x = 4 in 2 .. 1000 log 11\n" + HAND.replace(" OVERLAP", "; overhead = log2(x) * 0.1 s")
    path = tmp_path / "log.ct"
    path.write_text(text.replace("TARGETS", "target step_time = 0.7 s over x"))
    (root,) = ctdsl.load(path).solve().targets[0].roots
    assert root.numeric
    assert root.value == pytest.approx(2**3.2, rel=1e-12)


def test_time_without_steps_answers_why(tmp_path):
    (t,) = ctdsl.load(_spec(tmp_path, "target time = 1 h over wan_bw")).solve().targets
    assert not t.roots and "steps" in t.reason


def test_latex_row_per_target(tmp_path):
    text = paper_latex(ctdsl.load(_spec(tmp_path)).solve())
    table = text[text.index("tab:ctdsl:targets"):]
    assert len(re.findall(r"& exact \\\\", table)) == 5


# ---- the table in docs/cost-model.md -------------------------------------------


def _doc_table() -> dict[tuple[str, str], str]:
    text = (ROOT / "docs" / "cost-model.md").read_text()
    block = text[text.index("<!-- targets table -->"):text.index("<!-- end targets table -->")]
    out = {}
    for line in block.splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if len(cells) == 7 and cells[0] in ("8B", "70B", "405B"):
            for u, cell in zip(("0.5", "0.8", "0.9", "0.95", "0.99"), cells[2:]):
                out[(f"{cells[1]}_{cells[0].lower()}", u)] = cell
    return out


def test_docs_table_is_true():
    sol = ctdsl.load(ROOT / "examples" / "19_utilisation_targets.ct").solve()
    rows = _doc_table()
    assert len(rows) == 45
    from ctdsl import units as U

    for t in sol.targets:
        want = rows[(t.scheme, f"{t.target:g}")]
        got = U.format_quantity(t.roots[0].value, t.dim) if t.roots else "never in range"
        assert want == got, (t.scheme, t.target)


def test_markdown_shows_targets_utilisation_and_bytes_per_step(tmp_path):
    from ctdsl.report.tables import render_markdown

    text = render_markdown(ctdsl.load(_spec(tmp_path)).solve())
    assert "Targets" in text and "79.17 GB/s" in text
    # CU = 0.12 / 0.62 = 19.4%, MFU = 9.7%; 500 MB per step = 2 GB per sync / 4
    assert "| 19.4% | 9.7% |" in text
    assert "500 MB" in text


def test_unsolvable_target_is_a_diagnostic_at_its_statement(tmp_path, monkeypatch):
    """What the root finder cannot solve (CT701, CT702) points at the target statement, in its words."""
    from ctdsl.failure import Failure
    from ctdsl.symbolic import targets as T
    from ctdsl.symbolic.breakeven import Unsolvable

    def refuse(name_x, *args, **kw):
        raise Unsolvable("CT702", f"break-even {name_x} vs target: the times to target cannot be evaluated at the low end", "narrow it")

    monkeypatch.setattr(T, "solve_breakeven", refuse)
    with pytest.raises(Failure) as err:
        ctdsl.load(_spec(tmp_path, "target utilisation = 0.9 over wan_bw")).solve()
    (d,) = err.value.diagnostics
    assert d.code == "CT702" and d.span.line == 11
    assert d.message.startswith("target utilisation = 0.9 for dense: the scheme's utilisation cannot be evaluated")
