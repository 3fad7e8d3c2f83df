"""The symbolic forms as presentation MathML, with each param marked for substitution.

sympy's presentation MathML printer prints the result tree's expressions; each
param's symbol is wrapped in `<mrow class="ct-sym" data-i="K">` (K: the param's
index), so that the page can show the current values in its place on demand
and put the symbol back. Symbol names are the spec's param names, identifiers
that the checker accepted; the printer builds the markup as a DOM and escapes
every text node, so no spec text reaches the page unescaped.
"""

from __future__ import annotations

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
