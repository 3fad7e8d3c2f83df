"""Which component of a step binds: the rule the solver and the sweeps share.

Without overlap the step is the sum of its components, and the largest binds
(compute when all are zero). With overlap the step is
max(compute + stragglers, transform + sync): the larger side binds, and within it
its largest component. Ties go to the first component in the scheme's order.
"""

from __future__ import annotations

from collections.abc import Mapping

# the components of a replica's inner step (symbolic/timeline.py), in the order the tables show them
TP, CP, EP, PP = "tensor parallel", "context parallel", "expert parallel", "pipeline parallel"
INNER = ("compute", "recompute", TP, CP, EP, "pipeline bubble", PP, "optimiser", "parameter gathers")
MODEL_PARALLEL = INNER[1:]  # all of the inner step but the compute itself
# what overlap sets against transform and sync: the inner step and the stragglers' wait
COMPUTE_SIDE = (*INNER, "stragglers")


def is_exposed_sync(name: str) -> bool:
    """A component that is the exposed part of a sync (symbolic/exposure.py): `sync (exposed)`."""
    return name.endswith(" (exposed)")


def sides(components: list[str]) -> tuple[list[str], list[str]]:
    """(the compute side, the communication side) of a step's components."""
    return [k for k in components if k in COMPUTE_SIDE], [k for k in components if k not in COMPUTE_SIDE]


def binding(values: Mapping[str, float], overlap: bool) -> str:
    names = list(values)
    worked, others = sides(names)
    if overlap and others and worked:
        side = worked if sum(values[k] for k in worked) >= sum(values[k] for k in others) else others
        return max(side, key=lambda k: values[k])
    if overlap and others and not worked:
        return max(others, key=lambda k: values[k])
    total = sum(values.values())
    return max(names, key=lambda k: values[k]) if total else "compute"
