"""How the checked model's entities freeze their fields: read-only mappings, tuples, enums.

Every entity of `ctdsl.model.entities` converts its fields once, after `__init__`,
through `freeze`, so that a checked `Spec` holds only tuples and read-only mappings.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Mapping

from ctdsl.language.enums import Operation


def frozen_map(m: Mapping | None) -> Mapping | None:
    """A read-only view of a copy of `m` (`m` itself if it is already one)."""
    if m is None or isinstance(m, MappingProxyType):
        return m
    return MappingProxyType(dict(m))


def freeze(obj: object, **converters) -> None:
    """Convert fields in place after __init__ (frozen: through object.__setattr__)."""
    for name, convert in converters.items():
        value = getattr(obj, name)
        if value is not None:
            object.__setattr__(obj, name, convert(value))


def operations(values) -> tuple[Operation, ...]:
    return tuple(Operation(v) for v in values)
