"""Scenarios, observed points and the fit: the syntax, solving in a scenario, the figures
of a set, and `ctdsl solve` and `ctdsl validate` on them.

The expected numbers are derived by hand from tests/data/observed_small.ct (its comment
gives the formulas): compute 6e-5 s / eff; a ring all-reduce of 2 MB over 2 workers, 2 steps
of 1 us + 1 MB / bw. The diagnostics of each mistake are the chunks of
tests/errors/55_observed.ct; CT317 (a fit without a root) is raised by the solve, here.
"""

from __future__ import annotations

import json
import math
from fractions import Fraction
from pathlib import Path

import pytest
from typer.testing import CliRunner

import ctdsl
from ctdsl.api import check
from ctdsl.cli import app
from ctdsl.diagnostics import DiagnosticSink
from ctdsl.failure import Failure
from ctdsl.language.enums import Observable
from ctdsl.language.observables import OBSERVABLES
from ctdsl.numeric.observe import READERS, value_text
from ctdsl.results.observed import ranks, spearman
from ctdsl.syntax import ast
from ctdsl.syntax.parser import parse_text

ROOT = Path(__file__).resolve().parents[1]
SMALL = ROOT / "tests" / "data" / "observed_small.ct"
NO_ROOT = ROOT / "tests" / "data" / "fit_no_root.ct"


def step(bw: float, eff: float) -> float:
    """The hand formula of observed_small.ct's step: compute + 2 steps of (1 us + 1 MB / bw)."""
    return 6e-5 / eff + 2 * (1e-6 + 1e6 / bw)


EFF = 6e-5 / (2.2e-3 - step(1e9, math.inf))  # the fit: step(1 GB/s, eff) = 2.2 ms


# ---- syntax ------------------------------------------------------------------------


def test_the_three_statements_parse_to_their_nodes():
    text = (
        'scenario row_1 { tp = 2; micro = 8 }\n'
        'observe step_time of dp in row_1 = 3.5665 s source "vTrain, row 1"\n'
        "observe mfu = 38 % source \"x\"\n"
        "fit eff on row_1\n"
    )
    sink = DiagnosticSink()
    f = parse_text(text, "x.ct", sink)
    assert not sink.items
    scen, obs, bare, fit = f.statements
    assert isinstance(scen, ast.Scenario) and scen.name.text == "row_1"
    assert [(i.key.text, i.value.text) for i in scen.items] == [("tp", "2"), ("micro", "8")]
    assert isinstance(obs, ast.Observe)
    assert (obs.observable.text, obs.subject.text, obs.scenario.text) == ("step_time", "dp", "row_1")
    assert (obs.value.value, obs.value.unit, obs.source.text) == (Fraction("3.5665"), "s", "vTrain, row 1")
    # `of` and `in` may be left out; `source` after a plain number is the word, not a unit
    assert bare.subject is None and bare.scenario is None and (bare.value.value, bare.value.unit) == (38, "%")
    assert isinstance(fit, ast.Fit) and (fit.param.text, fit.scenario.text) == ("eff", "row_1")


def test_the_new_words_still_name_things_where_a_name_stands():
    text = "param source = 3\nparam fit = 2 in 1 .. 3\nparam observe = 4\nlink of { bandwidth = 1 GB/s; latency = 1 us }\n"
    r = check("x.ct", text=text)
    assert r.ok, [d.message for d in r.diagnostics]
    assert set(r.spec.params) == {"source", "fit", "observe"} and "of" in r.spec.links


def test_every_observable_has_a_dimension_a_bound_and_a_reader():
    assert set(OBSERVABLES) == set(Observable) == set(READERS)
    assert {o.better for o in OBSERVABLES.values()} <= {"lower", "higher"}
    assert {o.bound for o in OBSERVABLES.values()} <= {"positive", "fraction"}


# ---- the checked model --------------------------------------------------------------


def test_the_checked_spec_holds_scenarios_observations_and_the_fit():
    spec = check(str(SMALL)).spec
    assert list(spec.scenarios) == ["r1", "r2", "r4", "r8"]
    assert spec.scenarios["r8"].values["bw"] == 8e9 and spec.scenarios["r8"].texts["bw"] == "8000 MB/s"
    o = spec.observations
    assert [(x.scheme, x.scenario, x.value) for x in o] == [("a", "r1", 2.2e-3), ("a", "r2", 1.3e-3), ("a", "r4", 0.9e-3), ("a", "r8", 1e-3)]
    assert o[1].text == "1.3 ms" and o[0].source == "made up: the fitted row"
    (fit,) = spec.fits
    assert (fit.param, fit.scenario, fit.observation) == ("eff", "r1", 0)


