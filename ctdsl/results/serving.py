"""The serving results `solve` returns: one `PathResult` per way a workload's requests go.

Each holds its terms (`ServingTermResult`: a key, its label, the quantity with its exact
form, how far the closed form holds and where it comes from), the capacity bound of every
pool and link in requests/s, the sustainable rate (their minimum) and what binds it, and
the goodput under the workload's SLO. The report layer prints them (tables, JSON, CSV,
Markdown); docs/serving.md names the keys.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ctdsl.results.frozen import FrozenDict
from ctdsl.results.quantity import Quantity


@dataclass(frozen=True, slots=True)
class ServingTermResult:
    key: str  # stable: prefill, handoff, decode_step, ttft, ... (docs/serving.md)
    label: str
    quantity: Quantity
    closed_form: str  # exact | approximation
    formula: str  # the form in words and symbols
    source: str  # where the form comes from


@dataclass(frozen=True, slots=True)
class PathResult:
    name: str  # workload/handoff, or workload/pool when colocated
    workload: str
    entry: str
    handoff: str | None
    handoff_label: str | None
    decode: str | None
    rate: Quantity  # the workload's arrival rate, 1/s
    terms: FrozenDict  # key -> ServingTermResult, in order
    capacities: FrozenDict  # "prefill" | "decode" | "link" | "colocated" -> Quantity (requests/s)
    sustainable: Quantity  # requests/s: the least capacity
    binding: str  # the capacity that sets it
    over_capacity: bool  # the workload's rate is at or above the sustainable rate: the queues do not settle
    goodput: Quantity | None  # requests/s under the SLO; None without an slo
    goodput_binding: str | None  # the target or capacity that sets it
    targets: FrozenDict = field(default_factory=FrozenDict)  # the SLO's "ttft" | "tpot" | "e2e" -> Quantity (s), those it gives
    percentile: float | None = None  # the SLO's percentile (ttft and e2e are held at it); None without an slo

    def term(self, key: str) -> ServingTermResult | None:
        return self.terms.get(key)

    def value(self, key: str) -> float | None:
        t = self.terms.get(key)
        return t.quantity.value if t is not None else None


__all__ = ["PathResult", "ServingTermResult"]
