"""What the step simulation runs: each dc's replica chain and each sync's schedule, as numbers.

Built from a scheme's costs (symbolic/costs.py: its timeline and syncs) at the params' defaults,
as plan.py builds the rest:

- a `ChainPlan` per dc: the replica's pipeline (pp, v, m), one micro-batch's forward and
  backward on one GPU of the most-loaded stage (the closed form's per-micro-batch pieces:
  compute split t_c / 3 and 2 t_c / 3, recomputation, tensor, context and expert parallel time
  split between the passes as their collectives are, ZeRO-3's gathers with the forward), one
  point-to-point transfer, the optimiser, the window; the schedule's makespan, simulated
  (schedule.py) at plan time: it is deterministic, the same every step;
- a `SyncSim` per sync: when it runs (every H steps, or H / F for fragments), its buckets and
  the phases of one bucket of one fragment (plan.py's `PhasePlan`s, so that a loaded link
  queues them), its window, its delay, and whether the step's update waits for it.

Without a timeline (no replicas, or a model without its shape and seq) a dc's chain is one
block: one micro-batch on one stage, forward compute / 3 and backward 2 compute / 3.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from typing import Callable

from ctdsl.language.components import ComponentKey
from ctdsl.simulate import schedule as SCH
from ctdsl.symbolic.context import Context
from ctdsl.symbolic.convert import Env, value
from ctdsl.symbolic.costs import SchemeCost
from ctdsl.symbolic.exposure import INNER
from ctdsl.symbolic.routing import Phase

K = ComponentKey
COMPUTE, RECOMPUTE, OPTIMISER, GATHERS = K.COMPUTE, K.RECOMPUTE, K.OPTIMISER, K.PARAMETER_GATHERS
TP, CP, EP, PP = K.TENSOR_PARALLEL, K.CONTEXT_PARALLEL, K.EXPERT_PARALLEL, K.PIPELINE_PARALLEL
MAX_SCHEDULE_OPS = 200_000  # operations of one simulated pipeline schedule (2 m v pp); past it the makespan is the closed form's


@dataclass(frozen=True)
class ChainPlan:
    """One dc's replica chain: its pipeline schedule and what the closed form says of it."""

    dc: str
    pp: int
    v: int
    micro: float  # m
    forward: float  # one micro-batch's forward on one GPU, with its traffic and gathers
    backward: float  # its backward's traffic (and nothing of its own compute)
    compute: float  # its backward's computation, t_b + t_r: the window's length
    p2p: float  # one point-to-point transfer (0 with pp = 1)
    update: float  # the optimiser
    makespan: float  # the simulated schedule's (Calculon's convention), or the closed form's where not simulated
    sent: float | None  # the schedule with only the transfers that move data, simulated (None: not simulated)
    closed: float  # the closed form's pipeline: compute, recompute, TP/CP/EP, bubble, PP (and gathers)
    inner: float  # the closed form's inner step of this dc
    not_simulated: str | None = None  # why the schedule is the closed form's
    events: int = 0  # SimPy events of the schedule runs
    gathers: float = 0.0  # ZeRO-3's parameter gathers per micro-batch (in `forward`)
    ends: float = 0.0  # the slowest stage's end-stage work per micro-batch, run on every stage here

    @property
    def step(self) -> float:
        """The simulated inner step: the schedule, then the optimiser."""
        return self.makespan + self.update

    @property
    def label(self) -> str:
        return f"pp {self.pp}, m {self.micro:g}" + (f", v {self.v}" if self.v > 1 else "")


