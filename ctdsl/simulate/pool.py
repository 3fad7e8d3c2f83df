"""Tasks run in this process or over a pool of processes, streamed back as they finish.

`stream(tasks, jobs, fn, admit)` yields (task, result) in completion order.
With one job the tasks run here, one after the other. With more, a
`ProcessPoolExecutor` of `jobs` processes (the 'forkserver' start method where
the platform has it, with ctdsl's simulation modules loaded once in the server,
else 'spawn'; never 'fork', which copies a process's threads and locks) runs
them; at most jobs + 1 are submitted at a time, so that:

- `admit()` is asked before each task after the first is submitted: when it
  says no (the wall budget, a Ctrl-C), no further task starts, the ones running
  finish and are yielded, and the stream ends. Tasks start in task order, so
  the runs kept are always the first ones (a prefix of every scheme's seeds);
- a task that raises, or a worker process that dies, stops further tasks
  from starting; the running ones finish and are yielded, then `TaskError`
  names the failed task (for a dead process, the tasks it may have been
  running: a broken pool fails every one);
- closing the stream (the consumer stops, or a second Ctrl-C) cancels the
  tasks not started and ends the worker processes.

The workers ignore SIGINT: a Ctrl-C at a terminal reaches the whole process
group, and only this process decides what it stops.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Callable, Iterator

from ctdsl.simulate import tasks as T
from ctdsl.simulate.engine import RunResult

Admit = Callable[[], bool]
Fn = Callable[[T.Task], RunResult]
PRELOAD = ["ctdsl.simulate.tasks"]  # what each forked worker has loaded already


def default_jobs() -> int:
    return os.cpu_count() or 1


def _always() -> bool:
    return True


def stream(tasks: list[T.Task], jobs: int = 1, fn: Fn | None = None, admit: Admit = _always) -> Iterator[tuple[T.Task, RunResult]]:
    """Every task's result as it finishes (see the module's docstring)."""
    jobs = max(1, min(jobs, len(tasks)))
    if jobs == 1:
        return _serial(tasks, fn, admit)
    return _pool(tasks, jobs, fn or T.execute, admit)


def _serial(tasks, fn, admit) -> Iterator[tuple[T.Task, RunResult]]:
    for i, task in enumerate(tasks):
        if i and not admit():
            return
        try:
            result = (fn or T.execute)(task)  # looked up now: a test may replace tasks.execute
        except Exception as exc:  # a task's failure, named; KeyboardInterrupt passes
            raise T.TaskError([task], describe(exc)) from exc
        yield task, result


def describe(exc: BaseException) -> str:
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _context():
    if "forkserver" in multiprocessing.get_all_start_methods():
        ctx = multiprocessing.get_context("forkserver")
        ctx.set_forkserver_preload(PRELOAD)
        return ctx
    return multiprocessing.get_context("spawn")


def _quiet() -> None:
    """A worker's start: Ctrl-C is the parent's to handle."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _pool(tasks, jobs: int, fn: Fn, admit: Admit) -> Iterator[tuple[T.Task, RunResult]]:
    ex = ProcessPoolExecutor(max_workers=jobs, mp_context=_context(), initializer=_quiet)
    pending: dict[Future, T.Task] = {}
    failed: list[tuple[T.Task, BaseException]] = []
    nxt, open_ = 0, True
    try:
        while True:
            while open_ and nxt < len(tasks) and len(pending) <= jobs:
                if nxt and not admit():
                    open_ = False
                    break
                pending[ex.submit(fn, tasks[nxt])] = tasks[nxt]
                nxt += 1
            if not pending:
                return
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for fut in sorted(done, key=lambda f: pending[f].index):
                task = pending.pop(fut)
                exc = fut.exception()
                if exc is None:
                    yield task, fut.result()
                else:
                    failed.append((task, exc))
                    open_ = False  # no further task starts; the running ones finish and are kept
            if failed and not pending:
                raise failure(failed, [])
    finally:
        _stop(ex, pending)


def failure(failed: list[tuple[T.Task, BaseException]], also_broken: list[T.Task]) -> T.TaskError:
    """The error for the first failed task in task order; for a dead worker, every task it may have
    been running (a broken pool fails them all)."""
    failed = sorted(failed, key=lambda f: f[0].index)
    broken = [t for t, e in failed if isinstance(e, BrokenProcessPool)]
    if broken:
        return T.TaskError(sorted(broken + also_broken, key=lambda t: t.index), "a worker process died while running it (killed, out of memory, or a crash in native code)")
    task, exc = failed[0]
    err = T.TaskError([task], describe(exc))
    err.__cause__ = exc
    return err


def _stop(ex: ProcessPoolExecutor, pending: dict[Future, T.Task]) -> None:
    """Cancel what has not started; end the workers if any task is still running."""
    running = [f for f in pending if not f.cancel()]
    if any(not f.done() for f in running):
        for proc in list((getattr(ex, "_processes", None) or {}).values()):
            if proc.is_alive():
                proc.terminate()
    ex.shutdown(wait=True, cancel_futures=True)


__all__ = ["stream", "default_jobs", "describe", "failure", "PRELOAD"]
