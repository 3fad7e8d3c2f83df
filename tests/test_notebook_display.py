"""Notebook display: short, bounded reprs; float(), .to() with a dimension check; escaped HTML.

Bound on a Solution's repr, from ctdsl/results/reprs.py: a header of at most
10 + 80 (the path, clipped) + ~40 (the counts) characters, then at most
SHOWN_SCHEMES = 10 scheme lines of at most 2 + 40 (name) + 7 + 12 (a quantity)
+ 2 + 40 (what binds) + 7 + 17 + 12 = 139 characters, then one "... and N more"
line (< 30) and the closing ">": under 140 + 10 x 140 + 31 = 1571 < 2000, the
issue's bound, whatever the number of schemes or the length of their names.
"""

from __future__ import annotations

import sympy as sp
import pytest

import ctdsl
from ctdsl import limits
from ctdsl import units as U
from ctdsl.results.quantity import Quantity
from solvekit import ROOT, solve_text

BOUND = 2000


@pytest.fixture(scope="module")
def flagship():
    return ctdsl.load(ROOT / "tests" / "data" / "llama70b_workers.ct")


def test_the_flagships_reprs_are_short(flagship):
    sol = flagship.solve()
    text = repr(sol)
    assert len(text) < BOUND  # was 58 characters, but repr(scheme) was ~52,000 each
    assert text.count("\n") == len(sol.schemes)  # a header and one line per scheme
    assert "band_gpu: step 22.51 s (compute binds), time to target 71.92 h" in text
    for r in sol.schemes.values():
        assert len(repr(r)) < 200
    assert len(repr(sol.schemes)) < BOUND
    assert len(repr(sol.breakevens)) < 300
    assert repr(sol.schemes["band_gpu"].step_time) == "<Quantity 22.51 s>"


def test_the_simulation_repr_is_short(flagship):
    res = flagship.simulate(steps=3, seeds=2, warmup=1, schemes=["adamw", "band_gpu"])
    text = repr(res)
    assert len(text) < BOUND  # was 36,879 characters
    assert text.startswith("<SimResult ") and "llama70b_workers.ct: 2 schemes x 2 seeds x 3 steps\n" in text
    assert all(len(repr(s)) < 200 for s in res.schemes.values())
    html = res._repr_html_()
    assert "<table>" in html and "band_gpu" in html
    assert "| band_gpu |" in res._repr_markdown_()


def _many_schemes(n: int, name_len: int) -> str:
    lines = [
        "model m { params = 1e9; bytes_per_value = 2 B; tokens = 1000 }",
        "device d { peak = 100 TFLOP/s; efficiency = 0.5 }",
        "link l { bandwidth = 50 GB/s; latency = 1 us }",
        "switch s {}",
        "dc a { workers = 2; device = d; link = l; switch = s }",
    ]
    for i in range(n):
        name = f"s{i}_" + "x" * name_len
        lines.append(f'scheme {name} {{ payload = dense; collective = ring_allreduce; label = "{"L" * limits.MAX_STRING_CHARS}" }}')
    return "\n".join(lines) + "\n"


def test_the_bound_holds_whatever_the_spec_size(tmp_path):
    sol = solve_text(tmp_path, _many_schemes(30, 120))
    text = repr(sol)
    assert len(text) < BOUND
    assert "... and 20 more" in text
    assert max(len(line) for line in text.splitlines()) <= 140


def test_float_and_to_against_hand_conversions():
    q = Quantity(sp.Rational(25, 2) * 10**9, 12.5e9, U.RATE)  # 12.5 GB/s
    assert float(q) == 12.5e9  # base units, B/s
    assert (q.value, q.unit) == (12.5e9, "B/s")
    assert q.to("Gbit/s") == pytest.approx(100, rel=1e-12)  # 12.5e9 B/s x 8 bit/B / 1e9 bit/Gbit
    assert q.to("Gb/s") == pytest.approx(100, rel=1e-12)  # the same unit, as a spec writes it
    assert q.to("MB/s") == pytest.approx(12500, rel=1e-12)
    assert q.to("GiB/s") == pytest.approx(12.5e9 / 2**30, rel=1e-12)  # 11.641532182693481
    t = Quantity(sp.Rational(3, 2), 1.5, U.TIME)
    assert t.to("ms") == pytest.approx(1500, rel=1e-12)
    assert t.to("min") == pytest.approx(0.025, rel=1e-12)


def test_a_wrong_dimension_is_a_clear_error():
    q = Quantity(sp.Rational(25, 2) * 10**9, 12.5e9, U.RATE)
    with pytest.raises(ValueError, match=r"cannot convert 12.5 GB/s to 's': it is a B/s, and 's' is a s"):
        q.to("s")
    with pytest.raises(ValueError, match=r"cannot convert to 'Gbps': unknown unit 'Gbps' \(write Gb/s\)"):
        q.to("Gbps")
    with pytest.raises(ValueError, match="unknown unit"):
        q.to("__import__('os')")  # read as unit atoms, never evaluated


def test_rich_displays_escape_a_hostile_label(tmp_path):
    text = _many_schemes(1, 1).replace('label = "' + "L" * limits.MAX_STRING_CHARS + '"', 'label = "<script>alert(1)</script> & $\\\\x_{1}"')
    sol = solve_text(tmp_path, text)
    r = next(iter(sol.schemes.values()))
    html = r._repr_html_()
    assert "<script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt; &amp;" in html
    assert "<script>" not in sol._repr_html_() and "<script>" not in sol._repr_markdown_()
    q = r.step_time
    assert q._repr_html_().startswith('<span class="ctdsl-quantity">') and "&nbsp;" in q._repr_html_()
    assert q._repr_latex_().startswith("$") and r"\mathrm{" in q._repr_latex_()
