"""Counts in words: `1 scheme`, `2 schemes`, `1 data centre`."""

from __future__ import annotations

_PLURALS = {"data centre": "data centres", "break-even": "break-evens"}


def count_of(n: int, noun: str, plural: str | None = None) -> str:
    """`n noun`, the noun in the plural unless n is 1."""
    if n == 1:
        return f"1 {noun}"
    return f"{n:,} {plural or _PLURALS.get(noun) or noun + 's'}"
