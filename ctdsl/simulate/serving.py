"""A discrete-event simulation of one serving path, planned from its closed forms (issue 28, part B).

The step times are the closed forms' own (ctdsl.symbolic.serving_steps and serving.py),
compiled once at the params' values: a prefill of one prompt of s tokens (plus the GPU's
transform of its hand-off), the hand-off's link time for s tokens, and a decode step of b
sequences holding X = sum(c_i + 1) positions. What the simulation adds is what the closed
forms approximate: the queues and the batches, request by request.

- Arrivals: Poisson at the workload's rate (or evenly spaced, `deterministic`); prompt and
  output lengths drawn from gamma distributions of the workload's means and coefficients of
  variation (a constant where the cv is 0), rounded to whole tokens, at least 1.
- Prefill: each request goes to a prefill instance chosen uniformly at random (the closed
  forms' split) and waits there first come, first served; an instance prefills one prompt at
  a time.
- Hand-off: one FIFO link; the first token is counted when the hand-off ends (TTFT's
  convention, docs/serving.md), whole; a layer-wise hand-off starts its transfer as the
  prefill starts and ends no sooner than the closed form's exposed part after the prefill.
- Decode: each request goes to a decode instance chosen uniformly at random; continuous
  batching admits waiting requests at each step while the batch is under max_batch and their
  whole KV (prompt + output) fits; every step gives each running sequence one token.
- Colocated: one queue per instance; a waiting prefill runs before the next decode step.
- Chunked prefill (`batching = chunked`): a prompt is prefilled in chunks of `chunk` tokens
  (the last one shorter), each a step of its own on a prefill instance; on a colocated
  instance each step carries the running sequences' decode and at most one chunk of the
  prompt at the head of the queue (Sarathi-Serve's hybrid batch, one prompt a chunk), so
  the decode does not stop for a prefill; the first token comes with the last chunk.

Long: one module past 400 lines, since a path's plan, its run (prefill, hand-off, decode, colocated with
whole or chunked prefills) and its validation share one request record and one clock, and
each instance's loop is read beside the others it must agree with.

Seeded (one `random.Random(seed)` per run) and deterministic: the same spec and seed give
the same numbers on every machine. `validate` compares the means of several seeds with the
closed forms by a t test, in the regime where the forms hold (low load).
"""

from __future__ import annotations

import heapq
import math
import random
from collections import deque
from dataclasses import dataclass
from typing import Callable

import sympy as sp

from ctdsl import units as U
from ctdsl.language.serving import Arrival, HandoffMode
from ctdsl.model.entities import Spec
from ctdsl.results.serving import PathResult
from ctdsl.simulate.stats import Estimate, agrees, estimate
from ctdsl.symbolic import serving as SV
from ctdsl.symbolic.context import contexts
from ctdsl.symbolic.convert import Env, Symbols, value
from ctdsl.symbolic.dimensioned import DimExpr

_S, _B, _X = sp.symbols("s_tokens b_seqs x_positions", positive=True)
_M, _P = sp.symbols("m_chunk p_offset", nonnegative=True)
MAX_REQUESTS = 1_000_000  # a run's requests at most: each is simulated one by one
MAX_TOKENS = 200_000_000  # output tokens a run may make at most (each is part of a decode step), checked once drawn


@dataclass(frozen=True)
class Plan:
    """A path's step times as numeric functions, and what the simulation needs of its spec."""

    prefill: Callable[[float], float]  # s -> seconds (one prompt, with the GPU's transform)
    handoff: Callable[[float], float] | None  # s -> seconds the link is busy; None: colocated
    exposed_after_prefill: Callable[[float, float], float] | None  # (handoff, prefill) -> the part after the prefill
    decode: Callable[[float, float], float]  # (b, X) -> seconds
    n_prefill: int
    n_decode: int
    max_batch: int
    kv_tokens: float
    rate: float
    arrival: Arrival
    prompt: float
    prompt_cv: float
    output: float
    output_cv: float
    colocated: bool
    chunk: int | None = None  # prompt tokens a step carries (chunked batching); None: whole prompts
    step: Callable[[float, float, float, float], float] | None = None  # (b, X, m, p) -> seconds: decode and a chunk


def _compile(expr: DimExpr, args: tuple, env: Env) -> Callable:
    """`expr` at the params' values, as a function of `args` (ctdsl's own expression, never text)."""
    subs = {sym: val for sym, val in env.items() if sym in expr.e.free_symbols}
    fn = sp.lambdify(args, expr.e.subs(subs), modules="math", dummify=True)
    return fn


