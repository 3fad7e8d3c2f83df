"""How many fragments a Streaming DiLoCo scheme syncs its model in.

A scheme gives its fragments as a count (`fragments = F`) or as a size in layers
(`fragment_layers = n`, as the papers write it: "fragments of 3 layers"), in which
case F = ceil(L / n) for the model's L layers (Streaming DiLoCo, arXiv:2501.18512
section 2.2: the model's layers cut into fragments of equal size; a remainder makes
one smaller fragment, which still takes a sync of its own). Without either, F = 1.
"""

from __future__ import annotations

from ctdsl.model.entities import Model, Scheme
from ctdsl.symbolic import dimensioned as D
from ctdsl.symbolic.context import Context
from ctdsl.symbolic.dimensioned import DimExpr


def count(ctx: Context, scheme: Scheme, model: Model) -> DimExpr:
    """F: the scheme's fragments, given, or from their size in layers (the checker makes sure the
    model has layers where `fragment_layers` is given, CT123)."""
    if scheme.fragment_layers is not None:
        return D.ceiling(ctx.shape(model, "layers") / ctx.field(scheme, "fragment_layers"))
    return ctx.field(scheme, "fragments") if scheme.fragments is not None else D.one()


__all__ = ["count"]
