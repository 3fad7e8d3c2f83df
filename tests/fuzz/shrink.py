"""Shrink a failing input: delete lines (in halves, then quarters, ... then one by one) while it still fails the same way.

The same way: the command gives the same signature, a crash's or a hang's, or a leak's
(`Outcome.signatures`), with the input's file name, imported files and --set as they were.
"""

from __future__ import annotations

import time

from fuzz.harness import Harness


def same_crash(h: Harness, text: str, signature: str, command: str, **run) -> bool:
    result = h.run(text, only={command}, **run)
    return any(signature in o.signatures() for o in result.outcomes)


def shrink(h: Harness, text: str, signature: str, command: str, budget: float = 90.0, **run) -> str:
    """A smaller text with the same signature from the same command (at most `budget` seconds of trying).

    `run`: what else `Harness.run` is given for the input (filename, files, sets).
    """
    deadline = time.monotonic() + budget
    lines = text.split("\n")
    size = max(1, len(lines) // 2)
    while size >= 1 and time.monotonic() < deadline:
        i = 0
        removed = False
        while i < len(lines) and time.monotonic() < deadline:
            trial = lines[:i] + lines[i + size :]
            if trial and same_crash(h, "\n".join(trial), signature, command, **run):
                lines = trial
                removed = True
            else:
                i += size
        if not removed:
            size //= 2
    return "\n".join(lines)
