"""The numeric back end: the symbolic results as numpy functions, over grids of params.

`ctdsl.symbolic` derives every cost as an exact sympy expression in the spec's
params. Here those expressions are compiled once (`forms.CompiledForms`: one
`lambdify` of all of them, with an explicit, ordered argument tuple, numpy as
the only module and common subexpressions shared), then evaluated over a grid of
param values (`grid.Grid`: 1-D to N-D, linear or log axes) in chunks of a fixed
number of points (`evaluate.iter_chunks`), so that memory stays bounded however
large the grid is. Each chunk carries, per scheme, the step time, time and
energy to target and the binding component, and the winner at each point.

Nothing here reads spec text: the only inputs are sympy expressions that
`ctdsl.symbolic` built and floats in base SI units.

    import ctdsl
    from ctdsl.numeric import CompiledForms, Grid, Axis, iter_chunks

    sol = ctdsl.load("specs/llama70b_wan.ct").solve()
    forms = CompiledForms(sol)
    grid = Grid.from_spec(sol.spec)           # the params with a sweep in the spec
    for chunk in iter_chunks(forms, grid):
        chunk.values[("adamw", "time_to_target")]   # a float64 array, one value per point
"""

from ctdsl.numeric.chunked import Chunk, evaluate, iter_chunks
from ctdsl.numeric.forms import CompiledForms
from ctdsl.numeric.grid import Axis, Grid

__all__ = ["Axis", "Chunk", "CompiledForms", "Grid", "evaluate", "iter_chunks"]
