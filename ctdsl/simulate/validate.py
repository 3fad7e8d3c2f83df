"""`ctdsl simulate --validate`: the simulation against the closed forms, wherever both apply.

Four kinds of check, each on the spec's own topology and numbers:

1. **No load, no jitter** (every scheme): the simulated step time equals the
   symbolic one. Both are deterministic; they must agree to floating-point
   rounding (relative difference at most 1e-9: the simulation clock adds up
   thousands of durations). With a timeline, also each replica chain's pipeline
   schedule and each sync's exposed time (validate_steps.py).
2. **M/D/1 wait** (every link with a background transfer size; at loads 0.3,
   0.6, 0.9 and the spec's own): the background stream alone, simulated by the
   same queue the model uses for the link's `sharing`; on a FIFO link (`md1`)
   the mean wait of a transfer against rho S / (2 (1 - rho)), on a link shared
   fairly (`ps`, processor sharing) its mean time past its own S against
   rho S / (1 - rho). Poisson arrivals see time averages, so this is also
   the mean wait of a sync arriving at a random time. With no such link the
   WAN (or the first link) is probed with S = 100 ms, and the check says so.
3. **Slowest of N** (for H = 1 and each other H that a scheme without overlap
   uses): the spec's jitter, or, if no dc sets one, a probe: exponential jitter
   at 10% of the slowest dc's compute. The simulated compute per step over the
   deterministic compute against the stragglers closed form.
4. **The step with jitter** (each scheme simulated step by step, steps.py): the
   spec's jitter or the probe; the simulated step against the closed form with
   its stragglers term.

Checks 2 to 4 are statistical: the K seeds give K independent means, and a
check passes when the closed form lies inside the t interval of those means at
level 1 - alpha / m, with alpha = 1% for the whole run and m the number of
statistical checks (Bonferroni), so a correct closed form fails the run at most
1% of the time. A closed form marked as an approximation is shown, with its
difference, but does not fail the run.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from fractions import Fraction

from ctdsl import units as U
from ctdsl.language.components import ComponentKey
from ctdsl.language.enums import JitterKind, LinkKind, Sharing
from ctdsl.model import expr as E
from ctdsl.model.entities import Spec
from ctdsl.simulate import engine, steps, tasks
from ctdsl.simulate import validate_steps as VS
from ctdsl.simulate.budget import check_jobs, check_rounds
from ctdsl.simulate.plan import QueuePlan, build_plans, free_spec, with_dcs
from ctdsl.simulate.runner import Progress, Settings
from ctdsl.simulate.stats import Estimate, agrees, estimate
from ctdsl.symbolic import stragglers as ST
from ctdsl.symbolic.convert import Symbols, to_sympy, value
from ctdsl.symbolic.queueing import md1_wait, ps_wait

FAMILY_ALPHA = 0.01
EXACT_TOLERANCE = 1e-9  # relative, for the deterministic check
MD1_LOADS = (0.3, 0.6, 0.9)
MD1_ARRIVALS = 20_000  # measured per seed
MD1_WARMUP = 2_000
PROBE_SERVICE = 0.1  # s, when no link gives a transfer size
PROBE_JITTER = 0.1  # of the slowest dc's compute, when no dc sets jitter
STRAGGLER_ROUNDS = 2_000  # syncs per seed (H steps each), fewer where H x workers is large:
STRAGGLER_DRAWS = 20_000_000  # jitter draws per seed at most (rounds x H x workers), but one round at least
MAX_SETTLE = 20_000  # warm-up steps at most before syncs that queue on their link are measured (no load, no jitter)


STATISTICAL = ("md1", "ps", "stragglers", "jitter")


@dataclass
class Check:
    kind: str  # exact | pipeline | blocking | exposed (deterministic); md1 | stragglers | jitter (statistical)
    what: str
    closed: float
    status: str  # exact | numerically integrated | approximation | convention
    sim: Estimate | float
    probe: bool = False
    passed: bool | None = None  # None: shown only (an approximation)
    t: float | None = None
    critical: float | None = None
    rel: float | None = None  # deterministic check: relative difference (to `derived` where given)
    derived: float | None = None  # blocking: the schedule's derived makespan, which the simulation must equal
    note: str = ""  # why a closed form is approximate here; what a convention differs by

    @property
    def statistical(self) -> bool:
        return self.kind in STATISTICAL


@dataclass
class Validation:
    spec: Spec
    settings: Settings
    checks: list[Check]
    alpha: float
    events: int
    notes: list[str] = dataclasses.field(default_factory=list)  # how the schemes were simulated

    @property
    def ok(self) -> bool:
        return all(c.passed is not False for c in self.checks)

    @property
    def tested(self) -> int:
        return sum(1 for c in self.checks if c.statistical and c.passed is not None)


def validate(spec: Spec, cfg: Settings, progress: Progress | None = None) -> Validation:
    checks: list[Check] = []
    events = 0
    # ---- 1: no load, no jitter ------------------------------------------------------------
    free = free_spec(spec)
    plans = build_plans(free)
    check_rounds(spec, plans)  # CT608: a round of more steps than are simulated
    check_jobs(spec, plans, VS.JITTER_STEPS, 0)  # CT608: more buckets than are simulated
    md1_cases = _md1_cases(spec)
    strag_cases = _straggler_cases(spec, plans)
    jitter_cases = _jitter_cases(spec, plans)
    total = len(plans) + len(md1_cases) * cfg.seeds + (len(strag_cases) + len(jitter_cases)) * cfg.seeds
    done = 0

    def tick(what: str) -> None:
        nonlocal done
        done += 1
        if progress is not None:
            progress(done, total, what)

    free_runs = {}
    for name, plan in plans.items():
        n = plan.step_plan.cycle if plan.step_plan is not None else max(1, int(math.ceil(plan.period)))
        r = free_runs[name] = tasks.simpy_run(plan)(plan, cfg.seed, 0, n, 0, load=False, jitter=False)
        events += r.events + sum(ch.events for ch in plan.chains)
        if steps.PILED in r.flags:  # syncs queue on their link: measure once the backlog has settled
            r, more = _settled(plan, cfg.seed, n)
            events += more
        why = VS.approximations(plan, r)
        checks.append(_exact("exact", f"{name}: step, no load, no jitter", plan.free_step, r.step, why))
        for sync, closed, sim, exposed in VS.exposed_rows(plan, r):
            what = f"{name}: {sync} {'exposed' if exposed else 'in series'} per step, no load, no jitter"
            checks.append(_exact("exposed", what, closed, sim, why, scale=plan.free_step))
        tick(name)
    for label, ch in VS.chain_rows(plans):
        checks.extend(_chain_checks(label, ch))
    # ---- 2: M/D/1 ----------------------------------------------------------------------------
    for link, service, rho, probe, note, sharing in md1_cases:
        waits = []
        q = QueuePlan(("", ""), link, rho, service, 0.0, 0.0, sharing)
        fair = sharing is Sharing.FAIR
        for k in range(cfg.seeds):
            w, n = engine.md1_run(q, cfg.seed, k, MD1_ARRIVALS, MD1_WARMUP)
            waits.append(w)
            events += n
            tick(f"{'processor sharing' if fair else 'M/D/1'} {link}")
        closed = float(ps_wait(rho, service) if fair else md1_wait(rho, service))
        what = "processor-sharing wait past S" if fair else "M/D/1 wait"
        checks.append(
            Check("ps" if fair else "md1", f"{what} on {link}{note}, rho = {rho:g}, S = {_s(service)}", closed, "exact", estimate(waits), probe=probe)
        )
    # ---- 3: slowest of N ---------------------------------------------------------------------
    for plan, label, probe in strag_cases:
        values = []
        for k in range(cfg.seeds):
            H = max(1, int(round(plan.period)))
            rounds = max(1, min(STRAGGLER_ROUNDS, STRAGGLER_DRAWS // (H * max(1, plan.workers))))
            r = engine.run(plan, cfg.seed, k, rounds * H, 0, load=False, jitter=True)
            values.append(r.stragglers)
            events += r.events
            tick(f"stragglers {plan.name}")
        status = next((cf.status for cf in plan.closed_forms if cf.component.key is ComponentKey.STRAGGLERS), ST.EXACT)
        checks.append(Check("stragglers", label, plan.stragglers, status, estimate(values), probe=probe))
    # ---- 4: the step with jitter ----------------------------------------------------------------
    for plan, label, probe in jitter_cases:
        why = VS.jitter_approximations(plan) + VS.approximations(plan, free_runs[plan.name])
        status = ST.APPROXIMATION if why else next((cf.status for cf in plan.closed_forms if cf.component.key is ComponentKey.STRAGGLERS), ST.EXACT)
        values = []
        for k in range(cfg.seeds):
            r = steps.run(plan, cfg.seed, k, VS.JITTER_STEPS, 0, load=False, jitter=True)
            values.append(r.step)
            events += r.events
            tick(f"step with jitter {plan.name}")
        checks.append(Check("jitter", label, plan.step, status, estimate(values), probe=probe, note="; ".join(why)))
    _judge(checks)
    return Validation(spec, cfg, checks, FAMILY_ALPHA, events, VS.how(plans))


def _judge(checks: list[Check]) -> None:
    """Each statistical check's verdict, at the family's alpha shared among the exact ones (Bonferroni)."""
    stat = [c for c in checks if c.statistical and c.status != ST.APPROXIMATION]
    alpha = FAMILY_ALPHA / max(1, len(stat))
    for c in checks:
        if not c.statistical:
            continue
        ok, t, crit = agrees(c.sim, c.closed, alpha)
        c.t, c.critical = t, crit
        c.passed = ok if c.status != ST.APPROXIMATION else None


def _rel(a: float, b: float) -> float:
    return abs(a - b) / abs(b) if b else abs(a)


def _exact(kind: str, what: str, closed: float, sim: float, why: list[str], scale: float | None = None) -> Check:
    """A deterministic check: it passes when equal to 1e-9 (of `scale` where given: a part of the step is
    a difference of clock readings, as exact as the step); where they differ and the closed form is
    known to approximate here (`why`), it is shown with the reason and does not fail; otherwise it fails."""
    rel = abs(sim - closed) / scale if scale else _rel(sim, closed)
    if rel > EXACT_TOLERANCE and why:
        return Check(kind, what, closed, ST.APPROXIMATION, sim, passed=None, rel=rel, note="; ".join(why))
    return Check(kind, what, closed, "exact", sim, passed=rel <= EXACT_TOLERANCE, rel=rel)


def _settled(plan, seed: int, n: int) -> tuple:
    """A run step by step whose syncs queue on their link, measured once the backlog no longer changes
    the step. While the steps keep their inner pace T, the backlog of a sync of B buckets of tau every
    P = H / F steps grows by B tau - P T a sync, and binds once it outlasts the delay's N T: the
    warm-up starts past that, then doubles (up to MAX_SETTLE steps) until two runs agree to 1e-12.
    Returns (the last run, SimPy events of all of them)."""
    inner = max((ch.step for ch in plan.chains), default=0.0)
    fill = 0.0
    for sy in plan.step_plan.syncs:
        grow = sy.buckets * sy.tau - sy.period * inner
        if grow > 0:
            fill = max(fill, sy.period * (sy.steps_delay * inner / grow + 2))
    events, warm, last = 0, max(4 * n, min(MAX_SETTLE, int(math.ceil(fill)))), None
    while True:
        r = steps.run(plan, seed, 0, n, warm, load=False, jitter=False)
        events += r.events
        if last is not None and _rel(r.step, last.step) <= 1e-12 or 2 * warm > MAX_SETTLE:
            return r, events
        last, warm = r, 2 * warm


def _chain_checks(label: str, ch) -> list[Check]:
    """The pipeline schedule of one chain: Calculon's convention against the closed form, and blocking
    sends only where data moves against their derived makespan."""
    if ch.not_simulated is not None:
        return [Check("pipeline", f"{label}: makespan", ch.closed, ST.APPROXIMATION, ch.makespan, passed=None, rel=0.0, note=f"not simulated: {ch.not_simulated}; the closed form's is used")]
    why = []
    if ch.gathers > 0 and ch.pp > 1:
        why.append(f"ZeRO-3's gathers in the bubble's micro-batches: (pp - 1)/v x {_s(ch.gathers)} beyond the closed form")
    out = [_exact("pipeline", f"{label}: makespan, Calculon's convention", ch.closed, ch.makespan, why)]
    if ch.pp > 1 and ch.sent is not None:
        derived = VS.sent_derived(ch)
        extra = VS.transfers_beyond(ch)
        note = f"Calculon's convention counts {extra:.4g} transfers of {_s(ch.p2p)} more than blocking sends only where data moves expose" if extra is not None else ""
        what = f"{label}: makespan, blocking sends only"
        if derived is None:
            out.append(Check("blocking", what, ch.closed, "convention", ch.sent, passed=None, rel=_rel(ch.sent, ch.closed), note=note + "; v > 1: no derived makespan, the difference is shown"))
        else:
            rel = _rel(ch.sent, derived)
            out.append(Check("blocking", what, ch.closed, "convention", ch.sent, passed=rel <= EXACT_TOLERANCE, rel=rel, derived=derived, note=note))
    return out


def _s(seconds: float) -> str:
    return U.format_quantity(seconds, U.TIME)


def _md1_cases(spec: Spec):
    """(link, S, rho, probe?, note, sharing) for every link that carries background transfers."""
    symbols = Symbols(spec)
    env = symbols.defaults()
    edges = [e for sites in (spec.sites, *spec.variants.values()) for e in sites.topology.edges()]
    memo: dict = {}
    seen: dict[tuple[str, float, Sharing], float] = {}
    for d in edges:
        link = spec.link_of(d)
        if link is None or link.transfer is None:
            continue
        bw = value(to_sympy(d.bandwidth, symbols, memo), env)
        S = value(to_sympy(link.transfer, symbols, memo), env) / bw
        rho = value(to_sympy(link.load, symbols, memo), env) if link.load is not None else 0.0
        seen.setdefault((d.link, S, link.sharing), rho)
    cases = []
    if seen:
        for (link, S, sharing), rho in seen.items():
            loads = list(MD1_LOADS) + ([rho] if rho > 0 and all(abs(rho - x) > 1e-12 for x in MD1_LOADS) else [])
            for r in sorted(loads):
                cases.append((link, S, r, False, "", sharing))
        return cases
    probe = next((d for d in edges if d.kind is LinkKind.WAN), None)
    probe = probe or next(iter(edges), None)
    if probe is None:
        return []
    sharing = link.sharing if (link := spec.link_of(probe)) is not None else Sharing.FAIR
    return [(probe.link, PROBE_SERVICE, r, True, " (probe: no link sets a transfer size)", sharing) for r in MD1_LOADS]


def _jittered(spec: Spec, free_plans) -> tuple[Spec | None, bool]:
    """The spec without load, with its jitter or, where no dc sets one, a probe; and whether it is the probe."""
    probe = not any(d.jitter is not None for d in spec.dcs.values())
    if probe:
        worst = max((p.compute for p in free_plans.values()), default=0.0)
        if worst <= 0:
            return None, probe
        scale = E.Num(Fraction(PROBE_JITTER * worst))
        jitter = {k: (scale, JitterKind.EXPONENTIAL, None) for k in spec.dcs}
    else:
        jitter = {k: (d.jitter, d.jitter_kind, d.jitter_sigma) for k, d in spec.dcs.items()}
    # a variant does not change a dc's jitter: each dc of every variant takes the declared one's
    jittered = with_dcs(
        free_spec(spec),
        lambda d: dataclasses.replace(d, jitter=jitter[d.name][0], jitter_kind=jitter[d.name][1], jitter_sigma=jitter[d.name][2]),
    )
    return jittered, probe


def _jitter_cases(spec: Spec, free_plans):
    """(plan with jitter and no load, label, probe?) for each scheme simulated step by step."""
    names = [n for n, p in free_plans.items() if p.step_plan is not None]
    if not names:
        return []
    jittered, probe = _jittered(spec, free_plans)
    if jittered is None:
        return []
    out = []
    what = "probe: exponential jitter at 10% of compute" if probe else "the spec's jitter"
    for name, plan in build_plans(jittered, names).items():
        out.append((plan, f"{name}: step with jitter ({what})", probe))
    return out


def _straggler_cases(spec: Spec, free_plans):
    """(plan with jitter and no load, label, probe?) for H = 1 and each other H in use."""
    jittered, probe = _jittered(spec, free_plans)
    if jittered is None:
        return []
    # one scheme per sync period, a plain sync every H steps (not one simulated step by step, whose syncs
    # overlap, run into a delay, come in fragments or every step: the step simulation's jitter check takes
    # those); H = 1 always, by a copy of a scheme if none has it
    chosen: dict[float, str] = {}
    for name, s in spec.schemes.items():
        if s.overlap or free_plans[name].step_plan is not None:
            continue
        H = free_plans[name].period
        chosen.setdefault(H, name)
    schemes = dict(jittered.schemes)
    if 1.0 not in chosen and chosen:
        base = next(iter(chosen.values()))
        copy = dataclasses.replace(schemes[base], name=f"{base} (H = 1)", period=E.Num(Fraction(1)))
        schemes[copy.name] = copy
        chosen = {1.0: copy.name, **chosen}
    jittered = dataclasses.replace(jittered, schemes=schemes)
    plans = build_plans(jittered, list(chosen.values()))
    out = []
    for H in sorted(chosen):
        plan = plans[chosen[H]]
        n = plan.workers
        what = "probe: exponential jitter at 10% of compute" if probe else "the spec's jitter"
        out.append((plan, f"slowest of {n} workers, H = {H:g} ({plan.name}; {what})", probe))
    return out


__all__ = ["validate", "Validation", "Check", "FAMILY_ALPHA"]