def test_a_scenario_replaces_the_defaults_and_wins_over_set():
    s = ctdsl.load(SMALL, scenario="r2")
    assert s.spec.params["bw"].default == 2e9 and s.spec.params["bw"].given
    both = ctdsl.load(SMALL, {"bw": "3 GB/s", "eff": "0.4"}, scenario="r2")
    assert both.spec.params["bw"].default == 2e9  # the scenario's value, not --set's
    assert both.spec.params["eff"].default == 0.4  # --set for the params it leaves alone
    assert both.solve().schemes["a"].step_time.value == pytest.approx(step(2e9, 0.4), rel=1e-12)


def test_an_unknown_scenario_is_a_key_error():
    with pytest.raises(KeyError):
        ctdsl.load(SMALL, scenario="r3")


SHARDED = """\
param t = 2 in 1 .. 8
model m { layers = 4; width = 256; heads = 8; kv_heads = 8; mlp = 1024; vocab = 1000; bytes_per_value = 2 B; tokens = 4096 }
device g { peak = 1 TFLOP/s; efficiency = 0.5 }
link nic { bandwidth = 50 GB/s; latency = 1 us }
switch s {}
replica r { tp = t; gpus_per_node = 8 }
dc d { replica = r; replicas = 4; device = g; link = nic; switch = s }
scheme a { payload = dense; collective = hier_allreduce }
scenario bad { t = 3 }
observe step_time in bad = 1 s source "x"
"""


def test_a_scenario_whose_values_break_a_check_fails_with_the_scenario_named(tmp_path):
    """t = 3 lies in its range, so the spec checks as written; checked in the scenario, 3 does
    not divide the 8 heads (CT418) nor fill or divide a node of 8 (CT419)."""
    path = tmp_path / "sharded.ct"
    path.write_text(SHARDED)
    study = ctdsl.load(path)
    with pytest.raises(Failure) as err:
        study.observe()
    codes = {d.code for d in err.value.diagnostics}
    assert {"CT418", "CT419"} <= codes
    for d in err.value.diagnostics:
        assert "found with the values of scenario 'bad' in place of the defaults" in d.notes
        assert any(l.text == "this scenario" and l.span.line == 9 for l in d.secondary)
    result = CliRunner().invoke(app, ["validate", str(path)])
    assert result.exit_code == 1 and "CT418" in result.stderr and "scenario 'bad'" in result.stderr


def test_each_scenario_is_checked_from_the_spec_as_loaded_not_read_again(tmp_path):
    """A study's scenarios are checked from the syntax trees it was loaded from: a file changed
    after `load` (here r2's bandwidth halved, and r8 removed) does not reach `observe`, whose
    figures are the hand-derived ones of the spec as loaded."""
    path = tmp_path / "small.ct"
    path.write_text(SMALL.read_text())
    study = ctdsl.load(path)
    path.write_text(SMALL.read_text().replace("scenario r2 { bw = 2 GB/s }", "scenario r2 { bw = 1 GB/s }").replace("scenario r8 { bw = 8000 MB/s }\n", ""))
    by = {r.scenario: r for r in study.observe().rows}
    assert by["r2"].predicted == pytest.approx(step(2e9, 10 / 33), rel=1e-9)
    assert by["r8"].predicted == pytest.approx(step(8e9, 10 / 33), rel=1e-9)
    assert study.in_scenario("r8").solve().schemes["a"] is not None
    with pytest.raises(KeyError):
        study.in_scenario("r3")


# ---- the figures of a set -------------------------------------------------------------


def test_the_fit_is_the_hand_derived_efficiency():
    """step(1 GB/s) = 6e-5 / eff + 2.002 ms = 2.2 ms gives eff = 6e-5 / 1.98e-4 = 10/33."""
    assert EFF == pytest.approx(10 / 33, rel=1e-12)
    fit = ctdsl.load(SMALL).observe().fit
    assert fit.value == pytest.approx(10 / 33, rel=1e-12)
    assert (fit.param, fit.scenario, fit.roots, fit.lo, fit.hi) == ("eff", "r1", 1, 0.1, 1.0)
    lo, hi = fit.bracket
    assert lo <= fit.value <= hi
    # the bracket's ends lie on either side of the measurement (a verified sign change)
    assert (step(1e9, lo) - 2.2e-3) * (step(1e9, hi) - 2.2e-3) <= 0