@dataclass(frozen=True)
class SyncSim:
    """One sync of the scheme, as the step simulation runs it."""

    name: str  # sync | inner sync | outer sync
    every: float  # steps per sync of the whole payload: H (1: the inner sync)
    fragments: int  # F: one fragment sync every H / F steps
    buckets: int  # B per fragment sync
    window: float  # 0: released at once when the step's update is done
    delay: float  # steps the sync may take while training goes on
    per_dc: bool  # one instance per dc (the inner sync), else one across every dc
    bucket: tuple  # PhasePlans of one bucket of one fragment
    block: float  # a fixed time on every worker at the end of the step that waits for it (transform and overhead)
    exposed: float | None  # the closed form's per step (None: a plain sync, in series)
    per_step: float  # the closed form's per step: exposed, or the phases / every
    early: tuple[float, ...] = ()  # ready = layer: fragment j (its j-th sync, mod F) released this long before the step's end

    @property
    def tau(self) -> float:
        """One bucket's time with no queueing: its phases'."""
        return math.fsum(ph.time for ph in self.bucket)

    @property
    def period(self) -> float:
        """Steps between two fragment syncs: H / F."""
        return self.every / self.fragments

    @property
    def steps_delay(self) -> int:
        """Steps after its trigger at whose end the sync must be done: ceil(delay)."""
        return int(math.ceil(self.delay - 1e-12))


@dataclass(frozen=True)
class StepPlan:
    """The syncs of a scheme whose step the simulation runs step by step."""

    syncs: tuple[SyncSim, ...]
    cycle: int  # steps after which the schedule of syncs repeats
    notes: tuple[str, ...] = ()  # what the closed form approximates here, known before running


def chains(ctx: Context, c: SchemeCost, env: Env) -> tuple[ChainPlan, ...]:
    """Each dc's chain (module docstring)."""
    return tuple(_chain(ctx, c, dc, env) for dc in ctx.spec.dcs)


def _num(x, env: Env) -> float:
    return float(value(x, env))


def _chain(ctx: Context, c: SchemeCost, dc: str, env: Env) -> ChainPlan:
    tl = c.timeline
    if tl is None:
        block = _num(c.per_dc[dc], env)
        return ChainPlan(dc, 1, 1, 1.0, block / 3, 0.0, 2 * block / 3, 0.0, 0.0, block, block, block, block)
    st = tl.dcs[dc]
    pp, v = int(round(_num(st.pp, env))), int(round(_num(st.v, env)))
    m = _num(st.micro, env)
    pm = {k: _num(x, env) for k, x in st.per_micro.items()}
    comps = {k: _num(x, env) for k, x in st.components.items()}
    rep = ctx.spec.replicas[ctx.spec.dcs[dc].replica]
    again = 0.0  # the recomputed share of the layers, whose forward collectives run again in the backward
    if str(rep.recompute) == "full":
        again = _num(ctx.field(rep, "recompute_share"), env) if rep.recompute_share is not None else 1.0
    # the forward pass's part of each collective: tp and ep 2 of 4 (of 4 + 2 x again with full recomputation), cp 1 of 3
    fwd_share = {TP: 2 / (4 + 2 * again), EP: 2 / (4 + 2 * again), CP: 1 / 3}
    t_c = pm[COMPUTE] + pm.get(K.MEMORY_BOUND, 0.0) + pm.get(K.END_STAGES, 0.0)  # compute = operations splits the compute in three
    forward = t_c / 3 + sum(pm.get(k, 0.0) * s for k, s in fwd_share.items())
    backward = sum(pm.get(k, 0.0) * (1 - s) for k, s in fwd_share.items())
    compute = 2 * t_c / 3 + pm.get(RECOMPUTE, 0.0)
    gathers = comps.get(GATHERS, 0.0)
    pipe = next((t for t in st.traffic if t.kind == PP), None)
    p2p = _num(pipe.link.latency + pipe.per_micro / pipe.link.bandwidth, env) if pipe is not None and pp > 1 else 0.0
    closed = math.fsum(x for k, x in comps.items() if k not in (OPTIMISER, GATHERS)) + gathers
    inner = _num(tl.per_dc[dc], env)
    why = SCH.schedulable(pp, m, v)
    if why is None and 2 * m * v * pp > MAX_SCHEDULE_OPS:
        why = f"{int(2 * m * v * pp):,} operations, more than the {MAX_SCHEDULE_OPS:,} simulated"
    if why is not None:
        return ChainPlan(dc, pp, v, m, forward, backward, compute, p2p, comps.get(OPTIMISER, 0.0), closed, None, closed, inner, why)
    n = int(m)
    forward += gathers / n  # ZeRO-3's gathers in every micro-batch's forward (the closed form counts them m times, not in the bubble)
    every = SCH.simulate(pp, n, v, forward, backward, compute, p2p, SCH.EVERY)
    sent = SCH.simulate(pp, n, v, forward, backward, compute, p2p, SCH.SENT)
    return ChainPlan(
        dc, pp, v, m, forward, backward, compute, p2p, comps.get(OPTIMISER, 0.0), every.makespan, sent.makespan, closed, inner, None,
        every.events + sent.events, gathers / n, pm.get(K.END_STAGES, 0.0),
    )  # fmt: skip


