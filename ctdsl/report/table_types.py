"""A solve table as plain rows: a title, a header, rows of cells (strings), notes and marked cells."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Table:
    title: str
    header: list[str]
    rows: list[list[str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    marked: set[tuple[int, int]] = field(default_factory=set)  # (row, col) cells to emphasise


__all__ = ["Table"]
