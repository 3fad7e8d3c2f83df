"""The symbolic forms as presentation MathML, with each param marked for substitution.

sympy's presentation MathML printer prints the result tree's expressions; each
param's symbol is wrapped in `<mrow class="ct-sym" data-i="K">` (K: the param's
index), so that the page can show the current values in its place on demand
and put the symbol back. Symbol names are the spec's param names, identifiers
that the checker accepted; the printer builds the markup as a DOM and escapes
every text node, so no spec text reaches the page unescaped.
"""

from __future__ import annotations

from xml.sax.saxutils import escape

import sympy as sp
from sympy.printing.mathml import MathMLPresentationPrinter


class _Printer(MathMLPresentationPrinter):
    def __init__(self, index: dict[sp.Symbol, int]) -> None:
        super().__init__({"mul_symbol": "dot"})
        self._index = index

    def _print_Symbol(self, sym, style="plain"):
        inner = super()._print_Symbol(sym, style)
        k = self._index.get(sym)
        if k is None:
            return inner
        wrap = self.dom.createElement("mrow")
        wrap.setAttribute("class", "ct-sym")
        wrap.setAttribute("data-i", str(k))
        wrap.appendChild(inner)
        return wrap

    _print_Dummy = _print_Symbol


def mathml(expr: sp.Expr, args: tuple[sp.Symbol, ...]) -> str:
    """`<math>` markup of `expr`, each of `args` marked with its index."""
    printer = _Printer({s: k for k, s in enumerate(args)})
    body = printer.doprint(expr)
    return f'<math display="block">{body}</math>'


def mathml_equation(lhs: str, expr: sp.Expr | None, value: str, unit: str, approx: bool = False) -> str:
    """`lhs = expr unit` (or `lhs ≈ value`) as block MathML; `lhs`, `value` and `unit` are escaped as text.

    For the report: an exact form in the other params, with its unit; a numeric
    root has no form and shows its value.
    """
    left = f"<msup><mi>{escape(lhs)}</mi><mo>*</mo></msup>"
    if expr is None:
        return f'<math display="block"><mrow>{left}<mo>&#8776;</mo><mtext>{escape(value)}</mtext></mrow></math>'
    body = _Printer({}).doprint(expr)
    tail = f'<mspace width="0.25em"/><mtext>{escape(unit)}</mtext>' if unit and unit != "1" else ""
    return f'<math display="block"><mrow>{left}<mo>=</mo>{body}{tail}</mrow></math>'
