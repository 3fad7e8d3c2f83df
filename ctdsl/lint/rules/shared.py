"""What several rules share: how they print numbers, whose definitions they report,
and the labels they attach."""

from __future__ import annotations

from ctdsl import units as U
from ctdsl.diagnostics import Label, Span
from ctdsl.lint.context import Context
from ctdsl.model import entities as M


def quantity(value: float, dim: U.Dim) -> str:
    return U.format_quantity(value, dim)


def times(factor: float) -> str:
    """A ratio as `12.5x` or `1,000x`."""
    return f"{factor:,.0f}x" if factor >= 1000 else f"{factor:.3g}x"


def is_user(ctx: Context, d: M.Definition) -> bool:
    """Whether `d` is the user's own (not a library preset, nor defined in a library file)."""
    return not d.from_std and not ctx.is_std(d.file)


def shown_label(ctx: Context, span: Span | None, text: str) -> tuple[Label, ...]:
    """A secondary label at `span`, if it is in a file the finding may point at."""
    return (Label(span, text),) if ctx.shown(span) else ()


__all__ = ["quantity", "times", "is_user", "shown_label"]
