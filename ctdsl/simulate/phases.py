"""A phase of a collective, step by step, on links that may be queues (engine.py's model, shared
by the round engine and the step engine): each step puts its bytes on every loaded edge it
crosses as one job, and ends when its slowest transfer does (cut-through: a transfer takes its
route latency plus its slowest hop, a loaded hop its wait plus its time on the link). With no
wait the step is the symbolic step time itself.
"""

from __future__ import annotations

from ctdsl.simulate.plan import PhasePlan


def run_phase(env, lqs: list, ph: PhasePlan):
    """One phase from now: its steps, each as long as its slowest transfer; `lqs` the LinkQueue (or
    None: not queued) of each of its loaded edges."""
    if not any(lqs):
        yield env.timeout(ph.time)
        return
    for _ in range(ph.steps):
        t0 = env.now
        jobs = [env.process(lq.sync_job(s)) for lq, s in zip(lqs, ph.service) if lq is not None]
        idx = [i for i, lq in enumerate(lqs) if lq is not None]
        if len(jobs) == 1:
            waits = {idx[0]: (yield jobs[0])}
        else:
            done = yield env.all_of(jobs)
            waits = {i: done[j] for i, j in zip(idx, jobs)}
        rest = t0 + waited_step(ph, waits) - env.now
        if rest > 0:
            yield env.timeout(rest)


def waited_step(ph: PhasePlan, waits: dict[int, float]) -> float:
    """One step of a phase whose jobs waited `waits` (by loaded edge) on their links: each transfer
    takes its route latency plus its slowest hop, a loaded hop its wait plus its time on the link."""
    if not any(waits.values()):
        return ph.free_step
    d = ph.free_step
    for tp in ph.transfers:
        hop = tp.unloaded
        for i, s in tp.loaded:
            hop = max(hop, waits.get(i, 0.0) + s)
        d = max(d, tp.latency + hop)
    return d


__all__ = ["run_phase", "waited_step"]
