"""The bytes table (per sync and per step) and the targets table, as plain rows.

Bytes: what a scheme moves per sync, and per step (per sync / H, the period),
with the payload and the wire against the dense update. Targets: for each
`target` statement's value and scheme, the param's value at which the quantity
reaches the target, marked exact or numeric, or "never in range" with the reason.
"""

from __future__ import annotations

from ctdsl import units as U
from ctdsl.results.targets import WORDS
from ctdsl.report.blocks import Grid


def _f(q) -> str:
    return "n/a" if q is None else str(q)


def _ratio(x: float) -> str:
    return f"{x:.4g}x" if x == x and x != float("inf") else "n/a"


def _per_step(q, period: float) -> str:
    return U.format_quantity(q.value / period, q.dim) if q is not None and period else "n/a"


def _over(a, b) -> float:
    return a.value / b.value if b is not None and b.value else float("nan")


def bytes_table(sol) -> Grid:
    # the sites each scheme runs on, when some scheme runs on a variant of them
    on = any(r.sites is not None for r in sol.schemes.values())
    t = Grid(
        "Bytes per sync and per step",
        ["scheme", *(["sites"] if on else []), "payload", "collective", "payload bytes", "wire / worker", "WAN (busiest link)", "dense / payload",
         "payload / step", "wire / step", "WAN / step", "payload / dense", "wire / dense"],
    )
    for r in sol.schemes.values():
        sites = [r.sites or "declared"] if on else []
        H = r.period
        t.rows.append([
            r.name, *sites, r.payload_kind, r.collective, _f(r.payload), _f(r.wire), _f(r.wan), f"{r.ratio:.2f}x" if r.ratio == r.ratio and r.ratio != float("inf") else "n/a",
            _per_step(r.payload, H), _per_step(r.wire, H), _per_step(r.wan, H), _ratio(_over(r.payload, r.dense)), _ratio(_over(r.wire, r.dense)),
        ])
    t.notes.append("payload: what a worker originates; wire: what it sends under the collective; WAN: bytes on the busiest WAN link, one direction")
    t.notes.append("per sync, then per step: per sync / H (steps between syncs); payload / dense and wire / dense: against one dense update (v P)")
    if on:
        t.notes.append("sites: the variant of the hardware a scheme runs on (declared: the dcs and WAN links as declared)")
    inner = [r.name for r in sol.schemes.values() if any(p.every_step for p in r.phases)]
    if inner:
        t.notes.append(f"{', '.join(inner)}: with inner = dc a sync counts its period's H inner syncs inside the dcs too, so the wire per step is what a GPU sends every step")
    return t


def targets_table(sol) -> Grid | None:
    rows = getattr(sol, "targets", ())
    if not rows:
        return None
    t = Grid("Targets", ["quantity", "target", "scheme", "over", "value", "how"])
    for r in rows:
        head = [WORDS.get(r.quantity, r.quantity), r.shown_target, r.scheme, r.over]
        if not r.roots:
            t.rows.append([*head, "never in range", r.reason or "-"])
            continue
        for root in r.roots:
            side = "above" if root.rises else "below"
            t.rows.append([*head, U.format_quantity(root.value, r.dim), ("numeric root" if root.numeric else "exact") + f"; {side} target for larger {r.over}"])
    t.notes.append("value: where the quantity equals the target inside the param's range, the other params at their defaults")
    t.notes.append("exact: a closed-form root, checked by a sign change; numeric: a scan and Brent's method, checked the same way")
    return t


__all__ = ["bytes_table", "targets_table"]
