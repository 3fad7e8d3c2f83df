"""The training step, simulated (ctdsl/simulate/steps.py, stepplan.py) against the closed form of
issue 11's timeline (symbolic/timeline.py, exposure.py) and against formulas derived by hand.

- a TP x PP replica whose sync overlaps the backward pass: without noise the simulated step is
  `ctdsl solve`'s to 1e-9, its pipeline the closed form's compute, bubble and transfers, its
  exposed sync the closed form's; with jitter the closed form lies in the simulated interval;
- the bucket formula max(B tau - w (B - 1)/B, tau) against the simulated FIFO link, in both
  regimes, on plans built by hand (no symbolic back end);
- a delay and Streaming DiLoCo's fragments, exact where the fragment syncs do not overlap, and
  where they pile up (tau_F > H/F steps) the link's bound F tau_F / H, which the closed form misses;
- inner = dc: the inner sync every step and the outer every H steps;
- the same numbers for a seed, on one process or two.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
import sympy as sp

import ctdsl
from ctdsl import units as U
from ctdsl.language.components import ComponentKey
from ctdsl.simulate import steps, tasks
from ctdsl.simulate import validate as V
from ctdsl.simulate import validate_steps as VS
from ctdsl.simulate.plan import DcPlan, PhasePlan, SchemePlan, build_plans, free_spec
from ctdsl.simulate.runner import Settings, simulate
from ctdsl.simulate.stats import agrees, estimate
from ctdsl.simulate.stepplan import ChainPlan, StepPlan, SyncSim
from ctdsl.symbolic.convert import Symbols, value
from ctdsl.symbolic.dimensioned import DimExpr
from ctdsl.symbolic.exposure import exposed_time

ROOT = Path(__file__).resolve().parents[1]
SPEC = ROOT / "tests" / "data" / "tpxpp_step.ct"  # TP 2 x PP 2, m = 4, the WAN at wan_bw (12.5 GB/s) and wan_load (0)
SEED = 20251202


@pytest.fixture(scope="module")
def study():
    return ctdsl.load(SPEC)


@pytest.fixture(scope="module")
def plans(study):
    return build_plans(study.spec)


def _free(plan: SchemePlan, steps_: int | None = None):
    n = steps_ if steps_ is not None else plan.step_plan.cycle
    return tasks.simpy_run(plan)(plan, SEED, 0, n, 0, load=False, jitter=False)


# ---- a TP x PP replica with overlap = backward ----------------------------------------------------


def test_the_replica_is_tp_by_pp_with_buckets_over_its_backward_pass(plans):
    p = plans["overlap"]
    ch = p.chains[0]
    assert (ch.pp, ch.v, ch.micro) == (2, 1, 4.0) and ch.p2p > 0
    sy = p.step_plan.syncs[0]
    assert sy.buckets == 5 and sy.window == pytest.approx(ch.compute) and sy.delay == 0
    assert tasks.engine_of(p, "auto", False) == "simpy" and "step by step" in tasks.engine_note(p, "auto", False)


def test_no_noise_the_simulated_step_is_the_closed_form(study, plans):
    p = plans["overlap"]
    costs = p.costs
    env = Symbols(study.spec).defaults()
    r = _free(p)
    assert r.step == pytest.approx(p.free_step, rel=1e-9)
    # its parts: the pipeline (compute, recompute, tensor parallel, bubble, pipeline parallel) and the exposed sync
    comps = {k: value(v, env) for k, v in costs.timeline.components.items()}
    ch = p.chains[0]
    assert ch.makespan == pytest.approx(sum(v for k, v in comps.items() if k != "optimiser"), rel=1e-9)
    assert set(comps) >= {"compute", "tensor_parallel", "pipeline_bubble", "pipeline_parallel"}  # by key
    assert r.exposed["sync"] == pytest.approx(value(costs.ledger.get(ComponentKey.EXPOSED_SYNC, "sync").value, env), rel=1e-9)


def test_with_jitter_the_closed_form_lies_in_the_interval(plans):
    p = plans["overlap"]
    assert p.stragglers > 0  # 20 ms x H_4, exponential: exact
    assert p.stragglers == pytest.approx(0.020 * (1 + 1 / 2 + 1 / 3 + 1 / 4), rel=1e-12)
    values = [steps.run(p, SEED, k, 30, 2, load=False, jitter=True).step for k in range(10)]
    ok, t, crit = agrees(estimate(values), p.step, 0.01)
    assert ok, (t, crit, p.step, estimate(values))
    assert estimate(values).mean > p.free_step  # the noise is there


# ---- the bucket formula against the FIFO link ---------------------------------------------------


def _hand_plan(B: int, tau: float, w: float, f: float = 1.0, update: float = 0.0, delay: float = 0.0, every: float = 1.0, F: int = 1) -> SchemePlan:
    """One dc of one worker, one stage, one micro-batch: forward f, backward w, then the update; one sync
    of B buckets of tau each (window w when B > 1 or w given), every `every` steps, F fragments."""
    chain = ChainPlan("a", 1, 1, 1.0, f, 0.0, w, 0.0, update, f + w, f + w, f + w, f + w + update)
    sync = SyncSim("sync", every, F, B, w, delay, False, (PhasePlan("bucket", 1, tau, tau, (), (), ()),), 0.0, 0.0, 0.0)
    return SchemePlan(
        name="s", label="s", period=every, overlap=False, transform=0.0, phases=[], dcs=[DcPlan("a", 1, f + w + update, 0.0, None, None)],
        queues={}, steps_to_target=None, step=0.0, free_step=0.0, queueing=0.0, stragglers=0.0,
        chains=(chain,), step_plan=StepPlan((sync,), max(1, int(every))),
    )  # fmt: skip


@pytest.mark.parametrize(
    "B,tau,w",
    [(1, 0.3, 2.0), (4, 1.0, 2.0), (4, 0.25, 2.0), (4, 0.5, 2.0), (25, 0.07, 3.0), (7, 0.9, 1.0), (100, 0.05, 4.0)],
    ids=["one bucket", "tau > w/B", "tau < w/B", "tau = w/B", "many, tau < w/B", "tau >> w/B", "100 buckets, tau > w/B"],
)
def test_bucket_formula_is_the_fifo_links(B, tau, w):
    """Bucket k is released at k w/B and starts at the later of that and the previous bucket's end,
    so the last ends at max over k of (k w/B + (B - k + 1) tau): at k = 1 when tau >= w/B (the link
    busy from the first release on), at k = B otherwise (the last bucket alone)."""
    hand = max(k * w / B + (B - k + 1) * tau for k in range(1, B + 1)) - w
    formula = max(B * tau - w * (B - 1) / B, tau)
    symbolic = float(exposed_time(DimExpr(sp.nsimplify(tau), U.TIME), DimExpr(sp.Integer(B), U.ONE), DimExpr(sp.nsimplify(w), U.TIME), DimExpr(sp.Integer(0), U.TIME)).e)
    assert formula == pytest.approx(hand, rel=1e-12) and symbolic == pytest.approx(hand, rel=1e-12)
    r = _free(_hand_plan(B, tau, w, update=0.125), 6)
    assert r.step == pytest.approx(1.0 + w + 0.125 + hand, rel=1e-12)
    assert r.exposed["sync"] == pytest.approx(hand, rel=1e-12) and r.flags == ()


# ---- delay and fragments ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "tau,delay,every,F,exposed",
    [(2.5, 1, 4, 1, 0.0), (4.0, 1, 4, 1, 1.0 / 4), (7.0, 2, 8, 1, 1.0 / 8), (4.0, 1, 8, 4, 1.0 * 4 / 8), (5.0, 1, 6, 2, 2.0 * 2 / 6)],
    ids=["hidden", "one step short", "two steps", "fragments every 2 steps", "fragments every 3 steps"],
)
def test_delay_and_fragments_by_hand(tau, delay, every, F, exposed):
    """An inner step of T = 3 s; a (fragment) sync of tau released at a step's end must be done at the
    end of the step `delay` later: it exposes max(0, tau - delay T), F times every H steps."""
    p = _hand_plan(1, tau, 0.0, f=1.0, update=2.0, delay=delay, every=every, F=F)
    p = _with_window(p, 0.0)
    r = _free(p, 2 * every)
    assert r.step == pytest.approx(3.0 + exposed, rel=1e-12) and r.flags == ()


def _with_window(p: SchemePlan, w: float) -> SchemePlan:
    sy = dataclasses.replace(p.step_plan.syncs[0], window=w)
    return dataclasses.replace(p, step_plan=dataclasses.replace(p.step_plan, syncs=(sy,)))


def test_streaming_diloco_in_the_spec_is_the_closed_form(plans):
    for name in ("stream", "stream_bw"):
        p = plans[name]
        r = _free(p)
        assert r.step == pytest.approx(p.free_step, rel=1e-9), name
        assert r.flags == () and VS.approximations(p, r) == []
        assert r.exposed["sync"] == pytest.approx(p.step_plan.syncs[0].per_step, rel=1e-9, abs=1e-12)


def test_piled_up_fragment_syncs_run_at_the_links_pace():
    """tau = 1.5 s a fragment, one fragment sync every step (H = F = 4), delay 2, inner step 1 s. Each
    sync alone would hide: max(0, tau - 2 T) = 0. But the link carries one fragment per 1.5 s, so the
    syncs queue until their deadlines hold the steps back: in the long run a step is F tau / H = 1.5 s,
    the link's pace. The closed form has it (exposure.py's keep-up term, F B tau / H - T, where
    F delay > H): T + max(F/H max(0, tau - N T), F B tau / H - T) = 1 + max(0, 0.5) = 1.5 s."""
    p = _with_window(_hand_plan(1, 1.5, 0.0, f=1.0, delay=2, every=4, F=4), 0.0)
    alone = 1.0 + 4 / 4 * max(0.0, 1.5 - 2 * 1.0)
    keep_up = 1.0 + max(4 / 4 * max(0.0, 1.5 - 2 * 1.0), 4 * 1 * 1.5 / 4 - 1.0)
    r = steps.run(p, SEED, 0, 40, 20, load=False, jitter=False)
    assert alone == 1.0 and keep_up == 1.5 and r.step == pytest.approx(keep_up, rel=1e-12)
    assert steps.PILED in r.flags


def test_piled_up_fragments_in_the_spec_reach_the_closed_forms_pace():
    """The spec's pileup (H = F = 2, delay 2): at a 6 GB/s WAN a fragment sync takes 1.38 s against an
    inner step of 0.68 s and the backlog binds at once; at 12 GB/s it takes 0.691 s against 0.688 s
    (links at their efficiency, docs/cost-model.md "Collectives over nodes") and grows 2.5 ms a step, so the steps keep their inner pace for some 300 steps before they slow to
    the link's. Measured after that, the simulated step is the closed form's."""
    for bw, warm in (("6 GB/s", 10), ("12 GB/s", 500)):
        p = build_plans(free_spec(ctdsl.load(SPEC, {"wan_bw": bw}).spec), ["pileup"])["pileup"]
        sy = p.step_plan.syncs[0]
        assert sy.tau > sy.period * p.chains[0].step  # tau_F > H/F inner steps
        r = steps.run(p, SEED, 0, 40, warm, load=False, jitter=False)
        assert r.step == pytest.approx(sy.tau * sy.fragments / sy.every, rel=1e-9) and steps.PILED in r.flags, bw
        assert r.step == pytest.approx(p.free_step, rel=1e-9), bw
    early = steps.run(p, SEED, 0, 40, 20, load=False, jitter=False)  # 12 GB/s, before the backlog binds
    assert early.step < p.free_step * (1 - 1e-3)


# ---- inner = dc ------------------------------------------------------------------------------------


def test_inner_dc_every_step_and_every_h_is_the_closed_form(plans):
    p = plans["innerdc"]
    inner, outer = p.step_plan.syncs
    assert (inner.name, inner.every, inner.per_dc, inner.buckets) == ("inner sync", 1.0, True, 5)
    assert (outer.name, outer.every, outer.per_dc) == ("outer sync", 4.0, False)
    r = _free(p)
    assert r.step == pytest.approx(p.free_step, rel=1e-9) and r.flags == ()
    assert r.exposed["inner sync"] == pytest.approx(inner.per_step, rel=1e-9)
    assert r.exposed["outer sync"] == pytest.approx(outer.per_step, rel=1e-9)


def test_inner_dc_with_a_delay_counts_the_inner_syncs_exposed_part(plans):
    """The outer sync's delay of N = 1 step lasts that step with its exposed inner sync, e: T + e, not T.
    By hand: it exposes max(0, tau - N (T + e)) every H steps, which is the closed form's per step, and
    the simulation, which knows nothing of that formula, waits exactly that long."""
    p = plans["innerdc_delay"]
    inner, outer = p.step_plan.syncs
    assert outer.delay == 1 and outer.every == 4 and outer.per_step > 0 and inner.per_step > 0 and inner.every == 1
    tau = sum(ph.time for ph in outer.bucket)
    T = p.chains[0].step
    by_hand = max(0.0, tau - 1 * (T + inner.per_step)) / outer.every
    assert outer.per_step == pytest.approx(by_hand, rel=1e-12)
    assert by_hand > max(0.0, tau - T) / outer.every - inner.per_step / outer.every - 1e-15  # e shortened the wait
    r = _free(p)
    assert steps.CROWDED not in r.flags and not VS.approximations(p, r)
    assert r.exposed["outer sync"] == pytest.approx(by_hand, rel=1e-9)
    assert r.step == pytest.approx(p.free_step, rel=1e-9)


# ---- determinism, engines, validation -------------------------------------------------------------------


def test_same_seed_same_numbers_any_jobs(study):
    cfg = Settings(steps=8, seeds=2, warmup=0, seed=3)
    a = simulate(study.spec, cfg, names=["overlap", "stream"], load=False)
    b = simulate(study.spec, cfg, names=["overlap", "stream"], load=False, jobs=2)
    for name in ("overlap", "stream"):
        assert [repr(r) for r in a.schemes[name].runs] == [repr(r) for r in b.schemes[name].runs]
        assert a.schemes[name].engine == "simpy" and a.schemes[name].syncs is not None
    c = simulate(study.spec, Settings(steps=8, seeds=2, warmup=0, seed=4), names=["overlap"], load=False)
    assert [r.step for r in c.schemes["overlap"].runs] != [r.step for r in a.schemes["overlap"].runs]


def test_validate_checks_the_timeline(study, monkeypatch):
    monkeypatch.setattr(V, "MD1_ARRIVALS", 2_000)
    monkeypatch.setattr(V, "STRAGGLER_ROUNDS", 100)
    monkeypatch.setattr(VS, "JITTER_STEPS", 30)
    names = ("overlap", "stream", "pileup", "innerdc_delay")
    spec = dataclasses.replace(study.spec, schemes={n: s for n, s in study.spec.schemes.items() if n in names})
    v = V.validate(spec, Settings(steps=10, seeds=4, warmup=0, seed=SEED))
    assert v.ok
    by = {c.what: c for c in v.checks}
    assert by["overlap: step, no load, no jitter"].passed is True
    assert by["overlap: sync exposed per step, no load, no jitter"].passed is True
    assert by["stream: step, no load, no jitter"].passed is True
    assert by["innerdc_delay: step, no load, no jitter"].passed is True
    assert by["pileup: step, no load, no jitter"].passed is True  # measured once the backlog has settled
    pipe = [c for c in v.checks if c.kind == "pipeline"]
    assert len(pipe) == 1 and pipe[0].passed is True and pipe[0].rel <= 1e-9
    blocking = next(c for c in v.checks if c.kind == "blocking")
    # pp = 2, m = 4: blocking sends expose m + 1 = 5 transfers, Calculon's convention 2 m + 2 = 10
    assert blocking.passed is True and "5 transfers" in blocking.note
    jitter = {c.what.split(":")[0]: c for c in v.checks if c.kind == "jitter"}
    assert jitter["overlap"].status == "exact" and jitter["overlap"].passed is True
    assert jitter["stream"].passed is None and jitter["innerdc_delay"].passed is None and jitter["pileup"].passed is None
    assert any("step by step" in n for n in v.notes)


def test_a_loaded_wan_queues_the_buckets():
    spec = ctdsl.load(SPEC, {"wan_load": "0.5"}).spec
    res = simulate(spec, Settings(steps=6, seeds=3, warmup=1, seed=SEED), names=["overlap"], jitter=False)
    s = res.schemes["overlap"]
    assert s.engine == "simpy" and s.links and all(l.sync_wait is not None and l.sync_wait.mean > 0 for l in s.links)
    assert s.step.mean > s.plan.free_step  # the buckets waited behind the background
    assert s.queueing.mean > 0


def test_too_many_buckets_is_ct608(study):
    from ctdsl.failure import Failure
    from ctdsl.simulate.budget import check_jobs

    spec = study.spec
    plans = build_plans(free_spec(spec), ["overlap"])
    p = plans["overlap"]
    sy = dataclasses.replace(p.step_plan.syncs[0], buckets=10**6)
    big = dataclasses.replace(p, step_plan=dataclasses.replace(p.step_plan, syncs=(sy,)))
    with pytest.raises(Failure) as err:
        check_jobs(spec, {"overlap": big}, 100, 10)
    assert err.value.diagnostics[0].code == "CT608"
    check_jobs(spec, plans, 100, 10)  # five buckets a step: fine


def test_a_pipeline_that_cannot_be_scheduled_takes_the_closed_forms_makespan(tmp_path):
    # 6 micro-batches over pp = 4 with v = 2: interleaving needs a multiple of pp
    text = SPEC.read_text(encoding="utf-8").replace("tokens = 4 * 4096", "tokens = 6 * 4096").replace("tp = 2; pp = 2;", "tp = 1; pp = 4; virtual_stages = 2;")
    path = tmp_path / "odd.ct"
    path.write_text(text, encoding="utf-8")
    p = build_plans(free_spec(ctdsl.load(path).spec), ["overlap"])["overlap"]
    ch = p.chains[0]
    assert ch.not_simulated is not None and "multiple of pp" in ch.not_simulated and ch.makespan == ch.closed
    r = _free(p)
    assert r.step == pytest.approx(p.free_step, rel=1e-9)


def test_the_end_stages_in_the_schedule_and_the_closed_form(tmp_path):
    """compute = operations: the last stage carries the LM head (end_stages). The schedule runs
    every stage at that slot; the closed form's fill and drain pass through the other stages
    without it, so the schedule is longer by exactly (pp - 1) / v x the extra of a micro-batch,
    and the validation says so."""
    text = SPEC.read_text(encoding="utf-8").replace("zero = 1 }", "zero = 1; compute = operations }")
    path = tmp_path / "ops.ct"
    path.write_text(text, encoding="utf-8")
    p = build_plans(free_spec(ctdsl.load(path).spec), ["overlap"])["overlap"]
    ch = p.chains[0]
    assert ch.pp == 2 and ch.v == 1 and ch.ends > 0 and ch.not_simulated is None
    assert ch.makespan - ch.closed == pytest.approx((2 - 1) / 1 * ch.ends, rel=1e-9)
    (note,) = [w for w in VS.approximations(p) if "end-stage" in w]
    assert U.format_quantity(ch.ends, U.TIME) in note
