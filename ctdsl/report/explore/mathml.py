"""The symbolic forms and the params' display names as presentation MathML.

sympy's presentation MathML printer prints the result tree's expressions; each
param's symbol is wrapped in `<mrow class="ct-sym" data-i="K">` (K: the param's
index), so that the page can show the current values in its place on demand
and put the symbol back. A param with a display name is printed as that name
(`display_mathml`), as the page's controls show it; other symbol names are the
spec's param names, identifiers that the checker accepted. The printer builds
the markup as a DOM and escapes every text node, and the display names' reader
escapes every text it writes, so no spec text reaches the page unescaped.
"""

from __future__ import annotations

from xml.dom.minidom import parseString
from xml.sax.saxutils import escape

import sympy as sp
from sympy.printing.mathml import MathMLPresentationPrinter


class _Printer(MathMLPresentationPrinter):
    def __init__(self, index: dict[sp.Symbol, int], displays: dict[sp.Symbol, str] | None = None) -> None:
        super().__init__({"mul_symbol": "dot"})
        self._index = index
        self._displays = displays or {}

    def _print_Symbol(self, sym, style="plain"):
        shown = self._displays.get(sym)
        if shown is not None:  # the param's display name, as the controls show it (markup made and escaped here)
            inner = self.dom.importNode(parseString(f"<mrow>{_Tex(shown).atoms()}</mrow>").documentElement, True)
        else:
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


def mathml(expr: sp.Expr, args: tuple[sp.Symbol, ...], displays: dict[sp.Symbol, str] | None = None) -> str:
    """`<math>` markup of `expr`, each of `args` marked with its index; a symbol of `displays` printed as its display name."""
    printer = _Printer({s: k for k, s in enumerate(args)}, displays)
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


# ---- display names ----------------------------------------------------------------------------
#
# A param's display name is a small, safe subset of LaTeX (ctdsl.language.texname, the rule the
# checker's CT310 holds): letters, digits, _ ^ { }, spaces, , . ' - and \-commands for Greek
# letters, \mathrm, \text, \mathit, \mathbf and \ell. It is read here as LaTeX reads it in math
# mode (a letter is a variable, upright inside \mathrm, Greek capitals upright) and written as
# presentation MathML, with the source kept as its annotation. Every text node is escaped.

_GREEK = {
    "alpha": "α", "beta": "β", "gamma": "γ", "delta": "δ", "epsilon": "ϵ", "eta": "η", "theta": "θ",
    "kappa": "κ", "lambda": "λ", "mu": "μ", "nu": "ν", "rho": "ρ", "sigma": "σ", "tau": "τ", "phi": "ϕ",
    "chi": "χ", "psi": "ψ", "omega": "ω", "Delta": "Δ", "Sigma": "Σ", "Omega": "Ω", "Phi": "Φ", "Gamma": "Γ",
    "ell": "ℓ",
}  # fmt: skip
_OPS = {",": ",", ".": ".", "'": "′", "-": "−"}