def test_each_prediction_error_mape_and_largest_error_by_hand():
    obs = ctdsl.load(SMALL).observe()
    by = {r.scenario: r for r in obs.rows}
    for name, bw in (("r1", 1e9), ("r2", 2e9), ("r4", 4e9), ("r8", 8e9)):
        assert by[name].predicted == pytest.approx(step(bw, 10 / 33), rel=1e-9)
    # r2: 1.2 ms against 1.3; r4: 0.7 against 0.9; r8: 0.45 against 1.0
    assert by["r2"].error == pytest.approx(-0.1 / 1.3, rel=1e-9)
    assert by["r4"].error == pytest.approx(-0.2 / 0.9, rel=1e-9)
    assert by["r8"].error == pytest.approx(-0.55, rel=1e-9)
    assert by["r1"].fitted and not by["r1"].counted and abs(by["r1"].error) < 1e-9
    assert obs.mape == pytest.approx(100 * (0.1 / 1.3 + 0.2 / 0.9 + 0.55) / 3, rel=1e-9)  # 28.305%
    assert obs.worst.scenario == "r8"


def test_the_efficiency_each_observation_implies_by_hand():
    """6e-5 / eff = measured - sync: r2 2.98e-4 s gives 0.2013, r4 3.98e-4 s gives 0.1508; r8 needs
    7.48e-4 s, an efficiency of 0.0802, below the range's 0.1: none."""
    by = {r.scenario: r for r in ctdsl.load(SMALL).observe().rows}
    assert by["r1"].implied == pytest.approx(10 / 33, rel=1e-9)
    assert by["r2"].implied == pytest.approx(6e-5 / (1.3e-3 - 2 * (1e-6 + 5e-4)), rel=1e-9)
    assert by["r4"].implied == pytest.approx(6e-5 / (0.9e-3 - 2 * (1e-6 + 2.5e-4)), rel=1e-9)
    assert by["r8"].implied is None
    out = " ".join(run("solve", str(SMALL)).stdout.split())
    assert "eff it implies" in out and "0.201" in out and "none in range" in out


def test_the_rank_correlation_and_the_fastest_layout_by_hand():
    """Measured 2.2, 1.3, 0.9, 1.0 ms rank 4, 3, 1, 2; predicted 2.2, 1.2, 0.7, 0.45 rank 4, 3, 2, 1:
    d = 0, 0, -1, 1, so rho = 1 - 6 x 2 / (4 x 15) = 0.8; fastest measured r4, predicted r8."""
    (g,) = ctdsl.load(SMALL).observe().groups
    assert g.scenarios == ("r1", "r2", "r4", "r8")
    assert g.spearman == pytest.approx(0.8, rel=1e-12)
    assert (g.best_measured, g.best_predicted, g.best_right) == ("r4", "r8", False)


def test_ranks_share_ties_and_spearman_agrees_with_scipy():
    scipy_stats = pytest.importorskip("scipy.stats")
    assert ranks([1, 2, 2, 3]) == [1, 2.5, 2.5, 4]
    # by hand: ranks 1, 2.5, 2.5, 4 against 1, 2, 3, 4: 4.5 / sqrt(4.5 x 5)
    assert spearman([1, 2, 2, 3], [1, 2, 3, 4]) == pytest.approx(4.5 / math.sqrt(22.5), rel=1e-12)
    xs, ys = [3.1, 0.2, 5.5, 5.5, 1.0, 9.0], [2.0, 2.0, 7.0, 1.0, 0.5, 8.0]
    assert spearman(xs, ys) == pytest.approx(scipy_stats.spearmanr(xs, ys).statistic, rel=1e-12)
    assert spearman([1, 2], [2, 1]) is None  # two layouts always correlate +-1: not shown
    assert spearman([1, 1, 1], [1, 2, 3]) is None  # one rank on a side


