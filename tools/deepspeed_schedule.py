"""DeepSpeed's pipeline schedule, step by step, against 1F1B's makespan: the evidence of
docs/validation.md ("vTrain 18.4B") that Megatron-DeepSpeed's pipeline engine is not what the
model misses on the vTrain set's pipelined rows.

    python tools/deepspeed_schedule.py                 # makespans for pp 2, 4, 8 and m 4 to 32
    python tools/deepspeed_schedule.py --transfer 0.1  # with each blocking transfer taking 0.1

DeepSpeed's `TrainSchedule` (deepspeed/runtime/pipe/schedule.py) runs 2 (m + pp - 1) steps on
each stage. At step t, stage s runs a forward when t and s have the same parity, else a
backward. The forward's micro-batch is t // 2 - s // 2 (even t) or (t - 1) // 2 - s // 2 (odd t).
The backward's is t // 2 - pp + (s + 1) // 2 (even t) or (t - 1) // 2 - pp + 1 + s // 2 (odd t).
Steps whose micro-batch is outside 0 .. m - 1 compute nothing. Each step first exchanges:
- a forward step receives its activation from stage s - 1, then sends the previous step's input
  gradient back;
- a backward step sends the previous step's activation on to stage s + 1, then receives its
  output gradient.
The transfers are blocking and paired (a send completes with its receive). This file simulates
that command stream with each forward taking f, each backward b and each transfer c, a stage
waiting for its partner at every transfer.
"""

from __future__ import annotations

import argparse


def commands(m: int, pp: int, s: int) -> list[tuple[str, int]]:
    """The command stream of stage s: ('F' | 'B' | 'recv_act' | 'send_act' | 'recv_grad' | 'send_grad', micro-batch)."""
    out: list[tuple[str, int]] = []
    prev = -1
    valid = lambda k: 0 <= k < m  # noqa: E731
    for t in range(2 * (m + pp - 1)):
        forward = t % 2 == s % 2
        if forward:
            k = (t // 2 if t % 2 == 0 else (t - 1) // 2) - s // 2
        else:
            k = t // 2 - pp + (s + 1) // 2 if t % 2 == 0 else (t - 1) // 2 - pp + 1 + s // 2
        if forward:
            if valid(k) and s > 0:
                out.append(("recv_act", k))
            if valid(prev) and s > 0:
                out.append(("send_grad", prev))
        else:
            if valid(prev) and s < pp - 1:
                out.append(("send_act", prev))
            if valid(k) and s < pp - 1:
                out.append(("recv_grad", k))
        if valid(k):
            out.append(("F" if forward else "B", k))
        prev = k
    return out


PARTNER = {"recv_act": ("send_act", -1), "send_grad": ("recv_grad", -1), "send_act": ("recv_act", 1), "recv_grad": ("send_grad", 1)}


def makespan(m: int, pp: int, f: float, b: float, c: float = 0.0) -> float:
    """The time the last stage finishes the schedule's last command."""
    prog = [commands(m, pp, s) for s in range(pp)]
    pc, clock = [0] * pp, [0.0] * pp
    moved = True
    while moved:
        moved = False
        for s in range(pp):
            while pc[s] < len(prog[s]):
                op, k = prog[s][pc[s]]
                if op in ("F", "B"):
                    clock[s] += f if op == "F" else b
                    pc[s] += 1
                    moved = True
                    continue
                want, step = PARTNER[op]
                q = s + step
                if pc[q] < len(prog[q]) and prog[q][pc[q]] == (want, k):
                    clock[s] = clock[q] = max(clock[s], clock[q]) + c
                    pc[s] += 1
                    pc[q] += 1
                    moved = True
                    continue
                break
    if any(pc[s] != len(prog[s]) for s in range(pp)):
        raise RuntimeError("the command streams deadlock")
    return max(clock)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--forward", type=float, default=1.0)
    ap.add_argument("--backward", type=float, default=2.0)
    ap.add_argument("--transfer", type=float, default=0.0)
    a = ap.parse_args()
    print("pp  m   DeepSpeed   1F1B (m + pp - 1)(f + b)")
    for pp in (2, 4, 8):
        for m in (4, 8, 16, 32):
            one = (m + pp - 1) * (a.forward + a.backward)
            print(f"{pp:2d} {m:3d}  {makespan(m, pp, a.forward, a.backward, a.transfer):10.3f}  {one:10.3f}")


if __name__ == "__main__":
    main()