def plan(spec: Spec, path_name: str) -> Plan:
    """The plan of the path named `path_name` (`WORKLOAD/HANDOFF` or `WORKLOAD/POOL`)."""
    path = next(p for p in spec.serving.paths if p.name == path_name)
    symbols = Symbols(spec)
    env = Env(symbols.defaults())
    ctx = contexts(spec, symbols)[None]
    p = SV._Path(ctx, path)
    one = DimExpr(sp.Integer(1), U.ONE)
    s, b, x = DimExpr(_S, U.ONE), DimExpr(_B, U.ONE), DimExpr(_X, U.ONE)
    w = p.w
    env_s = {**env}
    handoff = exposed = None
    prefill = p.pf.prefill(one, s)
    if p.h is not None:
        saved = p.s
        p.s = s  # the hand-off's forms for a prompt of s tokens
        t_x, service, _, _ = p.handoff(DimExpr(sp.Integer(0), U.TIME))
        p.s = saved
        prefill = prefill + t_x
        handoff = _compile(service, (_S,), env_s)
        if p.h.mode is HandoffMode.LAYERWISE:
            layers = value(p.pf.layers.e, env)
            exposed = lambda h, tp: max(h / layers, h - tp * (layers - 1) / layers)  # noqa: E731
    decode = p.df.decode(b, x / b - 1)
    val = lambda e: value(e.e.subs(SV.RATE, sp.Integer(0)), env)  # noqa: E731
    prefill_fn = _compile(prefill, (_S,), env_s)
    chunk = step = None
    if p.pf.chunk is not None:
        chunk = int(val(p.pf.chunk))
        zero = DimExpr(sp.Integer(0), U.ONE)
        m_, p_ = DimExpr(_M, U.ONE), DimExpr(_P, U.ONE)
        alone = _compile(p.pf.step(zero, zero, one, m_, p_), (_M, _P), env_s)
        extra = _compile(prefill - p.pf.prefill(one, s), (_S,), env_s)  # the GPU's transform of the hand-off
        prefill_fn = lambda s_, c=chunk: sum(alone(min(c, s_ - o), o) for o in range(0, s_, c)) + extra(s_)  # noqa: E731
        step = _compile(p.pf.step(b, x, one, m_, p_), (_B, _X, _M, _P), env_s)
    return Plan(
        prefill=prefill_fn,
        chunk=chunk,
        step=step,
        handoff=handoff,
        exposed_after_prefill=exposed,
        decode=_compile(decode, (_B, _X), env_s),
        n_prefill=int(val(p.n_entry)),
        n_decode=int(val(p.n_decode)),
        max_batch=int(val(p.df.max_batch)),
        kv_tokens=val(p.df.kv_capacity),
        rate=value(ctx.sym(w.rate), env),
        arrival=w.arrival,
        prompt=val(p.s),
        prompt_cv=val(p.cv),
        output=val(p.o),
        output_cv=value(ctx.sym(w.output_cv), env),
        colocated=p.h is None,
    )


@dataclass
class _Req:
    arrival: float
    s: int
    o: int
    prefill_start: float = 0.0
    prefill_end: float = 0.0
    link_start: float = 0.0
    first: float = 0.0  # the first token: the hand-off's end (colocated: the prefill's)
    done: float = 0.0
    left: int = 0  # output tokens still to make


def _length(rng: random.Random, mean: float, cv: float) -> int:
    if cv <= 0:
        return max(1, round(mean))
    k = 1 / (cv * cv)
    return max(1, round(rng.gammavariate(k, mean / k)))


def run(pl: Plan, requests: int, seed: int) -> list[_Req]:
    """One seeded run of `requests` requests; every request finished."""
    return run_counted(pl, requests, seed)[0]


def run_counted(pl: Plan, requests: int, seed: int) -> tuple[list[_Req], int]:
    """One seeded run and its events: arrivals, prefills, hand-offs and decode steps."""
    if not 0 < requests <= MAX_REQUESTS:
        raise ValueError(f"requests must be in 1..{MAX_REQUESTS}")
    rng = random.Random(seed)
    reqs, t = [], 0.0
    for _ in range(requests):
        t += rng.expovariate(pl.rate) if pl.arrival is Arrival.POISSON else 1 / pl.rate
        reqs.append(_Req(t, _length(rng, pl.prompt, pl.prompt_cv), _length(rng, pl.output, pl.output_cv)))
    drawn = sum(r.o for r in reqs)
    if drawn > MAX_TOKENS:
        raise ValueError(f"the run draws {drawn:,} output tokens, more than {MAX_TOKENS:,}: fewer requests or shorter outputs")
    prefill_of = [rng.randrange(pl.n_prefill) for _ in reqs]
    decode_of = [rng.randrange(pl.n_decode) for _ in reqs]
    if pl.colocated:
        if pl.chunk is not None:
            return reqs, requests + _colocated_chunked(pl, reqs, prefill_of)
        return reqs, 2 * requests + _colocated(pl, reqs, prefill_of)
    # prefill: FIFO per instance, one prompt at a time (only the instances some request reaches are kept:
    # a pool of a billion instances costs no more than one of `requests`)
    free: dict[int, float] = {}
    for r, i in zip(reqs, prefill_of):
        r.prefill_start = max(r.arrival, free.get(i, 0.0))
        r.prefill_end = free[i] = r.prefill_start + pl.prefill(r.s)
    # the link: FIFO in the order the prefills end
    link_free = 0.0
    for r in sorted(reqs, key=lambda r: (r.prefill_end, r.arrival)):
        h = pl.handoff(r.s)
        if pl.exposed_after_prefill is None:
            r.link_start = max(r.prefill_end, link_free)
            link_free = r.link_start + h
            r.first = link_free
        else:
            r.link_start = max(r.prefill_start, link_free)
            link_free = r.link_start + h
            r.first = max(link_free, r.prefill_end + pl.exposed_after_prefill(h, r.prefill_end - r.prefill_start))
    steps = 0
    for group in _groups(reqs, decode_of):
        steps += _decode(pl, sorted(group, key=lambda r: r.first))
    return reqs, 3 * requests + steps


