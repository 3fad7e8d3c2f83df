"""The whole solution: every scheme, the models' sizes and the break-evens."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ctdsl import units as U
from ctdsl.model.entities import Spec
from ctdsl.results import display, reprs
from ctdsl.results.frozen import FrozenDict
from ctdsl.results.params import Symbols
from ctdsl.results.quantity import Quantity


@dataclass(frozen=True, slots=True)
class BreakevenResult:
    x: str
    y: str
    over: str
    dim: U.Dim
    result: Any  # the solver's answer (roots with exact forms and values), or None
    missing: str | None = None  # why it could not be asked (no steps to target)
    symbols: Symbols | None = None
    on: str = "time"  # what to target is compared: time, energy, cost or co2e; for hand-offs ttft, ttft_p, e2e, e2e_p or energy (a token's)
    workload: str | None = None  # hand-offs compared: the workload whose paths through them are

    @property
    def better(self) -> str:
        """What the scheme named below or above a root is: faster, or cheaper, ..."""
        words = {"time": "faster", "energy": "less energy", "cost": "cheaper", "co2e": "less CO2e"}
        words.update({"ttft": "lower TTFT", "ttft_p": "lower TTFT at the percentile", "e2e": "lower end to end", "e2e_p": "lower end to end at the percentile"})
        return words.get(self.on, self.on)

    @property
    def roots(self):
        return self.result.roots if self.result else []

    def describe(self) -> str:
        if self.missing:
            return self.missing
        r = self.result
        if not r.roots:
            return f"never in range: {r.reason}"
        parts = []
        for root in r.roots:
            how = " (numeric root)" if root.numeric else ""
            parts.append(
                f"{self.over} = {U.format_quantity(root.value, self.dim)}{how}: {root.below} {self.better} below, {root.above} above"
            )
        return "; ".join(parts)

    def __repr__(self) -> str:
        return reprs.breakeven_repr(self)

    def _repr_latex_(self) -> str:
        return display.render("breakeven", "latex", self)

    def _repr_html_(self) -> str:
        return display.render("breakeven", "html", self)


@dataclass(frozen=True, slots=True)
class ModelResult:
    """Sizes that follow from a model: its parameters, update, FLOPs and KV cache."""

    name: str
    params: float
    dense: Quantity  # one BF16 (v-byte) update: v P
    flops_per_step: Quantity | None  # per worker
    kv_per_token: Quantity | None  # 2 L g (d/h) v, when the shape is known
    kv_tokens: float | None
    kv_handoff: Quantity | None  # kv_tokens x kv_per_token


@dataclass(frozen=True, slots=True)
class MemoryResult:
    """Memory per GPU of one model in one dc: the shard's weights, gradients, optimiser
    states and activations, against the device's memory."""

    model: str
    dc: str
    parts: FrozenDict  # str -> Quantity (bytes per GPU)
    total: Quantity
    capacity: Quantity | None  # None: the device gives no memory
    note: str

    @property
    def fits(self) -> bool | None:
        """Whether the total fits the device's memory; None where either is unknown."""
        if self.capacity is None or self.total.value != self.total.value:
            return None
        return self.total.value <= self.capacity.value


@dataclass(frozen=True, slots=True)
class Solution:
    spec: Spec
    symbols: Symbols
    schemes: FrozenDict  # name -> SchemeResult
    breakevens: tuple[BreakevenResult, ...]
    baseline: str | None
    models: FrozenDict  # name -> ModelResult
    memory: tuple[MemoryResult, ...] = ()  # per model trained and dc
    targets: tuple = ()  # results.targets.TargetResult, one per value and scheme of each `target` statement
    serving: tuple = ()  # results.serving.PathResult, one per path a workload's requests take (docs/serving.md)

    def _repr_html_(self) -> str:
        return display.render("solution", "html", self)

    def _repr_latex_(self) -> str:
        return display.render("solution", "latex", self)

    def _repr_markdown_(self) -> str:
        return display.render("solution", "markdown", self)

    def to_json(self) -> dict:
        return display.render("solution", "json", self)

    def __str__(self) -> str:
        if not display.has("solution", "text"):
            return repr(self)
        return display.render("solution", "text", self)

    def __repr__(self) -> str:
        return reprs.solution_repr(self)
