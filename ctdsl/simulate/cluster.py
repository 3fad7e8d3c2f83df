"""The same tasks on a Dask distributed cluster: futures, streamed back as they finish.

`connect(address)` opens a `distributed.Client` with a short connect timeout
(`Unreachable` when the scheduler does not answer). `backend(client)` is a
runner backend (runner.simulate's `backend=`): each `Task` (tasks.py) is
submitted as a future of `tasks.execute`, at most two per worker thread at a
time, and read back with `distributed.as_completed` in completion order; the
runner assembles them in task order, so the result is the local run's, bit for
bit. As in pool.py: `admit()` is asked before each further submission; a
failed task (or a worker lost under it: Dask's `KilledWorker`) stops further
submissions, the running ones finish and are yielded, then `TaskError` names
it; closing the stream cancels the futures still on the cluster.

Only this module imports dask; it is an optional extra (`pip install ctdsl[dask]`).
"""

from __future__ import annotations

import socket
from typing import Iterator

from distributed import Client, as_completed
from distributed.comm import get_address_host_port, parse_address

from ctdsl.simulate import pool
from ctdsl.simulate import tasks as T
from ctdsl.simulate.engine import RunResult

CONNECT_TIMEOUT = "5s"  # a scheduler that does not answer in this time is reported, not waited for


class Unreachable(Exception):
    """The scheduler at `address` did not answer."""

    def __init__(self, address: str, reason: str):
        self.address = address
        self.reason = reason
        super().__init__(f"no Dask scheduler answered at {address}: {reason}")


def connect(address: str, timeout: str = CONNECT_TIMEOUT) -> Client:
    """A client of the scheduler at `address`. The address is parsed, and a TCP one's port tried
    with a plain socket, before a Client is made: a Client that fails half-built waits seconds
    more to close, and complains at exit."""
    seconds = float(timeout.rstrip("s"))
    try:
        scheme, _ = parse_address(address)
        if scheme in ("tcp", "tls"):
            host, port = get_address_host_port(address)
            socket.create_connection((host, port), timeout=seconds).close()
    except (OSError, ValueError) as exc:  # not an address, refused, no such host, or no answer
        raise Unreachable(address, pool.describe(exc)) from None
    try:
        return Client(address, timeout=timeout, set_as_default=False)
    except (OSError, TimeoutError, ValueError) as exc:  # something answers there, but not a scheduler
        raise Unreachable(address, pool.describe(exc)) from None


def threads(client: Client) -> int:
    return max(1, sum(client.nthreads().values()))


def backend(client: Client):
    """The runner backend that submits to `client`."""

    def run(tasks: list[T.Task], fn: pool.Fn | None, admit: pool.Admit) -> Iterator[tuple[T.Task, RunResult]]:
        return stream(client, tasks, fn or T.execute, admit)

    return run


def stream(client: Client, tasks: list[T.Task], fn: pool.Fn, admit: pool.Admit) -> Iterator[tuple[T.Task, RunResult]]:
    cap = 2 * threads(client)
    pending: dict = {}  # future -> task
    queue = as_completed(loop=client.loop)  # this client's, not a default one
    nxt, open_ = 0, True

    def fill() -> None:
        nonlocal nxt, open_
        while open_ and nxt < len(tasks) and len(pending) < cap:
            if nxt and not admit():
                open_ = False
                return
            fut = client.submit(fn, tasks[nxt], pure=False, retries=0)
            pending[fut] = tasks[nxt]
            queue.add(fut)
            nxt += 1

    failed: list = []
    try:
        fill()
        for fut in queue:
            task = pending.pop(fut)
            if fut.status != "finished":
                failed.append((task, fut.exception()))
                fut.release()  # the error keeps the exception, not the task on the cluster
                open_ = False  # no further task starts; the running ones finish and are kept
                continue
            result = fut.result()
            fut.release()
            yield task, result
            fill()
        if failed:
            task, exc = min(failed, key=lambda f: f[0].index)
            err = T.TaskError([task], _reason(exc))
            err.__cause__ = exc
            raise err
    finally:
        if pending:
            client.cancel(list(pending))


def _reason(exc: BaseException) -> str:
    if type(exc).__name__ == "KilledWorker":
        return "the Dask worker running it died (killed, out of memory, or a crash in native code)"
    return pool.describe(exc)


__all__ = ["connect", "backend", "stream", "threads", "Unreachable", "CONNECT_TIMEOUT"]
