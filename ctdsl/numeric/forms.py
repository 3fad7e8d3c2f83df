"""Every scheme's symbolic costs, compiled once into one numpy function.

`CompiledForms(solution)` gathers, for each scheme, the sympy expressions of its
step time, time and energy to target and each step-time component, and hands
them all to one `sympy.lambdify` call:

- the argument tuple is explicit and ordered: every param's symbol, in the order
  the spec declares them (`names`), whether a sweep moves it or not;
- `modules="numpy"` only; `dummify=True`, so that no param name ever becomes a
  Python identifier in the generated code;
- `cse=True`: the schemes share subexpressions (compute time, 1 / bandwidth, the
  slowest link of a phase), which are then computed once per call.

The expressions come from `ctdsl.symbolic` (built node by node from the checked
model, never from text), so lambdify only ever prints sympy objects that ctdsl
built. Max and Min print as `numpy.maximum` / `numpy.minimum` reductions, which
broadcast scalars against arrays.

ceiling() is the one function whose float evaluation needs care: the solver's
`value()` takes the ceiling of x - 1e-12 |x| so that a quotient that should be a
whole number, but comes out a hair above it in floating point, is not pushed up
by one. The same rule is applied here (`_ceil`), so sweep and solve agree.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass

import numpy as np
import sympy as sp

from ctdsl.language.components import ComponentId
from ctdsl.language.tolerances import CEIL_SLACK
from ctdsl.results.solution import Solution

_FLOAT_INT = int(sys.float_info.max)  # the largest integer a float holds

# quantities per scheme, in the order they are reported
STEP = "step"
TIME = "time_to_target"
ENERGY = "energy_to_target"


class _ceil_tol(sp.Function):  # noqa: N801 - printed by name in the generated code
    """ceiling(x) with the solver's tolerance (see the module docstring)."""

    nargs = 1


def _ceil_numpy(x):
    x = np.asarray(x, dtype=float)
    return np.ceil(x - CEIL_SLACK * np.maximum(1.0, np.abs(x)))


def _tolerant(expr: sp.Expr) -> sp.Expr:
    ceilings = {c: _ceil_tol(c.args[0]) for c in expr.atoms(sp.ceiling)}
    return _floats(expr.xreplace(ceilings) if ceilings else expr)


def _float(x) -> float:
    """float(x) of an exact number: +/-inf beyond the float range."""
    try:
        return float(x)
    except OverflowError:
        return math.inf if x > 0 else -math.inf


def _floats(expr: sp.Expr) -> sp.Expr:
    """Exact numbers beyond the float range as the float numpy would make of them (+/-inf, 0).

    lambdify prints an exact integer or p/q as Python arithmetic, which raises
    OverflowError inside the generated function when it does not fit a float; a
    sympy Float of the same value prints as a literal that Python reads as inf.
    """
    big = {}
    for r in expr.atoms(sp.Rational):
        if max(abs(r.p), abs(r.q)) > _FLOAT_INT:
            try:
                f = r.p / r.q
            except OverflowError:
                f = math.inf if (r.p > 0) == (r.q > 0) else -math.inf
            big[r] = sp.Float(f) if math.isfinite(f) else (sp.oo if f > 0 else -sp.oo)
    return expr.xreplace(big) if big else expr


# a serving path's terms a sweep evaluates (docs/sweeps.md): what it prints and what says whether its queues settle
SERVING_SWEPT = ("ttft_p", "tpot", "e2e_p", "energy_per_token", "prefill_utilisation", "link_utilisation", "decode_batch", "decode_batch_max")


@dataclass
class SchemeForms:
    name: str
    label: str
    overlap: bool
    has_steps: bool
    components: list[ComponentId]  # in the solver's order: the ledger's terms


class CompiledForms:
    """One compiled function for all of a solution's forms.

    `evaluate(values)` takes a dict from param name to a float or a 1-D float
    array (all arrays the same length) and returns a dict from (scheme, quantity)
    to a float64 array; quantities are `step`, `time_to_target`,
    `energy_to_target` (schemes with steps to target only) and
    `component:ID` for each step-time component (its `ComponentId.id`) (and, for schemes whose
    steps to target is a number, `energy_per_step`).
    """

    def __init__(self, solution: Solution) -> None:
        self.solution = solution
        self.spec = solution.spec
        infos = list(solution.symbols.info.values())
        self.names: tuple[str, ...] = tuple(i.param.name for i in infos)
        self.args: tuple[sp.Symbol, ...] = tuple(i.symbol for i in infos)
        self.defaults: dict[str, float] = {i.param.name: float(i.param.default) for i in infos}
        self.schemes: dict[str, SchemeForms] = {}
        keys: list[tuple[str, str]] = []
        exprs: list[sp.Expr] = []
        # time and energy to target are steps x (per step); when steps is a number,
        # the product is taken after the call (one multiplication per point instead
        # of the distributed sum sympy makes of it)
        self.scaled: list[tuple[tuple[str, str], tuple[str, str], float]] = []
        for name, r in solution.schemes.items():
            has_steps = r.time_to_target is not None
            self.schemes[name] = SchemeForms(name, r.label, bool(r.overlap), has_steps, [t.id for t in r.terms])
            keys.append((name, STEP))
            exprs.append(r.step_time.expr)
            if has_steps and r.steps_expr.is_Number:
                keys.append((name, "energy_per_step"))
                exprs.append(r.energy_per_step.expr)
                steps = _float(r.steps_expr)
                self.scaled += [((name, TIME), (name, STEP), steps), ((name, ENERGY), (name, "energy_per_step"), steps)]
            elif has_steps:
                keys += [(name, TIME), (name, ENERGY)]
                exprs += [r.time_to_target.expr, r.energy_to_target.expr]
            for t in r.terms:
                keys.append((name, "component:" + t.id.id))
                exprs.append(t.value.expr)
        # each serving path's latency, load and capacity forms, exact in the params (the workload's rate among them)
        self.paths: tuple[str, ...] = ()
        for r in getattr(solution, "serving", ()):
            self.paths += (r.name,)
            keys += [(r.name, "serving:rate"), (r.name, "serving:sustainable")]
            exprs += [r.rate.expr, r.sustainable.expr]
            for key in SERVING_SWEPT:
                if key in r.terms:
                    keys.append((r.name, "serving:" + key))
                    exprs.append(r.terms[key].quantity.expr)
        self.keys = keys  # the compiled function's outputs, in order
        self.exprs = [_tolerant(e) for e in exprs]
        self._fn = sp.lambdify(
            self.args,
            self.exprs,
            modules=[{"_ceil_tol": _ceil_numpy}, "numpy"],
            cse=True,
            dummify=True,
        )

    def evaluate_raw(self, values: dict[str, object]) -> dict[tuple[str, str], np.ndarray]:
        """Each form as a float64 array: 1-D where it varies, 0-d where it does not."""
        args = [values.get(name, self.defaults[name]) for name in self.names]
        with np.errstate(all="ignore"):
            outs = self._fn(*args)
            raw = {key: np.asarray(out, dtype=np.float64) for key, out in zip(self.keys, outs)}
            for key, source, factor in self.scaled:
                raw[key] = factor * raw[source]
        return raw

    def evaluate(self, values: dict[str, object]) -> dict[tuple[str, str], np.ndarray]:
        n = None
        for v in values.values():
            if np.ndim(v) > 0:
                n = len(v) if n is None else n
        shape = (n,) if n is not None else ()
        return {k: (a if a.shape == shape else np.broadcast_to(a, shape).copy()) for k, a in self.evaluate_raw(values).items()}
