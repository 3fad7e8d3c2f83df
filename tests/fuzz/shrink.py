"""Shrink a crashing input: delete lines (in halves, then quarters, ... then one by one) while it still crashes the same way."""

from __future__ import annotations

import time

from fuzz.harness import Harness


def same_crash(h: Harness, text: str, signature: str, command: str) -> bool:
    result = h.run(text, only={command})
    return any(o.signature == signature for o in result.outcomes)


def shrink(h: Harness, text: str, signature: str, command: str, budget: float = 90.0) -> str:
    """A smaller text with the same crash signature from the same command (at most `budget` seconds of trying)."""
    deadline = time.monotonic() + budget
    lines = text.split("\n")
    size = max(1, len(lines) // 2)
    while size >= 1 and time.monotonic() < deadline:
        i = 0
        removed = False
        while i < len(lines) and time.monotonic() < deadline:
            trial = lines[:i] + lines[i + size :]
            if trial and same_crash(h, "\n".join(trial), signature, command):
                lines = trial
                removed = True
            else:
                i += size
        if not removed:
            size //= 2
    return "\n".join(lines)
