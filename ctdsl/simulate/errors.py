"""What stops a simulation's runs, importable without numpy or SimPy (the command line catches it)."""

from __future__ import annotations


class TaskError(Exception):
    """A task raised, or the process running it died: `tasks` names it (or the ones it may have been);
    `partial` is set by the runner to the result of the runs that finished."""

    def __init__(self, tasks: list, reason: str):
        self.tasks = tasks
        self.reason = reason
        self.partial = None
        names = ", ".join(t.describe() for t in tasks[:5]) + (f" and {len(tasks) - 5} more" if len(tasks) > 5 else "")
        super().__init__(f"{names}: {reason}")


__all__ = ["TaskError"]
