"""Hostile sizes the checker bounds before the work (issue 18, classes 2, 3, 8 and 10):
each gives its CT6xx (or CT105) diagnostic, never a traceback or a hang."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from ctdsl import limits
from ctdsl.api import check
from ctdsl.cli import app

runner = CliRunner()
HEAD = """import std.devices
import std.models
model job : llama3_8b { tokens = 1024 }
device g : h100 { efficiency = 0.4 }
link l { bandwidth = 10 GB/s; latency = 1 us }
switch s {}
dc a { workers = 2; device = g; link = l; switch = s }
dc b : a {}
"""
SCHEME = "scheme x { payload = dense; collective = hier_allreduce; steps = 10 }\n"


def codes(text: str) -> list[str]:
    return [d.code for d in check("spec.ct", text=text).diagnostics]


def test_a_list_nested_5000_deep_is_one_ct602():
    assert codes("switch s { ops = " + "[" * 5000 + "dct" + "]" * 5000 + " }\n") == ["CT602"]


@pytest.mark.parametrize("newest_first", [False, True])
def test_a_chain_of_3000_bases_is_one_ct620(newest_first):
    lines = ["link l0 { bandwidth = 1 GB/s; latency = 1 us }"] + [f"link l{i} : l{i - 1} {{}}" for i in range(1, 3000)]
    text = "\n".join(reversed(lines) if newest_first else lines) + "\n"
    assert codes(text) == ["CT620"]


def test_a_chain_at_the_limit_checks_clean():
    n = limits.MAX_INHERITANCE_DEPTH
    lines = ["link l0 { bandwidth = 1 GB/s; latency = 1 us }"] + [f"link l{i} : l{i - 1} {{}}" for i in range(1, n + 1)]
    assert codes("\n".join(reversed(lines)) + "\n") == []


def test_too_many_statements_is_ct621_before_the_work():
    # short statements, so that the file stays under the size limit (CT601)
    text = "".join(f"param p{i} = {i}\n" for i in range(10_000))
    assert codes(text) == ["CT621"]
    text = "".join(f"param p{i} = {i}\n" for i in range(limits.MAX_STATEMENTS))
    assert codes(text) == []


def test_a_wan_link_without_bandwidth_is_ct105_not_a_crash(tmp_path: Path):
    spec = tmp_path / "w.ct"
    spec.write_text(HEAD + "link w {}\nwan a <-> b = w\n" + SCHEME, encoding="utf-8")
    for args in (["check", str(spec)], ["solve", str(spec)], ["graph", str(spec)]):
        r = runner.invoke(app, args)
        assert r.exit_code == 1, (args, r.output)
        assert "CT105" in r.output and "bandwidth, latency" in r.output and "Traceback" not in r.output


def test_duplicate_wans_each_have_a_code():
    text = HEAD + "wan a <-> b = l\n" * 50 + SCHEME
    found = codes(text)
    assert found and set(found) == {"CT414"}
