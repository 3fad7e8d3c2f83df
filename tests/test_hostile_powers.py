"""Powers cannot stall a command: their cost is sized by logarithms before anything computes them.

Issue 25, item 1. The 42-byte spec ATTACK made `ctdsl lint` run 63.6
CPU-seconds: its exponent folds to a number of a billion digits. A param raised
to nested powers, (((z^64)^64)^64)^64, made `solve` hold a polynomial of degree
16,777,216 (85 s, 7.3 GB); ((a + b + c + d + e) / 5) ^ 64 made a break-even
expand 814,385 terms (over 200 s). Each is now a diagnostic of the checker at
the power (CT610, CT611, CT612), on every command, in a real process. The
back end's break-even skips the exact path for a difference that multiplies out
past its bound, and the scan finds the same root.

The bounds themselves (`ctdsl.model.cost`) are checked against what sympy
builds: the bits of every number, the degree and the terms of the expansion
are never more than the cost says.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import pytest
import sympy as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctdsl import limits
from ctdsl.model import cost as C
from ctdsl.model import expr as E
from ctdsl.symbolic import regimes as R
from ctdsl.symbolic.convert import to_sympy

from backstop import HANG

ROOT = Path(__file__).resolve().parents[1]

ATTACK = "param x = 2 ^ (((((10^64)^64)^64)^64)^64)\n"

DEGREE = """\
import std.devices
import std.links
import std.models
param z = 1 in 1 .. 1.00000001 lin 5
param wan_bw = 12.5 GB/s in 0.1 GB/s .. 1000 GB/s log 41
model job : llama3_70b { tokens = 16384 }
device gpu0 : h100 { efficiency = 0.4 }
link wan_link : eth100g { bandwidth = wan_bw * FACTOR }
switch tor {}
dc east { workers = 4; device = gpu0; link = ib_ndr; switch = tor }
dc west : east {}
wan east <-> west = wan_link
scheme adamw { payload = dense; collective = hier_allreduce; steps = 10000 }
scheme band { payload = band; fraction = 1/16; collective = hier_allreduce; steps = 10800 }
baseline adamw
breakeven band vs adamw over z
"""
PARAMS = "".join(f"param {n} = 1 in 1 .. 1.00000001 lin 5\n" for n in "abcde")

COMMANDS = [
    ("check",),
    ("lint",),
    ("solve",),
    ("sweep",),
    ("export", "latex"),
    ("report", "-o", "{tmp}/r.md"),
    ("report", "-o", "{tmp}/r.html"),
    ("explore", "-o", "{tmp}/e.html"),
    ("simulate", "--steps", "3", "--seeds", "2"),
    ("search",),
    ("uncertainty", "--samples", "100"),
]


def ctdsl(*args) -> subprocess.CompletedProcess:
    code = "import sys; from ctdsl.cli import main; sys.argv = ['ctdsl'] + sys.argv[1:]; main()"
    r = subprocess.run(
        [sys.executable, "-c", code, *map(str, args)],
        capture_output=True,
        text=True,
        timeout=HANG,
        env={**os.environ, "NO_COLOR": "1", "MPLBACKEND": "Agg"},
    )
    assert "Traceback" not in r.stderr and "internal error" not in r.stderr, r.stderr
    return r


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_the_attack_is_42_bytes():
    assert len(ATTACK.encode()) == 42


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c[:2]).replace("{tmp}/", ""))
def test_the_42_byte_power_is_ct610_at_the_power_on_every_command(tmp_path, command):
    path = write(tmp_path, "pr.ct", ATTACK)
    r = ctdsl(*[a.format(tmp=tmp_path) for a in command], path)
    assert r.returncode == 1, r.stdout + r.stderr
    out = r.stdout + r.stderr
    # the first power too large is (10^64)^64, at column 19: 10^4096 is 13,607 bits
    assert f"{path}:1:19: CT610 exact value too large: about 4,096 digits (13,607 bits)" in out


def test_the_42_byte_power_is_ct610_in_the_language_server(tmp_path):
    from lspkit import Session

    path = write(tmp_path, "pr.ct", ATTACK)
    s = Session()
    try:
        uri = s.open(path)
        (d,) = s.diagnostics(uri)
    finally:
        s.close()
    assert d.code == "CT610" and (d.range.start.line, d.range.start.character) == (0, 18)


@pytest.mark.parametrize(
    "factor, params, code, words",
    [
        ("(((z^64)^64)^64)^64", "", "CT611", "degree 4,096 in the params"),
        ("((a + b + c + d + e) / 5) ^ 64", PARAMS, "CT612", "about 814,385 terms"),
        ("(z * 1.0000000000000000000000000000000000001) ^ 64", "", "CT610", "exact value too large"),
    ],
    ids=["nested-powers", "power-of-a-sum", "power-of-a-long-fraction"],
)
@pytest.mark.parametrize("command", [("solve",), ("sweep",), ("export", "latex"), ("explore", "-o", "{tmp}/e.html")], ids=lambda c: c[0])
def test_powers_of_params_are_refused_at_the_power(tmp_path, factor, params, code, words, command):
    path = write(tmp_path, "spec.ct", DEGREE.replace("FACTOR", factor).replace("param wan_bw", params + "param wan_bw"))
    r = ctdsl(*[a.format(tmp=tmp_path) for a in command], path)
    out = r.stdout + r.stderr
    line = 8 + (5 if params else 0)
    assert r.returncode == 1 and f"{path}:{line}:" in out and f" {code} " in out and words in out, out


def _variants_with(factor: str) -> str:
    """examples/16_variants.ct with a factor of five params on the WAN's bandwidth and on the tokens:
    both 1 at the defaults, so every break-even is the example's."""
    src = (ROOT / "examples" / "16_variants.ct").read_text(encoding="utf-8")
    src = src.replace("param wan_bw", "".join(f"param {n} = 1 in 1 .. 2\n" for n in "abcde") + "param wan_bw", 1)
    src = src.replace("link wan : eth100g { bandwidth = wan_bw }", f"link wan : eth100g {{ bandwidth = wan_bw * {factor} }}")
    return src.replace("tokens = 16384 }", f"tokens = 16384 * {factor} }}")


