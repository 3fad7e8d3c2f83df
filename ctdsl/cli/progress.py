"""The progress bar of a long simulation (`ctdsl simulate`): rich, on stderr, only on a terminal."""

from __future__ import annotations

import sys


class progress_bar:
    """A rich progress bar on stderr when it is a terminal; otherwise nothing."""

    def __init__(self, wanted: bool):
        self.enabled = wanted and sys.stderr.isatty()
        self._progress = None
        self._task = None

    def __enter__(self):
        if not self.enabled:
            return None
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeRemainingColumn,
        )

        self._progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeRemainingColumn(),
            console=Console(file=sys.stderr),
            transient=True,
        )
        self._progress.__enter__()
        self._task = self._progress.add_task("simulating", total=None)

        def report(done: int, total: int, what: str) -> None:
            self._progress.update(self._task, completed=done, total=total, description=f"simulating {what}")

        return report

    def __exit__(self, *exc):
        if self._progress is not None:
            self._progress.__exit__(*exc)
        return False


__all__ = ["progress_bar"]
