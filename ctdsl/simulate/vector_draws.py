"""The barrier's compute of every round, drawn up front for the numpy engine.

A round of m steps waits for its slowest worker: max over dcs of m b + jitter x
(the largest of its workers' sums of m unit draws). The SimPy engine draws each
round when it reaches it, dc after dc, an (m, workers) array each
(`engine._draw_sums`); none of it depends on the queues, so here the rounds are
drawn in blocks: R rounds of the same length as one (R, m x workers) array, each
row laid out as the SimPy engine's draws of that round, dc after dc. The
generator's stream is consumed element by element whatever the shape of the
call, so the draws are the SimPy engine's, in its order. Rounds that cannot be
drawn as a block (the noisy dcs' kinds differ, or one round alone is more than
CELLS draws) are drawn round by round, with the SimPy engine's own function.
"""

from __future__ import annotations

import numpy as np

from ctdsl.simulate.engine import _draw_sums
from ctdsl.simulate.plan import DcPlan

CELLS = 1 << 20  # unit draws held at a time (8 MiB)


def _unit(rng, kind: str, shape):
    if kind == "exponential":
        return rng.standard_exponential(shape)
    if kind == "uniform":
        return rng.random(shape)
    return rng.standard_normal(shape)  # lognormal: exp(sigma x) per dc, below


def _block(rng, dcs: list[DcPlan], noisy: list[DcPlan], m: int, rounds: int) -> np.ndarray:
    """The compute of `rounds` rounds of m steps, drawn as one array."""
    x = _unit(rng, noisy[0].kind, (rounds, m * sum(d.workers for d in noisy)))
    slowest = np.zeros(rounds)
    at = 0
    with np.errstate(over="ignore", invalid="ignore"):
        for d in dcs:
            if d in noisy:
                part = x[:, at : at + m * d.workers].reshape(rounds, m, d.workers)
                at += m * d.workers
                if d.kind == "lognormal":
                    part = np.exp(d.sigma * part)
                worst = m * d.base + d.jitter * part.sum(axis=1).max(axis=1)
            else:
                worst = np.full(rounds, m * d.base)
            slowest = np.maximum(slowest, worst)
    return slowest


def _one(rng, dcs: list[DcPlan], noisy: list[DcPlan], m: int) -> float:
    """One round, drawn as the SimPy engine's barrier draws it."""
    slowest = 0.0
    for d in dcs:
        if d in noisy:
            worst = m * d.base + d.jitter * float(_draw_sums(rng, d, m).max())
        else:
            worst = m * d.base
        slowest = max(slowest, worst)
    return slowest


def barriers(dcs: list[DcPlan], noisy: list[DcPlan], lengths: list[int], rng, compute: float) -> list[float]:
    """The compute time of each round (the slowest worker's m steps), in round order."""
    if not noisy:
        return [m * compute for m in lengths]
    same_kind = len({d.kind for d in noisy}) == 1
    width = sum(d.workers for d in noisy)
    out: list[float] = []
    i = 0
    while i < len(lengths):
        m = lengths[i]
        if not same_kind or m * width > CELLS:
            out.append(_one(rng, dcs, noisy, m))
            i += 1
            continue
        j = i + 1
        while j < len(lengths) and lengths[j] == m and (j + 1 - i) * m * width <= CELLS:
            j += 1
        out.extend(_block(rng, dcs, noisy, m, j - i).tolist())
        i = j
    return out


__all__ = ["barriers", "CELLS"]