def _roots(path: Path) -> dict[tuple[str, str], list[dict]]:
    r = ctdsl("solve", path, "--format", "json")
    assert r.returncode == 0, r.stderr
    return {(b["x"], b["y"]): b["roots"] for b in json.loads(r.stdout)["breakevens"]}


def test_a_breakeven_whose_difference_multiplies_out_past_the_bound_is_scanned(tmp_path):
    """Each field is 495 terms multiplied out (within the checker's bound); the break-even's
    difference holds both, 991, past MAX_EXACT_TERMS: it was expanded (9.4 CPU-seconds), and is
    now left to the scan, which finds the example's exact roots."""
    plain = _roots(ROOT / "examples" / "16_variants.ct")
    grown = _roots(write(tmp_path, "grown.ct", _variants_with("((a + b + c + d + e) / 5) ^ 8")))
    assert plain.keys() == grown.keys()
    found = 0
    for key, roots in plain.items():
        assert len(grown[key]) == len(roots)
        for exact, scanned in zip(roots, grown[key]):
            assert not exact["numeric"] and scanned["numeric"]
            assert scanned["value"] == pytest.approx(exact["value"], rel=1e-9)
            found += 1
    assert found == 2


def test_exact_roots_sizes_the_difference_before_expanding(monkeypatch):
    a, b, c, d, e, w = sp.symbols("a b c d e w", positive=True)
    f = ((a + b + c + d + e) / 5) ** 8
    diff = 3 * f / w - 7 / (w * f) + 2

    def refuse(*args, **kw):
        raise AssertionError("expanded")

    monkeypatch.setattr(R.sp, "expand", refuse)
    monkeypatch.setattr(R.sp, "together", refuse)
    assert 2 ** C.of_sympy(diff).terms > R.MAX_EXACT_TERMS
    assert R.exact_roots(diff, w, {}, {}) == ([], None, False)


# ---- the evaluators' own guards -------------------------------------------------------------------


def test_exact_refuses_a_power_by_its_size_before_computing_it():
    big = E.Num(Fraction(10**64))
    for _ in range(5):
        big = E.Pow(big, Fraction(64))
    with pytest.raises(C.TooCostly, match="digits"):
        E.exact(E.Pow(E.Num(Fraction(2)), Fraction(1)) * big)
    with pytest.raises(C.TooCostly):  # 13,607 bits
        E.exact(E.Pow(E.Num(Fraction(10**64)), Fraction(64)))
    assert E.exact(E.Pow(E.Num(Fraction(10**64)), Fraction(38))) == 10 ** (64 * 38)  # 8,079 bits


def test_to_sympy_refuses_a_power_of_a_number_past_the_bound():
    x = sp.Symbol("x", positive=True)
    huge = E.Pow(E.Num(Fraction(10**64)), Fraction(64))
    with pytest.raises(C.TooCostly):
        to_sympy(huge, {"x": x})
    with pytest.raises(C.TooCostly):
        to_sympy(E.Pow(E.Mul(E.Num(Fraction(10**64)), E.Sym("x")), Fraction(64)), {"x": x})
    assert to_sympy(E.Pow(E.Mul(E.Num(Fraction(10**64)), E.Sym("x")), Fraction(2)), {"x": x}) == 10**128 * x**2


def test_the_bounds_are_where_the_docs_say():
    assert (limits.MAX_EXACT_BITS, limits.MAX_DEGREE, limits.MAX_EXPANDED_TERMS) == (8192, 64, 4096)
    # 10^64 is log2(10^64) = 212.6 bits; its 38th power 8,079 bits is within, its 39th 8,292 is not
    assert C.measure(E.Pow(E.Num(Fraction(10**64)), Fraction(38))).over() is None
    assert C.measure(E.Pow(E.Num(Fraction(10**64)), Fraction(39))).over()[0] == "CT610"
    # C(5 + 8 - 1, 8) = 495 monomials of degree 8 in five terms; C(5 + 64 - 1, 64) = 814,385
    s = E.Sym("a") + E.Sym("b") + E.Sym("c") + E.Sym("d") + E.Sym("e")
    assert 2 ** C.measure(E.Pow(s, Fraction(8))).terms == pytest.approx(495)
    assert 2 ** C.measure(E.Pow(s, Fraction(64))).terms == pytest.approx(814_385)


