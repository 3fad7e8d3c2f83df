"""Compute utilisation, model FLOPs utilisation, and targets: where a quantity reaches a value.

Compute utilisation (parallelism.md section 11) is compute time over step time:

    CU = compute / step

with `compute` the step's compute term (costs.py; stragglers' extra wait is not
compute) and `step` the step time: compute + (transform + sync + overhead) / H,
or with `overlap = true` max(compute, (transform + sync + overhead) / H). For
one block of compute per sync this is the closed form of section 11,
CU(W) = H T / (H T + max(0, alpha + D_w / W - w)) with w = 0 (no overlap) or
w = H T (overlap); see docs/cost-model.md, "Compute utilisation and targets".

Model FLOPs utilisation is the model's FLOPs per step over what the job's GPUs
could do at peak in that step:

    MFU = sum over dcs of (workers x FLOPs per worker per step) / (step x sum over dcs of GPUs x peak)

with FLOPs per worker = flops_per_token x tokens (6P per token by default, or
the full form with attention when the model's shape and `seq` are given;
parallelism.md section 2.3); recomputation is not counted, as MFU's definition
asks. With one kind of device everywhere MFU = efficiency x CU.

A target `target utilisation = 0.95 over wan_bw` is a root of
quantity(b) - target: it is solved by the break-even machinery
(`breakeven.solve_breakeven` with the constant target in place of the second
scheme), so max/min are split into regimes, each regime's root is exact where
it is a polynomial of degree <= 4, every root is verified by a sign change, and
a scan with Brent's method finds what the exact half cannot.
A utilisation target whose compute does not depend on the param is solved in
the equivalent form step(b) = compute / u (the same roots, since compute and
step are positive), which has no quotient to put over one denominator.
"""

from __future__ import annotations

import sympy as sp

from ctdsl import units as U
from ctdsl.diagnostics import Diagnostic
from ctdsl.failure import Failure
from ctdsl.results.targets import TargetResult, TargetRoot
from ctdsl.model.entities import Spec
from ctdsl.model.targets import Target
from ctdsl.symbolic import counts as C
from ctdsl.symbolic import dimensioned as D
from ctdsl.symbolic.breakeven import Unsolvable, solve_breakeven
from ctdsl.symbolic.context import Context
from ctdsl.symbolic.convert import Env
from ctdsl.symbolic.costs import SchemeCost
from ctdsl.symbolic.dimensioned import DimExpr
from ctdsl.symbolic.money import money

TARGET = "target"  # the name the root finder gives the target's side


def utilisation(c: SchemeCost) -> DimExpr:
    """Compute utilisation: the inner step (compute and, with the training step's timeline,
    recomputation, model-parallel traffic, bubble and optimiser) over the step time."""
    return c.inner / c.step_time


def mfu(ctx: Context, c: SchemeCost) -> DimExpr:
    """Model FLOPs per step of the whole job over the step time x the peak of all its GPUs."""
    model = ctx.spec.models[c.scheme.model]
    flops = c.compute.flops
    devices = C.devices(ctx)
    peak = D.total([C.device_count(ctx, dc) * ctx.field(dev, "peak") for dc, dev in devices.items()], U.OPS_RATE)
    if model.batch_tokens is None:
        work = D.total([C.device_count(ctx, dc) / C.member_gpus(ctx, dc) * flops for dc in devices], U.OPS)
    else:
        work = ctx.field(model, "batch_tokens") * ctx.formulas.get(model, "flops_per_token")
    return work / (c.step_time * peak)


def quantity_of(ctx: Context, c: SchemeCost, quantity: str) -> DimExpr | None:
    """The scheme's expression for a target's quantity; None where the scheme has none (no steps, nothing priced)."""
    if quantity == "utilisation":
        return utilisation(c)
    if quantity == "step_time":
        return c.step_time
    if quantity == "time":
        return c.time_to_target
    if quantity == "energy":
        return c.energy_to_target
    m = money(ctx, c)
    return m.cost if quantity == "cost" else m.co2e


def _missing(quantity: str) -> str:
    if quantity in ("time", "energy"):
        return "the scheme has no steps to target: set steps = N"
    return f"the scheme has no {quantity} to target: set steps = N and give a price or carbon field (docs/codesign.md)"


def solve_target(ctx: Context, c: SchemeCost, t: Target, env: Env) -> TargetResult:
    """One target: every value of `t.over` in its range at which the scheme's quantity equals `t.value`."""
    p = ctx.spec.params[t.over]
    dim = {"utilisation": U.ONE}.get(t.quantity)
    q = quantity_of(ctx, c, t.quantity)
    base = dict(quantity=t.quantity, target=t.value, text=t.text, scheme=t.scheme, over=t.over, dim=p.dim)
    if q is None:
        return TargetResult(**base, target_dim=dim or U.ONE, roots=(), reason=_missing(t.quantity))
    goal = sp.Rational(t.exact.numerator, t.exact.denominator)
    show = lambda v: U.format_quantity(v, p.dim)  # noqa: E731
    log = p.spacing == "log"
    b = ctx.symbols[t.over]
    # CU = compute / step = u is step = compute / u where compute does not depend on b: the same
    # roots, and a difference without a quotient, cheaper to put over one denominator
    flip = t.quantity == "utilisation" and not c.inner.e.has(b)
    lhs, rhs = (c.step_time.e, c.inner.e / goal) if flip else (q.e, goal)
    try:
        r = solve_breakeven(t.scheme, lhs, TARGET, rhs, b, env, p.lo, p.hi, c.labels, log, show)
    except Unsolvable as exc:
        message = exc.message.replace(f"break-even {t.scheme} vs {TARGET}", f"target {t.quantity} = {t.text} for {t.scheme}")
        message = message.replace("the times to target", f"the scheme's {t.quantity}")
        raise Failure([Diagnostic(exc.code, message, t.span, label="this target", help=exc.help)]) from None
    up = t.scheme if flip else TARGET  # who is 'faster' above a root where the quantity exceeds the target
    roots = tuple(TargetRoot(root.value, root.raw, root.numeric, root.above == up) for root in r.roots)
    reason = None if roots else _never(t, r, p.dim, q.dim, flip)
    return TargetResult(**base, target_dim=q.dim, roots=roots, reason=reason, lo=p.lo, hi=p.hi)


def _never(t, r, pdim, qdim, flip: bool = False) -> str:
    """Why no value of the param in range reaches the target, from the root finder's answer
    (`flip`: solved as step = compute / u, where the step below its target is utilisation above)."""
    side = "below" if (r.faster_at_lo == t.scheme) != flip else "above"
    if r.faster_at_lo == r.faster_at_hi or r.faster_at_hi is None:
        where = f"it stays {side} {t.text or U.format_quantity(t.value, qdim)} at every {t.over} in range"
    else:
        where = "it does not cross the target in range"
    if r.outside:
        shown = ", ".join(U.format_quantity(v, pdim) for v in r.outside)
        where += f"; it reaches the target only outside the range, at {t.over} = {shown}"
    return where


def solve_targets(spec: Spec, ctxs: dict[str | None, Context], costs: dict[str, SchemeCost], env: Env) -> tuple[TargetResult, ...]:
    """Every target of the spec, in statement order."""
    return tuple(solve_target(ctxs[spec.schemes[t.scheme].sites], costs[t.scheme], t, env) for t in spec.targets)


__all__ = ["utilisation", "mfu", "quantity_of", "solve_target", "solve_targets"]
