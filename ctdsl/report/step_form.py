"""The terms of a scheme's step equation, as the LaTeX writers print it (report/latex.py, paper.py).

The ledger's composition rule (ctdsl.symbolic.ledger), written with a symbol per term:

T = (compute side) + (the terms charged once per sync period: transform, the phases synced
    every H steps, overhead) / H + (the sync-side terms charged every step: the phases of an
    inner sync, each exposed sync)

where the compute side is t_compute, or with the training step's timeline the inner step
t_inner (compute, recomputation, model-parallel traffic, bubble, optimiser), plus the
stragglers' wait; a sync that overlaps the backward pass or later steps enters by its exposed
part only (docs/cost-model.md, "The training step"). Which symbol goes where is read from each
term's key and charge.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ctdsl.language.components import Charge, ComponentKey, Group


@dataclass
class StepTerms:
    compute: list[tuple[str, str]] = field(default_factory=list)  # (symbol, component or "inner")
    per_sync: list[str] = field(default_factory=list)  # symbols over H
    per_step: list[str] = field(default_factory=list)  # symbols added every step
    exposed: list[tuple[str, object]] = field(default_factory=list)  # (symbol, TermResult)
    phases: list[tuple[str, object, bool]] = field(default_factory=list)  # (symbol, PhaseResult, in the step)
    overhead_factor: float = 1.0  # fragments: F overheads per H steps


def step_terms(r, overhead_first: bool = False) -> StepTerms:
    """Which symbol stands for what in the step equation of scheme result `r`; the overhead's
    symbol comes after the phases', or with `overhead_first` before them (the paper's order)."""
    t = StepTerms()
    t.compute.append((r"t_{\mathrm{inner}}", "inner") if r.timeline is not None else (r"t_{\mathrm{compute}}", "compute"))
    if r.term(ComponentKey.STRAGGLERS) is not None:
        t.compute.append((r"t_{\mathrm{stragglers}}", "stragglers"))
    if r.transform is not None:
        t.per_sync.append(r"t_{\mathrm{transform}}")
    if r.overhead is not None and overhead_first:
        t.per_sync.append(r"t_{\mathrm{overhead}}")
    phases = {term.id.qualifier: term for term in r.of(Group.SYNC_IN_SITE, Group.SYNC_ACROSS_SITES)}
    for i, ph in enumerate(r.phases, 1):
        sym = f"t_{{{i}}}"
        term = phases.get(ph.name)
        t.phases.append((sym, ph, term is not None))
        if term is not None:
            (t.per_sync if term.charge is Charge.PERIOD else t.per_step).append(sym)
    for j, term in enumerate(r.of(Group.EXPOSED_SYNC), 1):
        t.exposed.append((rf"t_{{\mathrm{{x}}{j}}}" if j > 1 else r"t_{\mathrm{x}}", term))
    if r.overhead is not None:
        if not overhead_first:
            t.per_sync.append(r"t_{\mathrm{overhead}}")
        t.overhead_factor = r.syncs[-1].fragments if r.syncs else 1.0
    return t


def part_of(r, part: str):
    """The quantity of a compute-side symbol of `step_terms`: the inner step, or a component by its key."""
    return r.inner if part == "inner" else r.term(ComponentKey(part)).value


def step_pieces(t: StepTerms, H: float, overlap: bool) -> list[str]:
    """The right-hand side of T as pieces a line may break between."""
    names = [(f"{t.overhead_factor:g}\\,{s}" if s == r"t_{\mathrm{overhead}}" and t.overhead_factor != 1 else s) for s in t.per_sync]
    side = " + ".join(names) if names else "0"
    compute = " + ".join(s for s, _ in t.compute)
    over = rf"\frac{{{side}}}{{{H:g}}}" if H != 1 else side
    if overlap:
        return [rf"\max\left({compute},\ {over}\right)"]
    pieces = [compute]
    if names:
        pieces += [rf"+ \frac{{{side}}}{{{H:g}}}"] if H != 1 else [f"+ {n}" for n in names]
    more = [f"+ {s}" for s in t.per_step] + [f"+ {s}" for s, _ in t.exposed]
    if not names and not more:  # nothing to sync: the step is the compute, written as before
        pieces.append(f"+ {over}")
    return pieces + more


__all__ = ["StepTerms", "step_terms", "step_pieces", "part_of"]