def needs_steps(c: SchemeCost) -> bool:
    """Whether a scheme's step must be simulated step by step: a sync that is exposed in part
    (backward overlap, delay, fragments) or a sync every step beside one every H (inner = dc)."""
    return len(c.syncs) > 1 or any(sy.exposed is not None for sy in c.syncs)


def step_plan(ctx: Context, c: SchemeCost, env: Env, phase_plan: Callable[[Phase], object]) -> StepPlan:
    """The syncs of a scheme whose step is simulated step by step; `phase_plan(phase)` makes a
    PhasePlan of a symbolic phase (plan.py's)."""
    s = c.scheme
    tr, ovh = _num(c.transform.time, env), _num(c.overhead, env)
    outer = c.syncs[-1]
    out, notes = [], []
    for sy in c.syncs:
        F = _whole(_num(sy.fragments, env))
        B = _whole(_num(sy.buckets, env))
        every = _num(sy.every, env)
        total = math.fsum(_num(ph.time, env) for ph in sy.phases)
        block = (tr + ovh * F) / F if sy is outer else 0.0  # per fragment sync: the transform's share and the overhead
        if sy.exposed is None:
            bucket = tuple(phase_plan(ph) for ph in sy.phases)
            per_step = total / every
        else:
            bucket = tuple(phase_plan(ph) for ph in sy.bucket)  # one bucket of one fragment, as the closed form's tau
            per_step = _num(sy.exposed, env)
        # a delay applies to the sync whose slack it sets (the outer one with inner = dc); overlap = true
        # (the whole sync beside the next H steps) has no step plan: it is checked apart from these (CT435)
        delay = _num(ctx.field(s, "delay"), env) if s.delay is not None and sy.slack != 0 else 0.0
        if delay != int(delay):
            notes.append(f"{sy.name}: a delay of {delay:g} steps is not whole: the simulation waits for it at the end of step {math.ceil(delay)} after")
        out.append(
            SyncSim(
                sy.name, every, F, B, _num(sy.window, env), delay, sy.name == INNER, bucket, block,
                _num(sy.exposed, env) if sy.exposed is not None else None, per_step,
                tuple(_num(e, env) for e in sy.early),
            )
        )  # fmt: skip
    cycle = 1
    for sy in out:
        if sy.every != int(sy.every):
            notes.append(f"{sy.name}: a period of {sy.every:g} steps is not whole: syncs are spaced floor((j + 1) H / F) apart")
        cycle = math.lcm(cycle, max(1, int(round(sy.every))))
    return StepPlan(tuple(out), cycle, tuple(notes))


def _whole(x: float) -> int:
    try:
        return max(1, int(round(x)))
    except (OverflowError, ValueError):  # pragma: no cover - counts are checked finite
        return 1


__all__ = ["ChainPlan", "SyncSim", "StepPlan", "chains", "needs_steps", "step_plan", "MAX_SCHEDULE_OPS"]
