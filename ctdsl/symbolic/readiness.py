"""When each Streaming DiLoCo fragment's outer gradient is ready: per layer, or at the step's end.

By default (`ready = step`) every fragment's sync starts when the step's compute ends, the
worst case. With `ready = layer` (the Streaming DiLoCo paper's simulator, arXiv:2501.18512
section 3 and appendix: the schedule is layer by layer), a fragment's outer gradient is ready
as soon as the backward pass has passed all of its layers, so its sync also hides behind the
rest of that backward pass. The backward pass runs from the last layer L to the first over a
window w (the last micro-batch's backward pass: the timeline's window, or without it 2/3 of
the step's compute), each layer taking w / L. Layer l is done after L - l + 1 of them; a
fragment is done when its lowest layer m is: at w (L - m + 1) / L, which leaves
e = w (m - 1) / L of the backward pass to hide behind.

Fragments of the L layers, F of them (n = ceil(L / F) layers each, the last one smaller):

- `fragment_order = strided` (the paper's default: fragment j holds layers j, j + F, ...):
  m_j = j, so e_j = w (j - 1) / L, at most w (F - 1) / L: little more than the worst case;
- `fragment_order = sequential` (fragment j holds layers (j - 1) n + 1 .. j n):
  m_j = (j - 1) n + 1, so e_j = w (j - 1) n / L: the fragment of the first layers hides
  nothing, the one of the last layers almost the whole backward pass.

Each fragment syncs once every H steps, so the step pays
sum_j max(0, x - e_j) / H, with x what one fragment exposes at the end of the step
(exposure.py: max(B tau - w (B - 1) / B, tau) - slack). This is exact for one first-in
first-out link when a fragment's sync ends before the next fragment's starts (F x delay <= H);
beyond that the link's pace F B tau / H bounds the step as before (exposure.py). With
`inner = dc` the fragment's inner sync is taken as done with its layers' backward pass (the
inner sync's own exposure is charged separately).
"""

from __future__ import annotations

import math

from ctdsl.language.enums import FragmentOrder
from ctdsl.symbolic import dimensioned as D
from ctdsl.symbolic.dimensioned import DimExpr
from ctdsl.symbolic.traffic import positive


def lowest_layers(layers: int, fragments: int, order: FragmentOrder) -> list[int]:
    """The lowest layer (1-based) of each fragment, fragment 1 first."""
    if order is FragmentOrder.STRIDED:
        return list(range(1, min(fragments, layers) + 1))
    n = math.ceil(layers / fragments)
    return [j * n + 1 for j in range(fragments) if j * n < layers]


def hidden(window: DimExpr, layers: int, fragments: int, order: FragmentOrder) -> list[DimExpr]:
    """e_j: what is left of the backward pass when fragment j's layers are done, per fragment."""
    return [window * (m - 1) / layers for m in lowest_layers(layers, fragments, order)]


def exposed(one: DimExpr, window: DimExpr, layers: int, fragments: int, order: FragmentOrder, every: DimExpr) -> DimExpr:
    """Per step: sum over the fragments of max(0, one - e_j), each once per `every` steps; `one`
    is what one fragment's sync exposes when it starts at the step's end."""
    parts = [positive(one - e) if e != 0 else positive(one) for e in hidden(window, layers, fragments, order)]
    return D.total(parts, one.dim) / every


__all__ = ["lowest_layers", "hidden", "exposed"]
