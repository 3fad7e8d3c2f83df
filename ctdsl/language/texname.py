"""Which display names LaTeX output may print as math: one rule, for the checker (CT310) and the printers.

A param's display name (`param wan_bw = ... "b_{\\mathrm{WAN}}"`) goes into
math mode in the .tex, the report's equations and the plots' mathtext. It is
printed as it stands only when it is a small, safe subset of LaTeX:

- letters, digits, `_ ^ { } \\ , . ' -` and spaces, at most `DISPLAY_MAX` characters;
- every backslash starts a command from `SAFE_DISPLAY_COMMANDS` (Greek letters,
  `\\mathrm` and a few more), so `\\input`, `\\\\` and `\\{` are out;
- no `^^`: TeX reads `^^5c` as a backslash before any command is seen, so
  `"^^5cinput{^^2fetc^^2fpasswd}"` would read a file;
- braces balanced, never closing before they open.

Anything else is refused by the checker, and a printer that meets one anyway
prints it as escaped text (`ctdsl.report.encode.tex_display`).
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


def safe_display(text: str) -> bool:
    """Whether a display name may be printed as LaTeX math as it stands."""
    if len(text) > DISPLAY_MAX or not _CHARS.fullmatch(text) or "^^" in text or not _balanced(text):
        return False
    commands = re.findall(r"\\([A-Za-z]*)", text)
    return text.count("\\") == len(commands) and all(c in SAFE_DISPLAY_COMMANDS for c in commands)


__all__ = ["DISPLAY_MAX", "SAFE_DISPLAY_COMMANDS", "safe_display"]
