"""A scheme's step as a ledger of terms, and the one rule that composes them.

A `Term` is one component of the step: a key (`ctdsl.language.components.ComponentKey`)
and, for a key that comes in several, a qualifier naming which one; a dimensioned
expression of the time it costs per step (`value`, what a reader shows and its share of
the step); how it enters the step (`charge`, below); where it is charged (`where`: the
GPUs, a pipeline stage, a phase of a sync over its links, a module's stages, a switch,
the workers' barrier); what it hides behind and how its exposure was computed
(`exposure`: a sync that overlaps the backward pass or later steps); how far its closed
form can be trusted (`closed_form`: the queueing and straggler terms); and a short note of
where its formula comes from (`source`).

A `Ledger` is a scheme's terms in order, with the two facts the composition needs: the
sync period H (`period`) and whether the scheme runs its syncs beside the compute
(`overlap = true`).

## The composition rule

    W = sum of the amounts of the compute-side terms charged every step
        (the inner step: compute, and with the training step's timeline recomputation,
        model-parallel traffic, the bubble, the optimiser and ZeRO-3's gathers; and the
        stragglers' wait)
    C = (sum of the amounts of the terms charged once per sync period) / H
        + sum of the amounts of the sync-side terms charged every step
    step = W + C, or max(W, C) with overlap = true

A term's amount is what it adds to the step: per step for a term charged every step
(`Charge.STEP`: the inner step's parts, the stragglers, the exposed part of an overlapped
sync, the phases of an inner sync every step), where it is its value unless said
otherwise; per sync period for a term charged once per period (`Charge.PERIOD`: the
transform, the phases of a plain sync every H steps, the overhead), whose amounts share
one quotient and whose value is amount / H. A term charged `WITHIN` others (the
queueing waits, part of the phases that cross the loaded links) adds nothing: the
amounts of those phases include it, and their values leave it out, so that the values
still sum to the step and each wait is shown apart.

What a sync hides is decided before it becomes a term (exposure.py): its exposed part is
max(0, max(B tau - w (B - 1)/B, tau) - slack) F / every, and the term records the window
and slack it hid in (`Exposure`). The step is the only place the terms are added up:
`Ledger.step` builds the expression every reader takes (results, break-evens, targets,
sweeps, the simulation's closed form); `Ledger.inner` is W without the stragglers (what
compute utilisation divides).

## Adding a term

A new effect is a new `ComponentKey` (its label, side and table group in
`language/components.py`) and a function that returns its `Term`s, appended where
costs.py assembles the ledger. The results (`assemble.py`), the simulation's plan, the
tables, the plots, the explorer, the JSON and the LaTeX read every term through its key,
charge and side: none of them names the new key unless it wants to say something of it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

import sympy as sp

from ctdsl import units as U
from ctdsl.language.components import INNER, Charge, ComponentId, ComponentKey, Place, Side
from ctdsl.symbolic import dimensioned as D
from ctdsl.symbolic.dimensioned import DimExpr


@dataclass(frozen=True)
class Where:
    """Where a term is charged: a kind of place and the names of the places (links, a phase, a module)."""

    place: Place
    names: tuple[str, ...] = ()


@dataclass(frozen=True)
class Exposure:
    """What a term hides behind, and the rule that left the part the step waits for."""

    behind: str  # in words: "the backward pass of the last micro-batch", "delay x the inner step"
    window: DimExpr  # the time it may hide in beside the compute (0 s: none)
    slack: DimExpr  # the time it may run on beside later steps (0 s: none)
    rule: str


@dataclass(frozen=True)
class ClosedForm:
    """How far a term's closed form can be trusted (queueing, stragglers)."""

    formula: str
    status: str  # exact | numerically integrated | approximation
    note: str = ""


@dataclass(frozen=True)
class Term:
    """One component of a scheme's step (the module docstring)."""

    key: ComponentKey
    value: DimExpr  # s per step: the component shown, and its share of the step
    charge: Charge
    where: Where
    qualifier: str = ""  # which one, for a key that comes in several
    amount: DimExpr | None = None  # what it adds to the step (the rule): per period (required), or per step (default: value)
    exposure: Exposure | None = None
    closed_form: ClosedForm | None = None
    source: str = ""

    def __post_init__(self) -> None:
        ComponentId(self.key, self.qualifier)  # a qualified key names which one, a plain key does not (ValueError)
        if self.value.dim != U.TIME:
            raise D.DimensionError(f"term {self.key.value} of {self.value.dim.describe()}, not a time: {self.value.e}")
        if self.charge is Charge.PERIOD and (self.amount is None or self.side is not Side.SYNC):
            raise ValueError(f"term {self.key.value}: a term charged per period is on the sync side, with its amount per period")
        if self.charge is Charge.WITHIN and self.amount is not None:
            raise ValueError(f"term {self.key.value}: a term within others adds no amount of its own")

    @property
    def id(self) -> ComponentId:
        return ComponentId(self.key, self.qualifier)

    @property
    def side(self) -> Side:
        return self.id.side

    @property
    def added(self) -> DimExpr | None:
        """What it adds to its side of the step: its amount, or its value; None within others."""
        if self.charge is Charge.WITHIN:
            return None
        return self.amount if self.amount is not None else self.value


@dataclass(frozen=True)
class Ledger:
    """A scheme's step terms, in the order the tables show them, and how they compose."""

    terms: tuple[Term, ...]
    period: DimExpr  # H, steps per sync period
    overlap: bool  # the syncs run beside the compute: step = max(W, C)

    def __post_init__(self) -> None:
        ids = [t.id for t in self.terms]
        if len(set(ids)) != len(ids):
            raise ValueError(f"a ledger names a component twice: {[i.id for i in ids]}")

    def __iter__(self) -> Iterator[Term]:
        return iter(self.terms)

    def get(self, key: ComponentKey, qualifier: str = "") -> Term | None:
        return next((t for t in self.terms if t.key is key and t.qualifier == qualifier), None)

    def of(self, key: ComponentKey) -> tuple[Term, ...]:
        """Every term of one key (the queueing on each set of links, the phases in a site, ...)."""
        return tuple(t for t in self.terms if t.key is key)

    @property
    def inner(self) -> DimExpr:
        """The inner step: the compute-side terms of a replica's step, without the stragglers' wait."""
        return D.total([t.value for t in self.terms if t.key in INNER], U.TIME)

    @property
    def worked(self) -> DimExpr:
        """W: the compute side (the inner step and the stragglers' wait)."""
        return D.total([t.added for t in self.terms if t.side is Side.COMPUTE and t.charge is Charge.STEP], U.TIME)

    @property
    def synced(self) -> DimExpr:
        """C: the sync side, (sum of the amounts charged per period) / H + the sync-side terms of every step."""
        per_period = D.total([t.added for t in self.terms if t.charge is Charge.PERIOD], U.TIME)
        every_step = D.total([t.added for t in self.terms if t.side is Side.SYNC and t.charge is Charge.STEP], U.TIME)
        return per_period / self.period + every_step

    def step(self, labels: dict[sp.Expr, str] | None = None) -> DimExpr:
        """The step time: W + C, or max(W, C) with overlap; `labels` gets the max's two sides named."""
        worked, synced = self.worked, self.synced
        if not self.overlap:
            return worked + synced
        if labels is not None:
            labels[worked.e] = "compute"
            labels[synced.e] = "transform and sync"
        return D.emax(worked, synced)


__all__ = ["Term", "Ledger", "Where", "Exposure", "ClosedForm"]