# ---- the cost is an upper bound of what sympy builds -----------------------------------------------

X, Y = sp.symbols("x y", positive=True)
NUMBERS = [Fraction(1), Fraction(3), Fraction(1, 3), Fraction(1000), Fraction(1, 1000), Fraction(7, 5), Fraction(10**20 + 7, 10**19), Fraction(2, 9)]


def _leaves():
    return st.one_of(st.sampled_from(NUMBERS).map(E.Num), st.sampled_from(["x", "y"]).map(E.Sym))


def _polynomials(exps):
    """Expressions of + - *, division by numbers, and the powers `exps`."""

    def extend(kids):
        return st.one_of(
            st.tuples(kids, kids).map(lambda t: E.Add(*t)),
            st.tuples(kids, kids).map(lambda t: E.Sub(*t)),
            st.tuples(kids, kids).map(lambda t: E.Mul(*t)),
            st.tuples(kids, st.sampled_from(NUMBERS)).map(lambda t: E.Div(t[0], E.Num(t[1]))),
            st.tuples(kids, st.sampled_from(exps)).map(lambda t: E.Pow(t[0], Fraction(t[1]))),
        )

    return st.recursive(_leaves(), extend, max_leaves=6)


def _bits(q) -> float:
    return C.size(Fraction(int(q.p), int(q.q)))


def _numbers(e) -> list:
    """The numbers of a sympy expression, not its exponents."""
    if e.is_Rational:
        return [e]
    if e.is_Pow:
        return _numbers(e.args[0])
    return [n for a in e.args for n in _numbers(a)]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_polynomials([0, 1, 2, 3, 5]))
def test_expanded_terms_degree_and_numbers_are_within_the_cost(expr):
    cost = C.measure(expr)
    e = to_sympy(expr, {"x": X, "y": Y})
    expanded = sp.expand(e)
    terms = sp.Add.make_args(expanded)
    assert len(terms) <= 2**cost.terms * (1 + 1e-9) + 1e-9
    if expanded != 0:
        assert sp.Poly(expanded, X, Y).total_degree() <= cost.degree
    worst = max((_bits(n) for n in _numbers(expanded)), default=0.0)
    assert worst <= cost.bits + 1e-6
    if cost.value is not None:
        assert e == sp.Rational(cost.value.numerator, cost.value.denominator)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_polynomials([1, 2, -1, -2, Fraction(1, 2), Fraction(3, 2)]))
def test_the_numbers_sympy_folds_are_within_the_cost(expr):
    """With negative and fractional powers: the numbers of sympy's own form (not expanded)."""
    cost = C.measure(expr)
    e = to_sympy(expr, {"x": X, "y": Y})
    worst = max((_bits(n) for n in _numbers(e)), default=0.0)
    assert worst <= cost.bits + 1e-6


def test_a_sum_of_fractions_over_distinct_primes_counts_every_denominator():
    """x/p1 + ... + x/p40: sympy's coefficient is over the product of the primes; the cost's
    denominator is too, so a power of it is refused rather than underestimated."""
    primes = list(sp.primerange(10**15, 10**15 + 4000))[:40]
    total = E.Div(E.Sym("x"), E.Num(Fraction(primes[0])))
    for p in primes[1:]:
        total = E.Add(total, E.Div(E.Sym("x"), E.Num(Fraction(p))))
    actual = max(_bits(n) for n in _numbers(to_sympy(total, {"x": X})))
    assert actual > 40 * 49 and C.measure(total).bits >= actual
    assert C.measure(E.Pow(total, Fraction(8))).over()[0] == "CT610"
    assert math.isfinite(C.measure(total).bits)


def test_a_serving_instance_whose_degree_is_refused_is_one_finding_not_an_internal_error(tmp_path):
    """Fuzz campaign round 3, seed 32, input 2702: an instance's `tp = (-10)^(10^64)` is refused at its
    exponent (CT604), and the layout check of the instance then read the refused field and raised
    "internal error: TypeError: cannot visit None" on check and every lint format."""
    from typer.testing import CliRunner

    from ctdsl.cli import app

    text = (ROOT / "specs" / "llama70b_disagg.ct").read_text(encoding="utf-8")
    assert text.count("\n  tp = 4\n") == 1
    spec = tmp_path / "s.ct"
    spec.write_text(text.replace("\n  tp = 4\n", "\n  tp = (-10)^(10^64)\n"), encoding="utf-8")
    for argv in (["check", str(spec)], ["lint", str(spec), "--format", "sarif"]):
        r = CliRunner().invoke(app, argv)
        assert r.exit_code == 1, (argv, r.output)
        assert "CT604" in r.output and "internal error" not in r.output, r.output
