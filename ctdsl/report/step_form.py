"""The terms of a scheme's step equation, as the LaTeX writers print it (report/latex.py, paper.py).

T = (compute side) + (transform + the phases synced every H steps + overhead) / H
    + (the phases of an inner sync, every step) + (each exposed sync)

where the compute side is t_compute, or with the training step's timeline the inner step
t_inner (compute, recomputation, model-parallel traffic, bubble, optimiser), plus the
stragglers' wait; a sync that overlaps the backward pass or later steps enters by its exposed
part only (docs/cost-model.md, "The training step").
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ctdsl.language.binding import is_exposed_sync


@dataclass
class StepTerms:
    compute: list[tuple[str, str]] = field(default_factory=list)  # (symbol, component or "inner")
    per_sync: list[str] = field(default_factory=list)  # symbols over H
    per_step: list[str] = field(default_factory=list)  # symbols added every step
    exposed: list[tuple[str, str]] = field(default_factory=list)  # (symbol, component name)
    phases: list[tuple[str, object, bool]] = field(default_factory=list)  # (symbol, PhaseResult, in the step)
    overhead_factor: float = 1.0  # fragments: F overheads per H steps


def step_terms(r) -> StepTerms:
    """Which symbol stands for what in the step equation of scheme result `r`."""
    t = StepTerms()
    t.compute.append((r"t_{\mathrm{inner}}", "inner") if r.timeline is not None else (r"t_{\mathrm{compute}}", "compute"))
    if "stragglers" in r.components:
        t.compute.append((r"t_{\mathrm{stragglers}}", "stragglers"))
    if r.transform is not None:
        t.per_sync.append(r"t_{\mathrm{transform}}")
    for i, ph in enumerate(r.phases, 1):
        sym = f"t_{{{i}}}"
        plain = ph.name in r.components
        t.phases.append((sym, ph, plain))
        if plain:
            (t.per_step if ph.every_step else t.per_sync).append(sym)
    for j, name in enumerate([k for k in r.components if is_exposed_sync(k)], 1):
        t.exposed.append((rf"t_{{\mathrm{{x}}{j}}}" if j > 1 else r"t_{\mathrm{x}}", name))
    if r.overhead is not None:
        t.per_sync.append(r"t_{\mathrm{overhead}}")
        t.overhead_factor = r.syncs[-1].fragments if r.syncs else 1.0
    return t


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


__all__ = ["StepTerms", "step_terms", "step_pieces"]
