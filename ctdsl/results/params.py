"""The spec's params as sympy symbols, with their units and display names.

A param becomes a Symbol with `positive=True` when its default and range are
positive, so that simplification and solving can use the sign.
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from ctdsl.model.entities import Param, Spec
from ctdsl.model.printers import latex_name


@dataclass(frozen=True, slots=True)
class SymbolInfo:
    symbol: sp.Symbol
    param: Param

    @property
    def latex(self) -> str:
        return latex_name(self.param.name, self.param.display)


class Symbols:
    """The spec's params as sympy symbols, with units and display names."""

    def __init__(self, spec: Spec):
        self.info: dict[str, SymbolInfo] = {}
        for p in spec.params.values():
            positive = p.default > 0 and (p.lo is None or p.lo > 0)
            sym = sp.Symbol(p.name, positive=True) if positive else sp.Symbol(p.name, real=True)
            self.info[p.name] = SymbolInfo(sym, p)
        self.by_symbol = {i.symbol: i for i in self.info.values()}

    def __getitem__(self, name: str) -> sp.Symbol:
        return self.info[name].symbol

    def defaults(self) -> dict[sp.Symbol, float]:
        return {i.symbol: i.param.default for i in self.info.values()}

    def latex_names(self) -> dict[sp.Symbol, str]:
        return {i.symbol: i.latex for i in self.info.values()}