def test_a_fit_without_a_root_is_ct317_with_both_ends():
    """fit_no_root.ct: the sync alone takes 2 ms, so no efficiency gives the measured 1 ms."""
    with pytest.raises(Failure) as err:
        ctdsl.load(NO_ROOT).observe()
    (d,) = err.value.diagnostics
    assert d.code == "CT317" and d.span.line == 13
    assert f"{step(1e9, 0.1) * 1e3:.4g} ms at eff = 0.1" in d.message and f"{step(1e9, 1.0) * 1e3:.4g} ms at 1" in d.message
    result = CliRunner().invoke(app, ["solve", str(NO_ROOT)])
    assert result.exit_code == 1 and "CT317" in result.stderr and result.stdout == ""


def test_observations_name_at_most_the_limit_of_scenarios():
    """Each scenario observed is a full check and solve: past MAX_OBSERVED_SCENARIOS the spec is
    refused before any work (CT318, at the first observation over the limit)."""
    import sys

    from ctdsl.check.observed import MAX_OBSERVED_SCENARIOS

    sys.path.insert(0, str(ROOT / "tools"))
    from gen_diagnostics_doc import _many_scenarios

    n = MAX_OBSERVED_SCENARIOS
    assert check("x.ct", text=_many_scenarios(n)).ok
    over = check("x.ct", text=_many_scenarios(n + 1))
    (d,) = over.diagnostics
    assert d.code == "CT318" and d.span.line == 7 + (n + 1) + (n + 1)  # the last observe statement


def test_a_fitted_value_goes_back_through_set_exactly():
    from ctdsl import units as U
    from ctdsl.check.exprs import ExprTyper
    from ctdsl.model import expr as E
    from ctdsl.syntax.parser import parse_expression

    for dim in (U.ONE, U.TIME, U.RATE, U.dim(s=-1), U.dim(USD=1, CO2e=-1)):
        v = 0.1234567891234567
        sink = DiagnosticSink()
        typed = ExprTyper(sink, lambda r: None).type(parse_expression(value_text(v, dim), "x", sink))
        assert not sink.items and typed.dim == dim and E.evaluate(typed.expr, {}) == v


# ---- ctdsl solve and ctdsl validate ------------------------------------------------------


def run(*args):
    return CliRunner().invoke(app, [*args], env={"COLUMNS": "160"})


def test_solve_prints_the_observed_table_only_for_a_spec_with_observations():
    out = run("solve", str(SMALL)).stdout
    assert "Observed" in out and "eff fitted to 0.30303 on scenario r1" in out
    assert "r8" in out and "-55.0%" in out and "MAPE 28.3% over 3 observations" in out
    assert "Observed" not in run("solve", str(ROOT / "specs" / "llama70b_wan.ct")).stdout


def test_solve_json_markdown_and_csv_carry_the_observations():
    data = json.loads(run("solve", str(SMALL), "-f", "json").stdout)["observed"]
    assert [r["scenario"] for r in data["rows"]] == ["r1", "r2", "r4", "r8"]
    r8 = data["rows"][3]
    assert r8["measured"] == 1e-3 and r8["predicted"] == pytest.approx(4.5e-4, rel=1e-9) and r8["error"] == pytest.approx(-0.55)
    assert r8["unit"] == "s" and r8["measured_text"] == "1 ms" and r8["source"] == "made up: slower than r4" and r8["counted"]
    assert data["fit"]["param"] == "eff" and data["fit"]["value"] == pytest.approx(10 / 33) and data["fit"]["sign_changes"] == 1
    assert data["summary"]["counted"] == 3 and data["summary"]["max_error_scenario"] == "r8"
    assert data["groups"][0]["spearman"] == pytest.approx(0.8) and data["groups"][0]["best_right"] is False
    md = run("solve", str(SMALL), "-f", "markdown").stdout
    assert "## Observed" in md and "| r8 | a | step_time | 1 ms | 450 us | **-55.0%** | none in range |" in md
    csv_text = run("solve", str(SMALL), "-f", "csv").stdout
    schemes, observed = csv_text.split("\n\n")
    assert observed.splitlines()[0] == "scenario,scheme,observable,unit,measured,predicted,error,fitted,source"
    assert observed.splitlines()[4].startswith("r8,a,step_time,s,0.001,")


