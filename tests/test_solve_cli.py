"""`ctdsl solve`, `ctdsl export latex` and the Python API, end to end."""

from __future__ import annotations

import csv
import io
import json

import pytest
from typer.testing import CliRunner

import ctdsl
from ctdsl.cli import app
from solvekit import ROOT

FLAGSHIP = str(ROOT / "specs" / "llama70b_wan.ct")
runner = CliRunner()


def run(*args):
    return runner.invoke(app, list(args))


def test_solve_prints_every_table():
    r = run("solve", FLAGSHIP)
    assert r.exit_code == 0, r.stderr
    for title in ("Bytes per sync", "Step time", "Module stages", "Time and energy to target", "Break-even"):
        assert title in r.stdout
    assert "141.1 GB" in r.stdout and "GB/s" in r.stdout
    assert r.stderr == ""


def test_solve_is_deterministic():
    a, b = run("solve", FLAGSHIP, "--format", "json"), run("solve", FLAGSHIP, "--format", "json")
    assert a.stdout == b.stdout
    a, b = run("solve", FLAGSHIP), run("solve", FLAGSHIP)
    assert a.stdout == b.stdout


def test_json_schema_is_documented():
    r = run("solve", FLAGSHIP, "--format", "json")
    data = json.loads(r.stdout)
    assert data["schema"] == "ctdsl.solve/2"
    doc = (ROOT / "docs" / "solve-json.md").read_text()

    def keys(node, prefix=""):
        if isinstance(node, dict):
            for k, v in node.items():
                if prefix.endswith(("params", "components", "energy_per_step", "per_micro_batch")):
                    yield from keys(v, prefix + ".*")  # keys here are names from the spec
                    continue
                yield prefix + "." + k
                yield from keys(v, prefix + "." + k)
        elif isinstance(node, list) and node:
            yield from keys(node[0], prefix + "[]")

    missing = sorted({k.rsplit(".", 1)[-1] for k in keys(data)} - set(_doc_keys(doc)))
    assert not missing, f"keys not in docs/solve-json.md: {missing}"


def _doc_keys(doc: str):
    import re

    return re.findall(r"`([a-z_]+)`", doc)


def test_json_values_are_base_units():
    data = json.loads(run("solve", FLAGSHIP, "--format", "json").stdout)
    adamw = next(s for s in data["schemes"] if s["name"] == "adamw")
    assert adamw["bytes"]["dense"] == 141104775168.0
    assert data["params"]["wan_bw"]["value"] == 12.5e9


def test_markdown_and_csv():
    md = run("solve", FLAGSHIP, "--format", "markdown")
    assert md.exit_code == 0 and "| scheme |" in md.stdout and "## Break-even" in md.stdout
    out = run("solve", FLAGSHIP, "--format", "csv")
    rows = list(csv.DictReader(io.StringIO(out.stdout)))
    assert [r["scheme"] for r in rows][:2] == ["adamw", "topk"]
    assert float(rows[0]["dense_B"]) == 141104775168.0


def test_set_overrides_a_param_with_units():
    slow = json.loads(run("solve", FLAGSHIP, "--format", "json", "--set", "wan_bw=1.25 GB/s").stdout)
    fast = json.loads(run("solve", FLAGSHIP, "--format", "json").stdout)
    assert slow["params"]["wan_bw"]["value"] == 1.25e9

    def step(d):
        return next(s for s in d["schemes"] if s["name"] == "adamw")["step"]["seconds"]

    # the dense WAN phase takes D / b: ten times slower by 10 x 11.29 s - 11.29 s
    assert step(slow) - step(fast) == pytest.approx(141104775168.0 / 1.25e9 - 141104775168.0 / 12.5e9, rel=1e-9)


@pytest.mark.parametrize(
    "value, code",
    [("wan=1 GB/s", "CT101"), ("wan_bw=5 ms", "CT202"), ("wan_bw=0 GB/s", "CT301"), ("wan_bw=5 GB/s +", "CT004")],
)
def test_bad_set_is_a_diagnostic(value, code):
    r = run("solve", FLAGSHIP, "--set", value)
    assert r.exit_code == 1
    assert code in r.stderr and "Traceback" not in r.stderr + r.stdout


def test_set_without_equals_is_a_usage_error():
    r = run("solve", FLAGSHIP, "--set", "wan_bw")
    assert r.exit_code == 2 and "name=value" in r.stderr


def test_explain_walks_phases_and_links():
    r = run("solve", FLAGSHIP, "--explain", "band_switch")
    assert r.exit_code == 0
    for text in ("up to the switch", "all-reduce of the sums across dcs", "down to the GPUs", "wan ", "east.tor -> west.tor"):
        assert text in r.stdout
    bad = run("solve", FLAGSHIP, "--explain", "band_swich")
    assert bad.exit_code == 2 and "band_switch" in bad.stderr


def test_solve_on_a_bad_spec_exits_1_with_diagnostics(tmp_path):
    p = tmp_path / "bad.ct"
    p.write_text("link l { bandwidth = 5 ms; latency = 1 us }\n")
    r = run("solve", str(p))
    assert r.exit_code == 1 and "CT202" in r.stderr and r.stdout == ""


def test_missing_file_is_exit_2():
    r = run("solve", "no/such/file.ct")
    assert r.exit_code == 2 and "Traceback" not in r.stderr


def test_export_latex(tmp_path):
    r = run("export", "latex", FLAGSHIP)
    assert r.exit_code == 0
    assert "\\begin{align}" in r.stdout and "b_{\\mathrm{WAN}}^{*}" in r.stdout
    assert "\\documentclass" not in r.stdout
    out = tmp_path / "study.tex"
    r = run("export", "latex", FLAGSHIP, "--standalone", "-o", str(out))
    assert r.exit_code == 0 and out.read_text().startswith("\\documentclass")


def test_python_api_matches_the_cli():
    study = ctdsl.load(FLAGSHIP)
    sol = study.solve()
    cli = json.loads(run("solve", FLAGSHIP, "--format", "json").stdout)
    assert sol.to_json() == cli
    r = sol.schemes["band_switch"]
    assert "\\begin{aligned}" in r._repr_latex_()
    assert "<table>" in r._repr_html_() and "<table>" in sol._repr_html_()
    assert sol.breakevens[0]._repr_latex_().startswith("$$")
    assert "Bytes per sync" in str(sol)


def test_load_raises_spec_error_with_every_diagnostic(tmp_path):
    p = tmp_path / "bad.ct"
    p.write_text("link l { bandwidth = 5 ms; latency = -1 us }\nlink l { bandwidth = 1 GB/s; latency = 0 s }\n")
    with pytest.raises(ctdsl.SpecError) as err:
        ctdsl.load(p)
    codes = sorted(d.code for d in err.value.diagnostics)
    assert codes == ["CT103", "CT202", "CT304"]
