"""The pipeline schedule of one replica chain, simulated: pp ranks running 1F1B (v = 1) or
interleaved 1F1B (v > 1 model chunks per rank), m micro-batches, point-to-point transfers
between stages (docs/simulation.md, "The training step").

The order of each rank's operations is Megatron's (`forward_backward_pipelining_without_
interleaving` and `..._with_interleaving`): rank r first runs pp - r - 1 forwards (v = 1;
(pp - r - 1) 2 + (v - 1) pp with v chunks, or all of them when m = pp), then alternates one
forward and one backward, then runs the backwards left. Virtual stage s = c pp + r holds chunk
c of rank r; micro-batch j's forward on stage s needs its forward on stage s - 1, its backward
on s its backward on s + 1 (and, on the last stage, its own forward).

An operation occupies its rank for its time: the forward of a chunk f / v, its backward b / v
(f: a micro-batch's forward on one GPU with its tensor, context and expert parallel time and
ZeRO-3 gathers; b: its backward with recomputation, the same traffic, its gathers), and its
point-to-point transfer, blocking, t_p2p. Where the transfer sits is the convention:

- `every` (Calculon's, the closed form's): every forward ends with a transfer and every
  backward starts with one, on every stage, the ends of the pipeline included. Every
  operation then takes the same time on every rank, and the makespan is the textbook
  (m + (pp - 1) / v) (f + b + 2 v t_p2p) = (m + (pp - 1)/v)(f + b) + (2 v m + 2 (pp - 1)) t_p2p:
  the closed form's compute, bubble and pipeline-parallel terms, exactly.
- `sent`: only transfers that move data: a forward ends with the send of its activations
  unless it is on the last virtual stage, a backward with the send of its input gradients
  unless it is on the first; the sender is blocked for t_p2p, the data arrives at its end.
  For v = 1 its makespan is derived in `sent_makespan` (pp = 2: (m + 1)(f + b + t_p2p);
  pp >= 3: the closed form less 3 t_p2p, 2 for m = 1); for v > 1 it depends on the regime.

A backward operation's own computation (t_b + t_r) comes last in it, so the window a sync
that overlaps the backward pass hides in is the last t_b + t_r of the rank's schedule.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

EVERY = "every"  # Calculon's convention, the closed form's
SENT = "sent"  # only the transfers that move data


def rank_ops(pp: int, m: int, v: int, r: int) -> list[tuple[str, int, int]]:
    """Rank r's operations in order: (F or B, micro-batch, chunk)."""
    total = m * v
    if v == 1:
        warm = min(pp - r - 1, m)
    elif m == pp:
        warm = total
    else:
        warm = min((pp - r - 1) * 2 + (v - 1) * pp, total)

    def op(kind: str, k: int) -> tuple[str, int, int]:
        group = k % (pp * v)
        chunk = group // pp if kind == "F" else v - 1 - group // pp
        return (kind, (k // (pp * v)) * pp + k % pp, chunk)

    ops = [op("F", k) for k in range(warm)]
    for i in range(total - warm):
        ops.append(op("F", warm + i))
        ops.append(op("B", i))
    ops.extend(op("B", k) for k in range(total - warm, total))
    return ops


def schedulable(pp: int, m: float, v: int) -> str | None:
    """None when the schedule is defined; else why not, in a few words."""
    if pp < 1 or v < 1:
        return "pp and virtual stages must be whole numbers of at least 1"
    if m < 1 or m != int(m):
        return f"{m:g} micro-batches is not a whole number of at least 1"
    if v > 1 and pp > 1 and int(m) % pp:
        return f"interleaving needs the micro-batches ({int(m)}) to be a multiple of pp ({pp})"
    return None


@dataclass(frozen=True)
class Schedule:
    makespan: float  # the last operation's end
    rank_end: tuple[float, ...]  # each rank's last operation's end
    events: int  # SimPy events processed


@lru_cache(maxsize=256)
def simulate(pp: int, m: int, v: int, forward: float, backward: float, compute: float, p2p: float, mode: str = EVERY) -> Schedule:
    """The schedule's times, by SimPy: `forward` one micro-batch's forward on one stage, `backward`
    its backward's traffic and gathers, `compute` its backward's own computation (t_b + t_r),
    `p2p` one transfer (none with pp = 1)."""
    import simpy

    env = simpy.Environment()
    stages = pp * v
    done: dict[tuple[str, int, int], simpy.Event] = {}

    def ready(key):
        ev = done.get(key)
        if ev is None:
            ev = done[key] = env.event()
        return ev

    p = p2p if pp > 1 else 0.0
    ends = [0.0] * pp

    def rank(r: int):
        for kind, j, c in rank_ops(pp, m, v, r):
            s = c * pp + r
            if kind == "F":
                if s > 0:
                    yield ready(("F", j, s - 1))
                send = p if (mode == EVERY or s < stages - 1) else 0.0
                yield env.timeout(forward / v + send)
            else:
                yield ready(("B", j, s + 1)) if s < stages - 1 else ready(("F", j, s))
                head = p if mode == EVERY else 0.0
                tail = p if (mode == SENT and s > 0) else 0.0
                yield env.timeout(head + backward / v)
                yield env.timeout(compute / v + tail)
            ready((kind, j, s)).succeed()
        ends[r] = env.now

    for r in range(pp):
        env.process(rank(r))
    events = 0
    while env.peek() != float("inf"):
        env.step()
        events += 1
    if any(not ev.triggered for ev in done.values()):  # pragma: no cover - the orders above never deadlock
        raise RuntimeError("pipeline schedule deadlocked")
    return Schedule(max(ends), tuple(ends), events)


def sent_makespan(pp: int, m: int, op: float, p2p: float) -> float | None:
    """The `sent` schedule's makespan for v = 1, derived (docs/simulation.md): op = f + b.

    The critical path runs micro-batch 0's forward down every stage and its backward up to
    stage 1, then stage 1's steady state (each of its forwards and backwards sends), then
    micro-batch m - 1's forward down and backward up: (m + pp - 1) op and 2 m + 2 pp - 5
    transfers (pp >= 3, m >= 2): Calculon's count less the two forwards of the last stage and
    the backward of the first on that path, which send nothing. With m = 1 the path is
    one forward down and one backward up: 2 (pp - 1) transfers. With pp = 2 neither stage sends
    both ways: one transfer a micro-batch, (m + 1)(op + t_p2p)."""
    if pp == 1:
        return m * op
    if pp == 2:
        return (m + 1) * (op + p2p)
    if m == 1:
        return pp * op + (2 * pp - 2) * p2p
    return (m + pp - 1) * op + (2 * m + 2 * pp - 5) * p2p


def transfers_every(pp: int, m: int, v: int) -> int:
    """Calculon's count of exposed transfers: 2 v m + 2 (pp - 1) (none with pp = 1)."""
    return 0 if pp == 1 else 2 * v * m + 2 * (pp - 1)


__all__ = ["EVERY", "SENT", "Schedule", "rank_ops", "schedulable", "simulate", "sent_makespan", "transfers_every"]
