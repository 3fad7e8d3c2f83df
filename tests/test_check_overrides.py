"""`overrides` (the `--set NAME=VALUE` of the CLI): checked like the default they replace."""

from __future__ import annotations

from pathlib import Path

from ctdsl.api import check

FLAGSHIP = Path(__file__).resolve().parents[1] / "specs" / "llama70b_wan.ct"


def run(**overrides):
    result = check(FLAGSHIP, overrides=overrides)
    return result, [(d.code, d.span.file if d.span else None) for d in result.diagnostics]


def test_a_value_in_other_units_of_the_same_dimension():
    result, diags = run(wan_bw="200 Gb/s")
    assert diags == []
    assert result.spec.params["wan_bw"].default == 25e9  # 200 Gb/s = 25 GB/s


def test_an_override_may_leave_the_swept_range():
    result, diags = run(wan_bw="2000 GB/s")
    assert diags == [] and result.spec.params["wan_bw"].default == 2e12


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
