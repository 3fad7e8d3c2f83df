"""`Failure`: a problem found after checking, as diagnostics.

A spec that checks clean can still ask for something a back end cannot do: a
break-even whose times split into more regimes than the solver enumerates, or
that cannot be evaluated at the ends of its range. The back end raises
`Failure` with diagnostics that carry a stable code (CT7xx) and point at the
spec element that asked (the `breakeven` statement, the scheme). The CLI
prints them like the checker's and exits 1; a library caller catches
`Failure` and reads `diagnostics`.
"""

from __future__ import annotations

from ctdsl.diagnostics import Diagnostic


class Failure(Exception):
    def __init__(self, diagnostics: list[Diagnostic] | tuple[Diagnostic, ...]):
        self.diagnostics = tuple(diagnostics)
        super().__init__("; ".join(f"{d.code} {d.message}" for d in self.diagnostics))


__all__ = ["Failure"]
