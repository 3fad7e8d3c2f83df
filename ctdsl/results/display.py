"""Where results look up how to show themselves.

The results are data and import no renderer; the report layer registers its
renderers here when it is imported (`ctdsl.report.notebook`, which `ctdsl.api`
imports), so that `Solution._repr_html_()` and friends work in a notebook
without a back edge from the data to the report.
"""

from __future__ import annotations

from typing import Any, Callable

_RENDERERS: dict[tuple[str, str], Callable[[Any], Any]] = {}


def register(kind: str, fmt: str, fn: Callable[[Any], Any]) -> None:
    _RENDERERS[(kind, fmt)] = fn


def render(kind: str, fmt: str, obj: Any) -> Any:
    fn = _RENDERERS.get((kind, fmt))
    if fn is None:
        raise LookupError(f"no {fmt} renderer for a {kind}: import ctdsl.report.notebook (ctdsl.load does)")
    return fn(obj)


def has(kind: str, fmt: str) -> bool:
    return (kind, fmt) in _RENDERERS
