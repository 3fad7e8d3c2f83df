"""The solve table of cost and carbon to target (docs/codesign.md), as plain rows.

`tables.py` makes it a `Grid` beside the others, only for a spec that prices
something or gives carbon; its parts that are zero for every scheme are left out.
"""

from __future__ import annotations


def _f(q) -> str:
    return "n/a" if q is None else str(q)


def money_rows(sol) -> tuple[str, list[str], list[list[str]], list[str]] | None:
    """(title, header, rows, notes) of cost and CO2e to target and their parts; None: nothing priced."""
    schemes = [r for r in sol.schemes.values() if r.cost_to_target is not None or r.co2e_to_target is not None]
    if not schemes:
        return None
    part = lambda r, k: r.cost_parts.get(k, r.co2e_parts.get(k))  # noqa: E731
    names = dict.fromkeys(k for r in schemes for k in (*r.cost_parts, *r.co2e_parts))
    parts = [k for k in names if any(part(r, k) and part(r, k).value for r in schemes)]
    rows = [[r.name, _f(r.cost_to_target), _f(r.co2e_to_target), *(_f(part(r, k)) for k in parts)] for r in schemes]
    notes = [
        "cost: hardware by the hour of use (or capex / depreciation), links by rate and time, energy x pue x power price; "
        "CO2e: energy x pue x carbon intensity, and embodied carbon / depreciation"
    ]
    return "Cost and carbon to target", ["scheme", "cost to target", "CO2e to target", *parts], rows, notes