def _groups(reqs: list[_Req], instance_of: list[int]) -> list[list[_Req]]:
    """The requests of each instance some request reaches, in instance order."""
    by: dict[int, list[_Req]] = {}
    for r, i in zip(reqs, instance_of):
        by.setdefault(i, []).append(r)
    return [by[i] for i in sorted(by)]


def _macro_step(pl: Plan, running: list[_Req], now: float, x: float, until: float) -> tuple[float, float, int]:
    """A macro-step: the batch is the same until its first sequence finishes or `until` passes, so the
    steps up to then are taken without touching the requests (the same additions as one by one).
    Returns (now, x, steps)."""
    b, most, k = len(running), min(r.left for r in running), 0
    while k < most:
        now += pl.decode(b, x)
        x += b
        k += 1
        if now >= until:
            break
    return now, x, k


def _retire(running: list[_Req], k: int, now: float, x: float) -> tuple[list[_Req], float, float]:
    """Every running sequence k tokens on; a finished one is done at `now` and leaves the batch.
    Returns (the sequences still running, x, the KV tokens freed)."""
    still, freed = [], 0.0
    for r in running:
        r.left -= k
        if r.left == 0:
            r.done = now
            x -= r.s + r.o + 1
            freed += r.s + r.o
        else:
            still.append(r)
    return still, x, freed


def _decode(pl: Plan, queue: list[_Req]) -> int:
    """Continuous batching on one decode instance; requests in the order their hand-offs end. Its steps."""
    waiting = deque(queue)
    running: list[_Req] = []
    now, kv, x, steps = 0.0, 0.0, 0.0, 0
    while waiting or running:
        if not running and waiting and waiting[0].first > now:
            now = waiting[0].first
        while waiting and waiting[0].first <= now and len(running) < pl.max_batch and kv + waiting[0].s + waiting[0].o <= pl.kv_tokens:
            r = waiting.popleft()
            r.left = r.o - 1
            if r.left <= 0:
                r.done = r.first
                continue
            kv += r.s + r.o
            x += r.s + 2  # its context c = s + 1 (the first token), and itself
            running.append(r)
        if not running:
            if waiting and waiting[0].first > now:
                continue
            if waiting:  # the head does not fit even alone: the checker's CT360 makes this unreachable
                raise ValueError("a request's KV cache does not fit the decode instance")
            break
        until = waiting[0].first if waiting and waiting[0].first > now else math.inf  # the next hand-off's end
        now, x, k = _macro_step(pl, running, now, x, until)
        steps += k
        running, x, freed = _retire(running, k, now, x)
        kv -= freed
    return steps


def _colocated(pl: Plan, reqs: list[_Req], instance_of: list[int]) -> int:
    """Each colocated instance, prefill first; its decode steps."""
    steps = 0
    for mine in _groups(reqs, instance_of):
        arrivals = deque(mine)
        prefill_q: deque[_Req] = deque()
        running: list[_Req] = []
        now, x = 0.0, 0.0
        while arrivals or prefill_q or running:
            while arrivals and arrivals[0].arrival <= now:
                prefill_q.append(arrivals.popleft())
            if prefill_q:
                r = prefill_q.popleft()
                r.prefill_start = now
                now += pl.prefill(r.s)
                r.prefill_end = r.first = now
                r.left = r.o - 1
                if r.left <= 0:
                    r.done = now
                else:
                    running.append(r)
                    x += r.s + 2
                continue
            if running:  # a macro-step, as on a decode instance: until a sequence finishes or a request arrives
                now, x, k = _macro_step(pl, running, now, x, arrivals[0].arrival if arrivals else math.inf)
                steps += k
                running, x, _ = _retire(running, k, now, x)
                continue
            now = arrivals[0].arrival
    return steps


