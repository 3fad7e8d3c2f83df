"""The expression visitor and what is built on it: evaluators, text, LaTeX and sympy printers.

Expected strings and values are derived by hand from the printing rules (see
ctdsl/model/printers.py) and from arithmetic; the sympy printer is checked
against sympy objects built by hand, and on every expression of every spec and
example against a plain recursive converter written here.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from fractions import Fraction
from pathlib import Path

import pytest
import sympy as sp

import ctdsl
from ctdsl.api import check
from ctdsl.language.tolerances import close
from ctdsl.model import expr as E
from ctdsl.model.printers import latex, latex_name, render
from ctdsl.model.visit import KINDS, Visitor, post_order
from ctdsl.symbolic.convert import Symbols, to_sympy

ROOT = Path(__file__).resolve().parents[1]
SPECS = sorted([*ROOT.glob("specs/*.ct"), *ROOT.glob("examples/*.ct")])

a, w = E.Sym("a"), E.Sym("wan_bw")
F = Fraction
WAN = r"\mathrm{wan}_{\mathrm{bw}}"

# (expression, text, LaTeX)
CASES = [
    (E.Add(a, E.num(2)), "a + 2", "a + 2"),
    (E.Sub(a, E.Sub(w, E.num(1))), "a - (wan_bw - 1)", rf"a - \left({WAN} - 1\right)"),
    (E.Sub(E.Sub(a, w), E.num(1)), "a - wan_bw - 1", rf"a - {WAN} - 1"),
    (E.Mul(E.Add(a, E.num(1)), w), "(a + 1) * wan_bw", rf"\left(a + 1\right) \cdot {WAN}"),
    (E.Mul(a, E.Mul(w, E.num(2))), "a * wan_bw * 2", rf"a \cdot {WAN} \cdot 2"),
    (E.Div(a, E.Mul(w, E.num(2))), "a / (wan_bw * 2)", rf"\frac{{a}}{{{WAN} \cdot 2}}"),
    (E.Div(E.Div(a, w), E.num(3)), "a / wan_bw / 3", rf"\frac{{\frac{{a}}{{{WAN}}}}}{{3}}"),
    (E.Neg(E.Add(a, w)), "-(a + wan_bw)", rf"-\left(a + {WAN}\right)"),
    (E.Neg(E.Mul(a, w)), "-(a * wan_bw)", rf"-a \cdot {WAN}"),
    (E.Mul(a, E.Neg(w)), "a * -wan_bw", rf"a \cdot \left(-{WAN}\right)"),
    (E.Add(a, E.Neg(w)), "a + -wan_bw", rf"a + -{WAN}"),
    (E.Pow(E.Add(a, E.num(1)), F(2)), "(a + 1)^2", r"\left(a + 1\right)^{2}"),
    (E.Pow(a, F(-1, 2)), "a^(-0.5)", "a^{-0.5}"),
    (E.Pow(a, F(1, 3)), "a^1/3", r"a^{\frac{1}{3}}"),
    (E.Pow(E.Pow(a, F(2)), F(3)), "(a^2)^3", r"\left(a^{2}\right)^{3}"),
    (E.Pow(E.Neg(a), F(2)), "(-a)^2", r"\left(-a\right)^{2}"),
    (E.num(F(1, 3)), "1/3", r"\frac{1}{3}"),
    (E.Mul(E.num(F(1, 3)), a), "(1/3) * a", r"\frac{1}{3} \cdot a"),
    (E.Pow(E.num(F(1, 3)), F(2)), "(1/3)^2", r"\left(\frac{1}{3}\right)^{2}"),
    (E.Mul(E.num(-2), a), "(-2) * a", r"\left(-2\right) \cdot a"),
    (E.Add(E.num(-2), a), "-2 + a", "-2 + a"),
    (E.Sub(a, E.num(-1)), "a - (-1)", r"a - \left(-1\right)"),
    (E.Neg(E.num(-1)), "-(-1)", r"-\left(-1\right)"),
    (E.num(12_000_000_000), "12000000000", r"1.2 \times 10^{10}"),
    (E.num(1_000_000), "1000000", "10^{6}"),
    (E.num(1_234_567), "1234567", "1234567"),
    (E.num(999_999), "999999", "999999"),
    (E.num(F(1, 800_000_000)), "1.25e-09", r"1.25 \times 10^{-9}"),
    (E.num(F(1, 100_000)), "1e-05", "10^{-5}"),
    (E.num(F(1, 4)), "0.25", "0.25"),
    (E.Pow(E.num(10**10), F(2)), "10000000000^2", r"\left(10^{10}\right)^{2}"),
    (E.emax(E.num(12_000_000_000), w), "max(12000000000, wan_bw)", rf"\max\left(1.2 \times 10^{{10}}, {WAN}\right)"),
    (E.emin(a, w, E.num(3)), "min(a, wan_bw, 3)", rf"\min\left(a, {WAN}, 3\right)"),
    (E.ceil(E.Div(a, E.num(4))), "ceil(a / 4)", r"\left\lceil \frac{a}{4} \right\rceil"),
    (E.log2(a), "log2(a)", r"\log_2\left(a\right)"),
    (E.Pow(E.log2(a), F(2)), "log2(a)^2", r"\log_2\left(a\right)^{2}"),
]


@pytest.mark.parametrize("expr,text,_tex", CASES, ids=[c[1] for c in CASES])
def test_text(expr, text, _tex):
    assert render(expr) == text
    assert E.render(expr) == text  # the name the rest of the code uses


@pytest.mark.parametrize("expr,_text,tex", CASES, ids=[c[1] for c in CASES])
def test_latex(expr, _text, tex):
    assert latex(expr) == tex


def test_printers_name_params_through_the_callback():
    x = E.Mul(E.Add(a, E.num(1)), w)
    assert render(x, lambda n: n.upper()) == "(A + 1) * WAN_BW"
    assert latex(x, {"a": r"\alpha", "wan_bw": r"b_{\mathrm{WAN}}"}.__getitem__) == r"\left(\alpha + 1\right) \cdot b_{\mathrm{WAN}}"


def test_a_shared_node_is_printed_at_each_use():
    x = E.Add(a, E.num(1))
    assert render(E.Mul(x, x)) == "(a + 1) * (a + 1)"
    assert latex(E.Div(x, x)) == r"\frac{a + 1}{a + 1}"


def test_latex_names():
    assert latex_name("x") == "x"
    assert latex_name("eff") == r"\mathrm{eff}"
    assert latex_name("b_wan") == r"b_{\mathrm{wan}}"
    assert latex_name("wan_bw_x") == r"\mathrm{wan}_{\mathrm{bw\_x}}"
    assert latex_name("wan_bw", r"b_{\mathrm{WAN}}") == r"b_{\mathrm{WAN}}"


def test_symbol_latex_is_latex_name():
    study = ctdsl.load(ROOT / "specs" / "llama70b_wan.ct")
    for info in Symbols(study.spec).info.values():
        assert info.latex == latex_name(info.param.name, info.param.display)


# ---- the walk ---------------------------------------------------------------------------------


def _recorder():
    def rec(name):
        return lambda log, e, *kids: log.append(name)

    return Visitor({k: rec(k) for k in KINDS})


def test_children_are_folded_left_to_right_and_shared_nodes_once():
    x = E.Add(a, E.num(1))
    log: list[str] = []
    _recorder()(E.Call("max", (E.Mul(x, w), x, E.Neg(x))), log)
    assert log == ["Sym", "Num", "Add", "Sym", "Mul", "Neg", "max"]


def test_a_node_met_before_its_other_parent():
    # root's second child is also a child of its first: a walk that orders nodes
    # by when it first meets them folds Mul before its child
    shared = a
    root = E.Add(E.Mul(shared, E.num(2)), shared)
    assert E.expanded_size(root, 100) == 5
    order = [e for e, _ in post_order(root)]
    assert len(order) == 4 and order[-1] is root
    assert order.index(shared) < order.index(root.a)


def test_a_spec_that_shares_a_field_checks():
    text = "import std.links\nlink fast : ib_ndr { bandwidth = ib_ndr.bandwidth * 2 + ib_ndr.bandwidth }\n"
    result = check("shared.ct", text=text)
    assert result.ok, result.diagnostics


def test_a_visitor_needs_every_kind():
    with pytest.raises(TypeError, match="missing"):
        Visitor({k: None for k in KINDS if k != "log2"})
    with pytest.raises(TypeError, match="unknown"):
        Visitor({**{k: None for k in KINDS}, "sqrt": None})


def test_an_unknown_node_is_a_type_error():
    with pytest.raises(TypeError):
        E.evaluate(E.Call("sqrt", (E.num(2),)), {})
    with pytest.raises(TypeError):
        E.evaluate(3, {})  # type: ignore[arg-type]


DEEP = 100_000  # evaluation, as the checker and the linter run it
LONG = 20_000  # the other walks: far beyond Python's recursion limit too


def _chain(n: int, leaf: E.Expr, step: E.Expr) -> E.Expr:
    e = leaf
    for _ in range(n):
        e = E.Add(e, step)
    return e


def test_a_deep_chain_does_not_recurse():
    assert E.evaluate(_chain(DEEP, a, E.num(1)), {"a": 0.5}) == DEEP + 0.5
    assert E.exact(_chain(DEEP, E.num(0), E.num(F(1, 2)))) == DEEP // 2
    e = _chain(LONG, a, E.num(1))
    assert E.symbols(e) == {"a"}
    assert E.expanded_size(e, 10**9) == 2 * LONG + 1
    assert render(e) == "a" + " + 1" * LONG
    assert latex(e) == "a" + " + 1" * LONG
    neg = a
    for _ in range(LONG):
        neg = E.Neg(neg)
    assert E.evaluate(neg, {"a": 2.0}) == 2.0  # an even number of minuses
    assert render(neg) == "-" * LONG + "a"


def test_a_deep_chain_converts_to_sympy():
    n = 5_000  # several times Python's recursion limit; sympy's own flattening sets the pace
    x = sp.Symbol("a")
    assert to_sympy(_chain(n, a, E.num(1)), {"a": x}) == x + n


# ---- float evaluation --------------------------------------------------------------------------

ENV = {"a": 3.0, "wan_bw": 2.0}


@pytest.mark.parametrize(
    "expr,value",
    [
        (E.Add(a, E.num(2)), 5.0),
        (E.Sub(a, E.Sub(w, E.num(1))), 2.0),
        (E.Mul(E.Add(a, E.num(1)), w), 8.0),
        (E.Div(a, E.Mul(w, E.num(2))), 0.75),
        (E.Neg(E.Add(a, w)), -5.0),
        (E.Pow(E.Add(a, E.num(1)), F(2)), 16.0),
        (E.Pow(w, F(-2)), 0.25),
        (E.Pow(E.num(4), F(1, 2)), 2.0),
        (E.emin(a, w, E.num(5)), 2.0),
        (E.emax(a, w, E.num(-5)), 3.0),
        (E.log2(E.num(8)), 3.0),
        (E.ceil(E.Div(a, E.num(4))), 1.0),
        (E.ceil(E.num(-F(1, 2))), 0.0),
    ],
)
def test_evaluate(expr, value):
    assert E.evaluate(expr, ENV) == value


def test_ceil_forgives_rounding():
    # 0.1 + 0.2 is 0.30000000000000004 in floats: ten of it is 3, not a little over
    x = E.ceil(E.Mul(E.Sym("x"), E.num(10)))
    assert E.evaluate(x, {"x": 0.1 + 0.2}) == 3.0
    assert E.evaluate(x, {"x": 0.31}) == 4.0


@pytest.mark.parametrize(
    "expr,message",
    [
        (E.Sym("c"), "no value for 'c'"),
        (E.Div(a, E.Sub(w, w)), "division by zero"),
        (E.Pow(E.num(0), F(-1)), "division by zero"),
        (E.Pow(E.num(-2), F(1, 2)), "a fractional power of a negative number"),
        (E.Pow(E.num(10**200), F(2)), "a power too large"),
        (E.Mul(E.num(10**200), E.num(10**200)), "a value too large to represent"),
        (E.num(10**400), "a value too large to represent"),
        (E.log2(E.num(0)), "log2 of a value that is not positive"),
        # which fault is reported when there are two: the left operand's first,
        # but a division's divisor before its numerator
        (E.Add(E.log2(E.num(-1)), E.Sym("c")), "log2 of a value that is not positive"),
        (E.Add(E.Sym("c"), E.log2(E.num(-1))), "no value for 'c'"),
        (E.Div(E.log2(E.num(-1)), E.num(0)), "division by zero"),
        (E.Div(E.Sym("c"), E.Sym("d")), "no value for 'd'"),
        (E.Div(E.Sym("c"), E.num(2)), "no value for 'c'"),
        (E.emax(E.num(1), E.Sym("c"), E.Sym("d")), "no value for 'c'"),
    ],
)
def test_evaluate_errors(expr, message):
    with pytest.raises(E.EvalError) as err:
        E.evaluate(expr, ENV)
    assert str(err.value) == message


# ---- exact evaluation and structure --------------------------------------------------------------


@pytest.mark.parametrize(
    "expr,value",
    [
        (E.Add(E.num(F(1, 3)), E.num(F(1, 6))), F(1, 2)),
        (E.Div(E.num(1), E.num(3)), F(1, 3)),
        (E.Sub(E.num(1), E.Neg(E.num(2))), F(3)),
        (E.Pow(E.num(2), F(-2)), F(1, 4)),
        (E.Pow(E.num(0), F(2)), F(0)),
        (E.emin(E.num(3), E.num(F(5, 2))), F(5, 2)),
        (E.emax(E.num(3), E.num(F(5, 2))), F(3)),
        (E.ceil(E.num(F(7, 2))), F(4)),
        (E.log2(E.num(8)), F(3)),
        (E.Pow(E.num(0), F(-1)), None),
        (E.Pow(E.num(0), F(0)), None),
        (E.Pow(E.num(4), F(1, 2)), None),
        (E.log2(E.num(6)), None),
        (E.log2(E.num(F(1, 2))), None),
        (E.Div(E.num(1), E.num(0)), None),
        (E.Add(a, E.num(1)), None),
    ],
)
def test_exact(expr, value):
    assert E.exact(expr) == value


def test_symbols_and_expanded_size():
    x = E.Add(a, w)
    y = E.Mul(x, E.Sub(x, E.Sym("eff")))
    assert E.symbols(y) == {"a", "wan_bw", "eff"}
    assert E.symbols(E.num(1)) == set()
    assert E.expanded_size(y, 100) == 1 + 3 + (1 + 3 + 1)
    assert E.expanded_size(y, 5) == 5


# ---- sympy -----------------------------------------------------------------------------------


def test_sympy_by_hand():
    x, b = sp.Symbol("a", positive=True), sp.Symbol("wan_bw", positive=True)
    syms = {"a": x, "wan_bw": b}
    cases = [
        (E.Add(w, E.num(F(1, 2))), b + sp.Rational(1, 2)),
        (E.Sub(E.Mul(a, E.num(3)), E.Div(w, E.num(4))), 3 * x - b / 4),
        (E.Neg(E.Sub(a, w)), b - x),
        (E.Pow(a, F(-1, 2)), 1 / sp.sqrt(x)),
        (E.emax(E.num(12_000_000_000), w), sp.Max(sp.Integer(12_000_000_000), b)),
        (E.emin(a, w, E.num(3)), sp.Min(x, b, sp.Integer(3))),
        (E.ceil(E.Div(a, E.num(4))), sp.ceiling(x / 4)),
        (E.log2(a), sp.log(x) / sp.log(2)),
    ]
    for expr, want in cases:
        got = to_sympy(expr, syms)
        assert got == want and sp.srepr(got) == sp.srepr(want), (render(expr), got, want)


def test_sympy_memo_is_shared_across_calls():
    syms = {"a": sp.Symbol("a"), "wan_bw": sp.Symbol("wan_bw")}
    memo: dict = {}
    x = E.Add(a, E.num(1))
    first = to_sympy(x, syms, memo)
    assert memo[id(x)][0] is x  # the memo holds the node, so its id stays its own
    y = E.Mul(x, w)
    assert to_sympy(y, syms, memo) == (syms["a"] + 1) * syms["wan_bw"]
    assert to_sympy(x, syms, memo) is first
    assert memo[id(y)][0] is y


def _reference(e: E.Expr, symbols) -> sp.Expr:
    """Node by node, recursively: the converter to_sympy replaced (spec expressions are shallow)."""
    if isinstance(e, E.Num):
        return sp.Rational(e.value.numerator, e.value.denominator)
    if isinstance(e, E.Sym):
        return symbols[e.name]
    kids = [_reference(c, symbols) for c in e.children()]
    if isinstance(e, E.Add):
        return kids[0] + kids[1]
    if isinstance(e, E.Sub):
        return kids[0] - kids[1]
    if isinstance(e, E.Mul):
        return kids[0] * kids[1]
    if isinstance(e, E.Div):
        return kids[0] / kids[1]
    if isinstance(e, E.Neg):
        return -kids[0]
    if isinstance(e, E.Pow):
        return kids[0] ** sp.Rational(e.exp.numerator, e.exp.denominator)
    assert isinstance(e, E.Call)
    return {"min": sp.Min, "max": sp.Max, "ceil": sp.ceiling, "log2": lambda x: sp.log(x, 2)}[e.fn](*kids)


def _exprs(obj, out: list, seen: set) -> list:
    """Every Expr held by the checked model, through dataclasses, mappings and sequences."""
    if isinstance(obj, E.Expr):
        out.append(obj)
    elif id(obj) not in seen and not isinstance(obj, (str, bytes, int, float, Fraction)):
        seen.add(id(obj))
        if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
            for f in dataclasses.fields(obj):
                _exprs(getattr(obj, f.name), out, seen)
        elif isinstance(obj, Mapping):
            for v in obj.values():
                _exprs(v, out, seen)
        elif isinstance(obj, (list, tuple, set, frozenset)):
            for v in obj:
                _exprs(v, out, seen)
    return out


@pytest.mark.parametrize("path", SPECS, ids=[p.name for p in SPECS])
def test_sympy_printer_on_every_spec(path):
    spec = ctdsl.load(path).spec
    symbols = Symbols(spec)
    exprs = _exprs(spec, [], set())
    assert exprs, "the walk found no expressions"
    memo: dict = {}
    for e in exprs:
        want = _reference(e, symbols)
        for got in (to_sympy(e, symbols), to_sympy(e, symbols, memo)):
            assert got == want and sp.srepr(got) == sp.srepr(want), render(e)
        # the other printers and evaluators agree with sympy's value
        try:
            value = E.evaluate(e, spec.defaults())
        except E.EvalError:
            continue
        subs = {symbols[n]: spec.defaults()[n] for n in E.symbols(e)}
        assert close(float(want.subs(subs).evalf(30)), value), render(e)
