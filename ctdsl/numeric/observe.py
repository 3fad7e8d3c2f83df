"""Predictions for observations, and the fit of one param, from solved results.

- `READERS`: each observable (`ctdsl.language.enums.Observable`) read from a solved scheme;
- `predict(solution, observation)`: the predicted value at the solution's params, or None
  with the reason;
- `implied(solution, fit, observation)`: the same for any observation, None where no value
  in the range meets it (what each row would fit the param to);
- `fit_param(solution, fit, observation)`: the value of the fit's param at which the
  prediction meets the measurement: the scheme's exact expression as a function of that
  param alone (the others at the solution's values), scanned over the param's range for
  a sign change of predicted - measured, then narrowed by Brent's method inside the
  bracket (`ctdsl.roots`), so the root is bracketed, never extrapolated. No
  sign change is `Failure` CT317, with the predictions at both ends of the range;
- `model_group(solution, scheme)`: which model a layout trains, for the rank groups of
  `ctdsl.results.observed`;
- `value_text(value, dim)`: a value in base units as `--set` text, exact to the float.
"""

from __future__ import annotations

import math
from typing import Callable

from ctdsl import units as U
from ctdsl.diagnostics import Diagnostic
from ctdsl.failure import Failure
from ctdsl.language.enums import Observable, Spacing
from ctdsl.language.observables import OBSERVABLES
from ctdsl.model import expr as E
from ctdsl.model.observed import Fit, Observation
from ctdsl.results.observed import FitResult
from ctdsl.results.quantity import Quantity
from ctdsl.results.solution import Solution
from ctdsl.roots import brent, grid, sign_changes
from ctdsl.symbolic.convert import real_function

SCAN = 64  # intervals a fit's range is scanned in for a sign change

READERS: dict[Observable, Callable[[object], "Quantity | None"]] = {
    Observable.STEP_TIME: lambda s: s.step_time,
    Observable.TIME_TO_TARGET: lambda s: s.time_to_target,
    Observable.MFU: lambda s: s.mfu,
    Observable.UTILISATION: lambda s: s.utilisation,
}

assert set(READERS) == set(Observable)


def quantity(solution, obs: Observation) -> Quantity | None:
    return READERS[obs.observable](solution.schemes[obs.scheme])


def predict(solution: Solution, obs: Observation) -> tuple[float | None, str]:
    """The predicted value in base units, or None and why."""
    q = quantity(solution, obs)
    if q is None:
        return None, f"the solve gives no {obs.observable} for scheme '{obs.scheme}'"
    if not math.isfinite(q.value):
        return None, f"{obs.observable} of scheme '{obs.scheme}' cannot be evaluated here"
    return float(q.value), ""


def describe(obs: Observation) -> str:
    return f"{obs.observable} of {obs.scheme} = {obs.text}"


def fit_param(solution: Solution, fit: Fit, obs: Observation) -> FitResult:
    """Solve for the param so that the prediction meets `obs` (the solution is the fit's scenario's)."""
    p = solution.spec.params[fit.param]
    q = quantity(solution, obs)
    if q is None:
        raise _no_root(fit, f"the solve gives no {obs.observable} for scheme '{obs.scheme}' to fit")
    sym = solution.symbols[fit.param]
    f0 = real_function(q.expr, sym, solution.symbols.defaults())

    def f(x: float) -> float:
        return f0(x) - obs.value

    xs = grid(p.lo, p.hi, SCAN, p.spacing == Spacing.LOG)
    ys = [f(x) for x in xs]
    brackets = sign_changes(xs, ys)
    exact = [x for x, y in zip(xs, ys) if y == 0]
    if exact and not brackets:
        x = exact[0]
        return FitResult(fit.param, fit.scenario, x, p.dim, p.lo, p.hi, (x, x), 1, describe(obs))
    if not brackets:
        spec = OBSERVABLES[obs.observable]
        lo_v, hi_v = ys[0] + obs.value, ys[-1] + obs.value
        show = lambda v: "n/a" if math.isnan(v) else U.format_quantity(v, spec.dim)  # noqa: E731
        raise _no_root(
            fit,
            f"no value of {fit.param} in {_shown(p.lo, p.dim)} .. {_shown(p.hi, p.dim)} makes the predicted {obs.observable} of"
            f" {obs.scheme} in {fit.scenario} equal the measured {obs.text}: it is {show(lo_v)} at {fit.param} = {_shown(p.lo, p.dim)}"
            f" and {show(hi_v)} at {_shown(p.hi, p.dim)}",
        )
    a, fa, b, fb = brackets[0]
    root, _, _ = brent(f, a, b, fa, fb)
    return FitResult(fit.param, fit.scenario, root, p.dim, p.lo, p.hi, (a, b), len(brackets), describe(obs))


def implied(solution: Solution, fit: Fit, obs: Observation) -> float | None:
    """The value of the fit's param at which the prediction would meet `obs` (the others at the
    solution's values), found as the fit is; None where no value in its range does. Read over a
    set's observations, it shows where a single value of the param cannot hold."""
    try:
        return fit_param(solution, fit, obs).value
    except Failure:
        return None


def _shown(v: float, dim: U.Dim) -> str:
    return U.format_quantity(v, dim) if dim != U.ONE else f"{v:g}"


def _no_root(fit: Fit, message: str) -> Failure:
    return Failure([Diagnostic("CT317", message, fit.span, label="no root in the range", help="widen the param's range, or check the observation and the scenario's values")])


def model_group(solution: Solution, scheme: str) -> tuple[str, tuple]:
    """The model a scheme trains, as shown, and its identity: the model's fields but `tokens`
    (per worker, which a layout's data-parallel degree changes) at the solution's params."""
    spec = solution.spec
    name = spec.schemes[scheme].model
    m = spec.models[name]
    env = spec.defaults()
    fields = {"params": m.params, "bytes_per_value": m.bytes_per_value, "flops_per_token": m.flops_per_token, "batch_tokens": m.batch_tokens}
    fields.update({f"shape.{k}": v for k, v in (m.shape or {}).items()})
    key = []
    for k, expr in sorted(fields.items()):
        if expr is None:
            continue
        try:
            key.append((k, float(f"{E.evaluate(expr, env):.12g}")))
        except (E.EvalError, ArithmeticError, ValueError):
            key.append((k, math.nan))
    count = solution.models[name].params if name in solution.models else math.nan
    shown = f"{name} ({count / 1e9:.3g}B parameters)" if math.isfinite(count) else name
    return shown, (name, tuple(key))


def value_text(value: float, dim: U.Dim) -> str:
    """`value` (base units) as the text of a --set value: exact to the float."""
    if dim == U.ONE:
        return repr(value)
    sym = dim.symbol()
    try:
        if U.parse_unit(sym).dim == dim:
            return f"{value!r} {sym}"
    except U.UnitError:
        pass
    factors = [f"(1 {b}) ^ {e}" for b, e in zip(U.BASE, dim.exps) if e]
    return " * ".join([repr(value), *factors])


__all__ = ["READERS", "predict", "fit_param", "implied", "model_group", "value_text", "describe", "SCAN"]
