"""`overrides` (the `--set NAME=VALUE` of the CLI): checked like the default they replace."""

from __future__ import annotations

from pathlib import Path

from ctdsl.api import check

FLAGSHIP = Path(__file__).resolve().parents[1] / "tests" / "data" / "llama70b_workers.ct"


def run(**overrides):
    result = check(FLAGSHIP, overrides=overrides)
    return result, [(d.code, d.span.file if d.span else None) for d in result.diagnostics]


def test_a_value_in_other_units_of_the_same_dimension():
    result, diags = run(wan_bw="200 Gb/s")
    assert diags == []
    assert result.spec.params["wan_bw"].default == 25e9  # 200 Gb/s = 25 GB/s


def test_an_override_may_leave_the_swept_range_with_a_warning():
    result, diags = run(wan_bw="2000 GB/s")
    assert result.ok and result.spec.params["wan_bw"].default == 2e12  # the value is used
    assert diags == [("CT311", "--set wan_bw")]
    d = result.diagnostics[0]
    assert d.severity.value == "warning"
    # the flagship declares wan_bw in 0.1 GB/s .. 1000 GB/s
    assert d.message == "--set wan_bw = 2 TB/s lies outside its declared range 100 MB/s .. 1 TB/s; the value is used"
    assert d.secondary[0].span.file == str(FLAGSHIP) and d.secondary[0].span.line == 12


def test_an_override_inside_the_range_is_silent_and_marked_as_given():
    result, diags = run(wan_bw="1000 GB/s")  # the high end itself
    assert diags == []
    assert result.spec.params["wan_bw"].given and not result.spec.params["eff"].given


def test_solve_says_which_values_were_set(tmp_path):
    from typer.testing import CliRunner

    from ctdsl.cli import app

    r = CliRunner().invoke(app, ["solve", str(FLAGSHIP), "--set", "eff=0.5", "--format", "markdown"])
    assert r.exit_code == 0
    assert "Params (defaults, except as set): wan_bw = 12.5 GB/s, budget = 50 GFLOP/s, eff = 0.5 (--set), wan_load = 0." in r.stdout
    r = CliRunner().invoke(app, ["solve", str(FLAGSHIP), "--set", "eff=0.9"])  # range 0.2 .. 0.6
    assert r.exit_code == 0 and "CT311" in r.stderr and "0.2 .. 0.6" in r.stderr


def test_wrong_dimension():
    result, diags = run(wan_bw="25 ms")
    assert diags == [("CT202", "--set wan_bw")]
    assert result.diagnostics[0].message == "param 'wan_bw' is data rate (B/s), but the value given is time (s)"


def test_bounds_are_checked_at_the_new_value():
    result, diags = run(wan_bw="0 GB/s")
    assert diags == [("CT301", str(FLAGSHIP))]
    assert result.diagnostics[0].message == "wan.bandwidth must be positive, but it is 0 B/s"
    result, diags = run(eff="1.5")
    assert diags == [("CT302", str(FLAGSHIP))]


def test_unknown_param_suggests_the_nearest():
    result, diags = run(wan="25 GB/s")
    assert diags == [("CT101", "--set wan")]
    assert result.diagnostics[0].help == "did you mean 'wan_bw'?"


def test_the_value_is_a_constant():
    result, diags = run(wan_bw="2 * budget")
    assert diags == [("CT309", "--set wan_bw")]


def test_syntax_errors_in_the_value():
    result, diags = run(wan_bw="25 GB/s extra")
    assert diags == [("CT002", "--set wan_bw")]
    assert result.diagnostics[0].help == "give one value with its unit, e.g. 25 GB/s"
    result, diags = run(wan_bw="25 GBps")
    assert diags == [("CT205", "--set wan_bw")]


def test_the_value_is_quoted_in_the_excerpt():
    from ctdsl.diagnostics import render_text

    result, _ = run(wan_bw="25 ms")
    text = render_text(result.diagnostics[0], result.sources)
    assert text.splitlines()[2:4] == ["1 | 25 ms", "  | ^^^^^ time (s)"]


def test_a_scenario_run_of_a_failing_spec_drops_ct311_as_a_plain_run_does():
    """A --set value outside its range (CT311) is dropped beside an error; a run with --scenario of a
    spec that fails as written kept it (its early return skipped the filter `check` applies elsewhere)."""
    spec = Path(__file__).resolve().parents[1] / "examples" / "21_scenarios.ct"
    text = spec.read_text(encoding="utf-8") + "\nparam oops = 3 GB/s in 1 s .. 2 s\n"  # CT207: a range of another dimension
    plain = [d.code for d in check(spec, text=text, overrides={"eff": "2"}).diagnostics]
    scenario = [d.code for d in check(spec, text=text, overrides={"eff": "2"}, scenario="tp1").diagnostics]
    assert "CT207" in plain and "CT311" not in plain
    assert scenario == plain