def _colocated_chunked(pl: Plan, reqs: list[_Req], instance_of: list[int]) -> int:
    """Each colocated instance batching chunked prefill: every step decodes the running sequences and
    carries at most one chunk of the prompt at the head of the queue. Its steps."""
    steps = 0
    for mine in _groups(reqs, instance_of):
        arrivals = deque(mine)
        prefill_q: deque[_Req] = deque()
        running: list[_Req] = []
        now, x, cur, off = 0.0, 0.0, None, 0
        while arrivals or prefill_q or cur is not None or running:
            while arrivals and arrivals[0].arrival <= now:
                prefill_q.append(arrivals.popleft())
            if cur is None and prefill_q:
                cur, off = prefill_q.popleft(), 0
                cur.prefill_start = now
            if cur is not None:  # a hybrid step: the decode of every running sequence and one chunk
                m = min(pl.chunk, cur.s - off)
                now += pl.step(len(running), x, m, off)
                off += m
                steps += 1
                x += len(running)
                running, x, _ = _retire(running, 1, now, x)
                if off >= cur.s:
                    cur.prefill_end = cur.first = now
                    cur.left = cur.o - 1
                    if cur.left <= 0:
                        cur.done = now
                    else:
                        running.append(cur)
                        x += cur.s + 2
                    cur = None
                continue
            if running:  # a macro-step of decode alone, until a sequence finishes or a request arrives
                now, x, k = _macro_step(pl, running, now, x, arrivals[0].arrival if arrivals else math.inf)
                steps += k
                running, x, _ = _retire(running, k, now, x)
                continue
            now = arrivals[0].arrival
    return steps


@dataclass(frozen=True)
class Measured:
    """The means and percentiles of one run, after its warm-up."""

    prefill_wait: float
    ttft: float
    ttft_p99: float
    tpot: float
    e2e: float
    decode_batch: float  # time-average of the sequences decoding on an instance (Little's L)
    requests: int


def measure(reqs: list[_Req], instances: int = 1, warmup: float = 0.1) -> Measured:
    """The means after the warm-up; the decode batch per decode instance (of `instances`)."""
    kept = reqs[int(len(reqs) * warmup):]
    ttfts = sorted(r.first - r.arrival for r in kept)
    tpots = [(r.done - r.first) / (r.o - 1) for r in kept if r.o > 1]
    span = kept[-1].arrival - kept[0].arrival
    # Little: the mean number decoding = arrival rate x mean time decoding
    decoding = sum(r.done - r.first for r in kept) / span / instances if span > 0 else math.nan
    return Measured(
        prefill_wait=sum(r.prefill_start - r.arrival for r in kept) / len(kept),
        ttft=sum(ttfts) / len(ttfts),
        ttft_p99=ttfts[min(len(ttfts) - 1, int(0.99 * len(ttfts)))],
        tpot=sum(tpots) / len(tpots) if tpots else math.nan,
        e2e=sum(r.done - r.arrival for r in kept) / len(kept),
        decode_batch=decoding,
        requests=len(kept),
    )


@dataclass(frozen=True)
class Check:
    quantity: str
    closed_form: float
    simulated: Estimate
    within_ci: bool  # the t test at alpha does not tell them apart
    relative: float  # (simulated - closed form) / closed form

    @property
    def agrees(self) -> bool:
        """Within the confidence interval, or, the closed form being an approximation, within APPROX_REL."""
        return self.within_ci or abs(self.relative) <= APPROX_REL


VALIDATED = ("prefill_wait", "ttft", "tpot", "decode_batch")
# how far an approximate closed form may stand from the simulated mean and still agree: the tandem
# queue (the hand-off link fed by the prefill's departures, not by Poisson arrivals) and the batch a
# sequence decodes in are approximated (docs/serving.md); at low load each is within 3% of the simulation
APPROX_REL = 0.05
ALPHA = 0.05  # the t test's level: the 95% interval the table shows


def validate(spec: Spec, result: PathResult, requests: int, seeds: int, base_seed: int = 0, alpha: float = ALPHA) -> list[Check]:
    """The closed forms' means against the simulation's, over `seeds` seeded runs (a t test at `alpha`)."""
    pl = plan(spec, result.name)
    runs = [measure(run(pl, requests, base_seed + k), pl.n_decode) for k in range(seeds)]
    out = []
    for key in VALIDATED:
        est = estimate([getattr(m, key) for m in runs])
        ref = result.value(key)
        rel = (est.mean - ref) / ref if ref else math.inf
        out.append(Check(key, ref, est, agrees(est, ref, alpha)[0], rel))
    return out


__all__ = ["ALPHA", "APPROX_REL", "Check", "MAX_REQUESTS", "MAX_TOKENS", "Measured", "Plan", "measure", "plan", "run", "run_counted", "validate"]