def test_validate_exits_0_without_a_bound_and_1_above_it(tmp_path):
    ok = run("validate", str(SMALL))
    assert ok.exit_code == 0, ok.stderr
    assert "Observed: " in ok.stdout and "Sets" in ok.stdout and "28.3%" in ok.stdout
    assert "Spearman 0.80 over 4 layouts; fastest measured r4, predicted r8 (wrong)" in " ".join(ok.stdout.split())
    over = run("validate", str(SMALL), "--max-mape", "20")
    assert over.exit_code == 1 and "MAPE 28.3% is above --max-mape 20%" in over.stderr
    assert run("validate", str(SMALL), "--max-mape", "30").exit_code == 0


def test_validate_takes_a_directory_and_lists_specs_without_observations(tmp_path):
    (tmp_path / "a.ct").write_text(SMALL.read_text())
    (tmp_path / "b.ct").write_text("\n".join(line for line in SMALL.read_text().splitlines() if not line.startswith(("observe", "fit"))) + "\n")
    sub = tmp_path / "common"
    sub.mkdir()
    (sub / "c.ct").write_text("this is not read")
    r = run("validate", str(tmp_path), "-f", "json")
    assert r.exit_code == 0, r.stderr
    data = json.loads(r.stdout)
    assert [s["path"] for s in data["sets"]] == [str(tmp_path / "a.ct")] and data["skipped"] == [str(tmp_path / "b.ct")]
    assert data["sets"][0]["summary"]["mape_pct"] == pytest.approx(28.305, abs=1e-3)


def test_validate_usage_errors_and_specs_with_errors(tmp_path):
    assert run("validate", str(tmp_path / "missing.ct")).exit_code == 2
    assert run("validate", str(tmp_path)).exit_code == 2  # no .ct files
    assert run("validate", str(SMALL), "--max-mape", "-1").exit_code == 2
    bad = tmp_path / "bad.ct"
    bad.write_text(SMALL.read_text().replace("source \"made up\"\n", "\n", 1))
    r = run("validate", str(bad), str(SMALL))
    assert r.exit_code == 1 and "CT118" in r.stderr and "Observed: " in r.stdout  # the other set is still scored


def test_validate_markdown_and_csv():
    md = run("validate", str(SMALL), "-f", "markdown").stdout
    assert md.startswith("# Validation\n") and "## Sets" in md
    rows = run("validate", str(SMALL), "-f", "csv").stdout.splitlines()
    assert rows[0] == "set,scenario,scheme,observable,unit,measured,predicted,error,fitted,source" and len(rows) == 5


# ---- the example and the editor ---------------------------------------------------------------


def test_the_example_validates_with_its_four_layouts():
    r = run("validate", str(ROOT / "examples" / "21_scenarios.ct"), "-f", "json")
    assert r.exit_code == 0, r.stderr
    (s,) = json.loads(r.stdout)["sets"]
    assert [x["scenario"] for x in s["rows"]] == ["tp1", "tp2", "tp4", "tp8"]
    assert [x["fitted"] for x in s["rows"]] == [False, False, False, True]
    assert s["fit"]["param"] == "eff" and s["summary"]["counted"] == 3
    assert [x["measured"] for x in s["rows"]] == [3.5665, 3.9752, 4.6344, 5.178]  # vTrain's rows 1, 3, 10, 19


def test_the_editor_finds_a_param_where_scenarios_and_fits_name_it():
    from ctdsl.lsp.index import Index

    path = ROOT / "examples" / "21_scenarios.ct"
    sink = DiagnosticSink()
    index = Index([parse_text(path.read_text(encoding="utf-8"), str(path), sink)])
    lines = sorted(s.line for s in index.references("tp"))
    assert [l for l in lines if l > 45] == [48, 49, 50, 51]  # the four scenarios
    assert any(s.line == 60 for s in index.references("eff"))  # fit eff on tp8


def test_the_observed_json_keys_are_documented_and_the_output_is_deterministic():
    import re

    doc = (ROOT / "docs" / "solve-json.md").read_text(encoding="utf-8")
    documented = set(re.findall(r"`([a-z_]+)`", doc))
    data = json.loads(run("solve", str(SMALL), "-f", "json").stdout)["observed"]

    def keys(node):
        if isinstance(node, dict):
            for k, v in node.items():
                yield k
                yield from keys(v)
        elif isinstance(node, list) and node:
            yield from keys(node[0])

    assert sorted(set(keys(data)) - documented) == []
    for args in (("solve", str(SMALL)), ("validate", str(SMALL), "-f", "json"), ("validate", str(SMALL))):
        assert run(*args).stdout == run(*args).stdout
