"""`ctdsl simulate --validate`: the checks of the training step (docs/simulation.md).

- **The pipeline schedule**, once per distinct replica chain: the simulated makespan in
  Calculon's convention against the closed form's compute, recomputation, model-parallel
  traffic, bubble and pipeline-parallel terms (exact); and the schedule with blocking sends
  only where data moves against its derived makespan (v = 1, exact), showing how many
  transfers the closed form's 2 v m + 2 (pp - 1) counts beyond it.
- **Each sync a scheme runs step by step**: its simulated wait per step against the closed
  form's exposed time (or phases / H for a sync in series), no load, no jitter.
- **The step with jitter**, for each scheme simulated step by step: the spec's jitter (or a
  probe), its simulated mean step against the closed form with its stragglers term.

Where the closed form is known not to be exact for a scheme (listed by `approximations`), its
checks are shown with their difference and do not fail the run.
"""

from __future__ import annotations

from ctdsl import units as U
from ctdsl.simulate import schedule as SCH
from ctdsl.simulate.engine import RunResult
from ctdsl.simulate.plan import SchemePlan
from ctdsl.simulate.steps import CROWDED, PILED

JITTER_STEPS = 200  # measured steps per seed of the step-with-jitter checks (whole cycles)


def how(plans: dict[str, SchemePlan]) -> list[str]:
    """How the schemes' steps were simulated, where it is more than compute as one block."""
    stepwise = [n for n, p in plans.items() if p.step_plan is not None]
    piped = [n for n, p in plans.items() if p.step_plan is None and any(ch.pp > 1 or ch.micro > 1 for ch in p.chains)]
    out = []
    if stepwise:
        out.append(
            "simulated step by step (their syncs overlap the backward pass, run on into a delay, come in fragments or every step): "
            + ", ".join(stepwise)
        )
    if piped:
        out.append("simulated in rounds of H steps, each step the replica chain's simulated pipeline schedule and optimiser: " + ", ".join(piped))
    return out


def approximations(plan: SchemePlan, run: RunResult | None = None) -> list[str]:
    """Why the closed form of this scheme's step is not exact where the simulation runs it (empty: exact)."""
    why: list[str] = []
    chains = plan.chains
    if len({(ch.makespan, ch.update, ch.compute) for ch in chains if _active(plan, ch.dc)}) > 1:
        why.append("the dcs differ: the closed form takes each component from the slowest dc, an upper bound")
    for ch in chains:
        if ch.gathers > 0 and ch.pp > 1 and ch.not_simulated is None:
            why.append(
                f"dc {ch.dc}: ZeRO-3's gathers run in every micro-batch, the bubble's too; the closed form counts them m times, "
                f"not m + (pp - 1)/v times: {U.format_quantity((ch.pp - 1) / ch.v * ch.gathers, U.TIME)} less"
            )
            break
    for ch in chains:
        if ch.ends > 0 and ch.pp > 1 and ch.not_simulated is None:
            why.append(
                f"dc {ch.dc}: the schedule runs every stage at the slowest stage's slot, its end-stage work (the LM head's) "
                f"included; the closed form's fill and drain pass through the other stages without it: "
                f"{U.format_quantity((ch.pp - 1) / ch.v * ch.ends, U.TIME)} less"
            )
            break
    if plan.step_plan is not None:
        why.extend(plan.step_plan.notes)
    if run is not None:
        if PILED in run.flags:
            why.append(
                "syncs queued behind each other on their link: the closed form's long-run pace of the link (F B tau / H) "
                "holds once the backlog has settled, which a run may not reach"
            )
        if CROWDED in run.flags:
            why.append("a delay's steps waited for other syncs or a transform: the closed form counts the delay in its own steps")
    return why


def _active(plan: SchemePlan, dc: str) -> bool:
    return any(d.name == dc and d.workers > 0 for d in plan.dcs)


def chain_rows(plans: dict[str, SchemePlan]):
    """(label, chain) once per distinct simulated chain of a pipeline (pp > 1, or m > 1 micro-batches)."""
    seen: dict[tuple, list[str]] = {}
    keep = {}
    for plan in plans.values():
        for ch in plan.chains:
            if ch.pp == 1 and ch.micro <= 1:
                continue
            key = (ch.pp, ch.v, ch.micro, ch.forward, ch.backward, ch.compute, ch.p2p, ch.closed)
            seen.setdefault(key, [])
            if ch.dc not in seen[key]:
                seen[key].append(ch.dc)
            keep.setdefault(key, ch)
    for key, ch in keep.items():
        dcs = seen[key]
        yield f"pipeline, dc{'s' * (len(dcs) > 1)} {', '.join(dcs)} ({ch.label})", ch


def sent_derived(ch) -> float | None:
    """The blocking-send schedule's makespan derived for v = 1 (schedule.sent_makespan)."""
    if ch.v != 1 or ch.not_simulated is not None:
        return None
    return SCH.sent_makespan(ch.pp, int(ch.micro), ch.forward + ch.backward + ch.compute, ch.p2p)


def transfers_beyond(ch) -> float | None:
    """How many transfers of t_p2p the closed form counts beyond the blocking-send schedule (its makespan's difference)."""
    if ch.sent is None or ch.p2p <= 0:
        return None
    return (ch.makespan - ch.sent) / ch.p2p


def exposed_rows(plan: SchemePlan, run: RunResult):
    """(sync name, closed form per step, simulated wait per step) of a scheme simulated step by step."""
    if plan.step_plan is None or run.exposed is None:
        return
    for sy in plan.step_plan.syncs:
        yield sy.name, sy.per_step, run.exposed.get(sy.name, 0.0), sy.exposed is not None


def jitter_approximations(plan: SchemePlan) -> list[str]:
    """Where the stragglers term and the exposed syncs do not simply add (with jitter)."""
    why = []
    sp = plan.step_plan
    if sp is None:
        return why
    if any(sy.steps_delay > 0 for sy in sp.syncs):
        why.append("a delay: its steps' jitter changes the slack, and the workers do not wait together")
    if any(sy.per_dc for sy in sp.syncs):
        why.append("inner = dc: a dc's replicas wait for each other every step, the closed form's stragglers every H steps")
    if any(sy.fragments > 1 for sy in sp.syncs):
        why.append("fragments: the workers wait for each other every H / F steps, the closed form's stragglers every H steps")
    return why


__all__ = ["approximations", "chain_rows", "exposed_rows", "how", "jitter_approximations", "sent_derived", "transfers_beyond", "JITTER_STEPS"]
