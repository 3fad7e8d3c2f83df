"""Which display names LaTeX output may print as math: one rule, for the checker (CT310) and the printers.

A param's display name (`param wan_bw = ... "b_{\\mathrm{WAN}}"`) goes into
math mode in the .tex, the report's equations and the plots' mathtext. It is
printed as it stands only when it is a small, safe subset of LaTeX:

- letters, digits, `_ ^ { } \\ , . ' -` and spaces, at most `DISPLAY_MAX` characters;
- every backslash starts a command from `SAFE_DISPLAY_COMMANDS` (Greek letters,
  `\\mathrm` and a few more), so `\\input`, `\\\\` and `\\{` are out;
- no `^^`: TeX reads `^^5c` as a backslash before any command is seen, so
  `"^^5cinput{^^2fetc^^2fpasswd}"` would read a file;
- braces balanced, never closing before they open;
- a well-formed math list: every `^` and `_` has its argument (a letter, a
  digit, a command or a `{group}`), no nucleus has two superscripts or two
  subscripts (a prime `'` is a superscript), `\\mathrm` and the other commands
  that take an argument have one, and `\\text{...}` holds text: no `^`, `_`
  or command.

The last rule is what makes a name safe to compose with: a printer appends a
superscript (`b^{*}` for a break-even's root, `b^{2}` in a formula), and `b^`
would become `b^^{*}`, TeX's `^^{` escape (a `;`, leaving the `}` unbalanced),
`b_` would become `b_^{*}`, and `b^{2}` would become `b^{2}^{*}`, a double
superscript. A name that passes is a whole math list, and `atom` gives the form
a script may follow: the name itself, or the name in braces when its last
nucleus already has a superscript.

Anything else is refused by the checker (CT310, with `problem`'s reason), and a
printer that meets one anyway prints it as escaped text
(`ctdsl.report.encode.tex_display`).
"""

from __future__ import annotations

import re

DISPLAY_MAX = 64  # characters in a display name

SAFE_DISPLAY_COMMANDS = frozenset(
    {
        "alpha", "beta", "gamma", "delta", "epsilon", "eta", "theta", "kappa", "lambda", "mu", "nu",
        "rho", "sigma", "tau", "phi", "chi", "psi", "omega", "Delta", "Sigma", "Omega", "Phi", "Gamma",
        "mathrm", "text", "mathit", "mathbf", "ell",
    }
)

_CHARS = re.compile(r"[A-Za-z0-9_^{}\\ ,.'-]*")


def _balanced(text: str) -> bool:
    depth = 0
    for ch in text:
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth < 0:
                return False
    return depth == 0


_WITH_ARGUMENT = frozenset({"mathrm", "text", "mathit", "mathbf"})  # the safe commands that take one
_TOKEN = re.compile(r"\\[A-Za-z]*|.", re.S)


class _Unsafe(Exception):
    pass


class _Reader:
    """A recursive reading of a display name as a TeX math list (the subset `safe_display` allows)."""

    def __init__(self, text: str):
        self.tokens = _TOKEN.findall(text)
        self.i = 0

    def peek(self) -> str | None:
        while self.i < len(self.tokens) and self.tokens[self.i] == " ":
            self.i += 1  # spaces do nothing in math mode
        return self.tokens[self.i] if self.i < len(self.tokens) else None

    def next_raw(self) -> str | None:
        """The next token, spaces included (LaTeX's prime looks at the very next one)."""
        return self.tokens[self.i] if self.i < len(self.tokens) else None

    def take(self) -> str:
        t = self.peek()
        if t is None:
            raise _Unsafe("it ends where a script or a command needs its argument")
        self.i += 1
        return t

    def group(self, text_mode: bool) -> None:
        """After a `{`: a math list (or text) up to its `}`."""
        self.items(text_mode)
        if self.take() != "}":  # pragma: no cover (braces are balanced by then)
            raise _Unsafe("its braces do not balance")

    def argument(self, text_mode: bool = False) -> None:
        """One argument: a `{group}`, a command, or a single letter or digit."""
        t = self.take()
        if t == "{":
            self.group(text_mode)
        elif t.startswith("\\"):
            if t[1:] in _WITH_ARGUMENT:
                raise _Unsafe(f"{t} as an argument needs braces around it")
            self.command(t[1:], text_mode)
        elif not t.isalnum():
            raise _Unsafe(f"'{t}' cannot follow a script or a command")

    def command(self, name: str, text_mode: bool) -> None:
        if name not in SAFE_DISPLAY_COMMANDS:
            raise _Unsafe(f"\\{name} is not one of the commands allowed")
        if text_mode:
            raise _Unsafe(f"\\{name} inside \\text{{...}} is not text")
        if name in _WITH_ARGUMENT:
            self.argument(text_mode=name == "text")

    def items(self, text_mode: bool) -> bool:
        """A math list up to a `}` or the end; whether its last nucleus has a superscript."""
        sup = sub = False
        while (t := self.peek()) is not None and t != "}":
            self.i += 1
            if t in "^_'":
                if text_mode:
                    raise _Unsafe(f"'{t}' inside \\text{{...}} is not math")
                if t == "'":
                    if sup or sub:
                        raise _Unsafe("a prime after a script is a second superscript")
                    while self.next_raw() == "'":  # primes right after each other: one superscript
                        self.i += 1
                    if self.next_raw() == "^":  # and a superscript right after them (not after a space)
                        self.i += 1
                        if self.peek() in ("^", "_", "'"):
                            raise _Unsafe("a script's argument is another script (^^ is TeX's character escape)")
                        self.argument()
                    sup = True
                    continue
                if (sup if t == "^" else sub):
                    raise _Unsafe(f"one nucleus has two {'superscripts' if t == '^' else 'subscripts'}")
                if self.peek() in ("^", "_", "'"):
                    raise _Unsafe("a script's argument is another script (^^ is TeX's character escape)")
                self.argument()
                sup, sub = sup or t == "^", sub or t == "_"
                continue
            sup = sub = False  # a new nucleus
            if t == "{":
                self.group(text_mode)
            elif t.startswith("\\"):
                self.command(t[1:], text_mode)
        return sup


def problem(text: str) -> str | None:
    """Why a display name may not be printed as LaTeX math as it stands, or None."""
    if len(text) > DISPLAY_MAX:
        return f"it is longer than {DISPLAY_MAX} characters"
    if not _CHARS.fullmatch(text):
        return "it has a character other than letters, digits, _ ^ { } \\ , . ' - and spaces"
    if "^^" in text:
        return "^^ is TeX's character escape"
    if not _balanced(text):
        return "its braces do not balance"
    reader = _Reader(text)
    try:
        reader.items(text_mode=False)
    except _Unsafe as why:
        return str(why)
    return None


def safe_display(text: str) -> bool:
    """Whether a display name may be printed as LaTeX math as it stands."""
    return problem(text) is None


def atom(display: str) -> str:
    """A safe display name as something a superscript or a subscript may follow: in braces when its
    last nucleus already has a superscript (`{b^{2}}` then takes `^{*}`), else as it is."""
    reader = _Reader(display)
    return "{" + display + "}" if reader.items(text_mode=False) else display


__all__ = ["DISPLAY_MAX", "SAFE_DISPLAY_COMMANDS", "atom", "problem", "safe_display"]