class _Tex:
    """A reader of one display name: `atoms()` returns MathML of a sequence up to a closing brace."""

    def __init__(self, text: str) -> None:
        self.s, self.i = text, 0

    def _peek(self) -> str:
        return self.s[self.i] if self.i < len(self.s) else ""

    def _command(self) -> str:
        j = self.i + 1
        while j < len(self.s) and self.s[j].isascii() and self.s[j].isalpha():
            j += 1
        name, self.i = self.s[self.i + 1 : j], j
        return name

    def _group_text(self) -> str | None:
        """The raw text of a following {...} when it is plain (letters, digits, spaces, , . ' -), else None (not consumed)."""
        self._spaces()
        if self._peek() != "{":
            return None
        j = self.s.find("}", self.i)
        inner = self.s[self.i + 1 : j] if j > 0 else None
        if inner is None or any(c in "{\\_^" for c in inner):
            return None
        self.i = j + 1
        return inner

    def _spaces(self) -> None:
        while self._peek() == " ":
            self.i += 1

    def _atom(self, upright: bool) -> str | None:
        """One atom: a group, a letter, a run of digits, a command, or an operator; None at the end of a group."""
        self._spaces()
        c = self._peek()
        if c == "" or c == "}":
            return None
        if c == "{":
            self.i += 1
            inner, count = self._atoms(upright)
            if self._peek() == "}":
                self.i += 1
            return inner if count == 1 else f"<mrow>{inner}</mrow>"
        if c == "\\":
            name = self._command()
            if name in _GREEK:
                ch = _GREEK[name]
                normal = upright or name[0].isupper()
                return f'<mi mathvariant="normal">{ch}</mi>' if normal else f"<mi>{ch}</mi>"
            if name in ("mathrm", "text", "mathit", "mathbf"):
                plain = self._group_text()
                if plain is not None and plain.strip():
                    word = escape(plain)
                    if name == "text":
                        return f"<mtext>{word}</mtext>"
                    if name == "mathrm":  # an mi of several letters is upright
                        return f"<mi>{word}</mi>" if len(plain) > 1 else f'<mi mathvariant="normal">{word}</mi>'
                    letters = "".join(f"<mi>{escape(ch)}</mi>" for ch in plain if ch != " ")
                    return f'<mrow class="ct-bold">{letters}</mrow>' if name == "mathbf" else f"<mrow>{letters}</mrow>"
                arg = self._atom(upright or name in ("mathrm", "text"))
                arg = arg or "<mrow></mrow>"
                return f'<mrow class="ct-bold">{arg}</mrow>' if name == "mathbf" else arg
            return f"<mtext>{escape(name)}</mtext>"  # not a command the checker lets through: its name as text
        if c.isdigit():
            j = self.i
            while j < len(self.s) and (self.s[j].isdigit() or (self.s[j] == "." and j + 1 < len(self.s) and self.s[j + 1].isdigit())):
                j += 1
            run, self.i = self.s[self.i : j], j
            return f"<mn>{escape(run)}</mn>"
        self.i += 1
        if c in _OPS:
            return f"<mo>{escape(_OPS[c])}</mo>"
        if c in "_^":  # a script with nothing before it
            self.i -= 1
            return "<mrow></mrow>"
        return f'<mi mathvariant="normal">{escape(c)}</mi>' if upright else f"<mi>{escape(c)}</mi>"

    def atoms(self, upright: bool = False) -> str:
        return self._atoms(upright)[0]

    def _atoms(self, upright: bool) -> tuple[str, int]:
        """The MathML of a sequence up to a closing brace, and how many items it has."""
        out = []
        while True:
            base = self._atom(upright)
            if base is None:
                return "".join(out), len(out)
            sub = sup = None
            while True:
                self._spaces()
                c = self._peek()
                if c not in ("_", "^") or (sub if c == "_" else sup) is not None:
                    break
                self.i += 1
                arg = self._atom(upright) or "<mrow></mrow>"
                if c == "_":
                    sub = arg
                else:
                    sup = arg
            if sub is not None and sup is not None:
                out.append(f"<msubsup>{base}{sub}{sup}</msubsup>")
            elif sub is not None:
                out.append(f"<msub>{base}{sub}</msub>")
            elif sup is not None:
                out.append(f"<msup>{base}{sup}</msup>")
            else:
                out.append(base)


def display_mathml(text: str) -> str:
    """Inline `<math>` of a display name (`b_{\\mathrm{WAN}}` -> b with subscript WAN), its source as the annotation."""
    reader = _Tex(text)
    body = reader.atoms()
    while reader.i < len(reader.s):  # a stray closing brace (the checker refuses it): skip it and read on
        reader.i += 1
        body += reader.atoms()
    tex = escape(text)
    return (
        f'<math class="display-name"><semantics><mrow>{body}</mrow>'
        f'<annotation encoding="application/x-tex">{tex}</annotation></semantics></math>'
    )
