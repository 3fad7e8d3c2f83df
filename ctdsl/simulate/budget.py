"""The event budget of a simulated run, estimated before it runs.

Each loaded edge is a Poisson stream of background transfers at rate
rho / S (S = transfer / bandwidth): over a run of simulated length T it makes
about rho T / S arrivals, each a handful of SimPy events. T is the background's
warm-up (`engine.background_warmup`) plus (warm-up + measured steps) x the
step time (the closed form, or the over-subscription bound when it is larger).
A 1-byte transfer on a WAN at 99 % load is about 10^10 arrivals a second: the
run would not end. `check_budget` refuses such a run with CT608 at the link,
with the estimate and the limit, before anything is simulated.
"""

from __future__ import annotations

import math

from ctdsl import limits
from ctdsl.diagnostics import Diagnostic
from ctdsl.failure import Failure
from ctdsl.simulate import engine
from ctdsl.simulate.plan import SchemePlan


def arrivals(plan: SchemePlan, steps: int, warmup: int) -> dict[str, float]:
    """Estimated background arrivals per run on each loaded link this scheme crosses (inf if unbounded)."""
    queues = list(plan.queues.values())
    if not queues:
        return {}
    step = max(plan.step, plan.bound or 0.0)
    horizon = engine.background_warmup(queues) + (steps + warmup) * step
    out: dict[str, float] = {}
    for q in queues:
        n = q.rho * horizon / q.service if q.service > 0 else math.inf
        if math.isnan(n):
            n = math.inf
        out[q.link] = out.get(q.link, 0.0) + n
    return out


def check_rounds(spec, plans: dict[str, SchemePlan]) -> None:
    """Raise Failure (CT608) at each scheme whose sync period makes one round longer than MAX_SIM_STEPS steps.

    A round (the steps between two syncs) is simulated whole, however few steps
    are measured: `period = 1e9` would draw 10^9 steps of every worker.
    """
    diags = []
    for name, plan in plans.items():
        if not plan.period <= limits.MAX_SIM_STEPS:  # nan too
            entity = spec.schemes[name]
            diags.append(
                Diagnostic(
                    "CT608",
                    f"scheme '{name}' syncs every {plan.period:g} steps: a simulated round is that many steps; "
                    f"a simulation runs at most {limits.MAX_SIM_STEPS:,} steps",
                    entity.spans.get("period", entity.span),
                    label="steps between syncs",
                    help="simulate a smaller period (ctdsl solve takes this one)",
                )
            )
    if diags:
        raise Failure(diags)


def sync_jobs(plan: SchemePlan, steps: int, warmup: int) -> float:
    """Buckets a run step by step sends (steps.py): each sync's buckets, F every H steps (each dc's with inner = dc)."""
    sp = plan.step_plan
    if sp is None:
        return 0.0
    dcs = sum(1 for d in plan.dcs if d.workers > 0)
    per_step = sum(sy.buckets * sy.fragments / sy.every * (dcs if sy.per_dc else 1) for sy in sp.syncs)
    longest = max((sy.steps_delay for sy in sp.syncs), default=0)
    return per_step * (steps + warmup + longest + 2 * sp.cycle)


def check_jobs(spec, plans: dict[str, SchemePlan], steps: int, warmup: int) -> None:
    """Raise Failure (CT608) at each scheme whose buckets in one run step by step would pass MAX_SIM_EVENTS."""
    diags = []
    for name, plan in plans.items():
        n = sync_jobs(plan, steps, warmup)
        if not n <= limits.MAX_SIM_EVENTS:
            entity = spec.schemes[name]
            diags.append(
                Diagnostic(
                    "CT608",
                    f"scheme '{name}': one simulated run would send about {n:.3g} buckets; at most {limits.MAX_SIM_EVENTS:,} are simulated",
                    entity.spans.get("bucket", entity.span),
                    label="gradient bytes per bucket",
                    help="simulate fewer --steps, or give larger buckets (the closed form does not depend on their count)",
                )
            )
    if diags:
        raise Failure(diags)


def check_budget(spec, plans: dict[str, SchemePlan], steps: int, warmup: int) -> None:
    """Raise Failure (CT608) at each link whose background would pass MAX_SIM_EVENTS in one run, and at
    each scheme whose buckets would (check_jobs)."""
    check_rounds(spec, plans)
    check_jobs(spec, plans, steps, warmup)
    worst: dict[str, tuple[float, str]] = {}
    for name, plan in plans.items():
        for link, n in arrivals(plan, steps, warmup).items():
            if n > worst.get(link, (0.0, ""))[0]:
                worst[link] = (n, name)
    diags = []
    for link, (n, scheme) in sorted(worst.items()):
        if n <= limits.MAX_SIM_EVENTS:
            continue
        entity = spec.links[link]
        span = entity.spans.get("transfer", entity.span)
        est = "an unbounded number of" if not math.isfinite(n) else f"about {n:.3g}"
        diags.append(
            Diagnostic(
                "CT608",
                f"link '{link}': one simulated run of scheme '{scheme}' would take {est} background transfers; "
                f"at most {limits.MAX_SIM_EVENTS:,} are simulated",
                span,
                label="background transfer size",
                notes=(f"load x simulated time / (transfer / bandwidth), over {warmup} warm-up and {steps} measured steps",),
                help="simulate fewer --steps, or model the background with larger transfers (the closed form does not depend on their count)",
            )
        )
    if diags:
        raise Failure(diags)


__all__ = ["arrivals", "check_budget", "check_jobs", "check_rounds", "sync_jobs"]
