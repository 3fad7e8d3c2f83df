"""The same tasks on a Dask distributed cluster: futures, streamed back as they finish.

`connect(address)` opens a `distributed.Client` once the address has answered
as a Dask scheduler within `CONNECT_TIMEOUT` (`Unreachable` otherwise, which
the CLI reports as CT801). `backend(client)` is a
runner backend (runner.simulate's `backend=`): each `Task` (tasks.py) is
submitted as a future of `tasks.execute`, at most two per worker thread at a
time, and read back with `distributed.as_completed` in completion order; the
runner assembles them in task order, so the result is the local run's, bit for
bit. As in pool.py: `admit()` is asked before each further submission; a
failed task (or a worker lost under it: Dask's `KilledWorker`) stops further
submissions, the running ones finish and are yielded, then `TaskError` names
it; closing the stream cancels the futures still on the cluster.

Why a probe before the Client: Dask's connect bounds the TCP connection by its
timeout but not the handshake after it (`distributed.comm.core.connect` awaits
the peer's handshake without one), so a port that accepts and never answers
held `Client(address, timeout="5s")`, and the command, for good (over 10
minutes). The probe does what the Client does first (connect, handshake) and
asks the peer who it is (the scheduler's `identity`), all under one
`asyncio.wait_for`; whatever goes wrong there, a silence, a service that is not
Dask (an HTTP server), a ws:// address where no websocket answers, a tls://
address without Dask's TLS settings, is `Unreachable` with its reason, never an
internal error.

Only this module imports dask; it is an optional extra (`pip install ctdsl[dask]`).
"""

from __future__ import annotations

import asyncio
import socket
from typing import Iterator

from distributed import Client, as_completed
from distributed.comm import connect as comm_connect
from distributed.comm import get_address_host_port, parse_address
from distributed.security import Security

from ctdsl.simulate import pool
from ctdsl.simulate import tasks as T
from ctdsl.simulate.engine import RunResult

CONNECT_TIMEOUT = "5s"  # a scheduler that does not answer in this time is reported, not waited for
_SOCKET_SCHEMES = ("tcp", "tls", "ws", "wss")  # addresses of a host and a port, tried with a plain socket first


class Unreachable(Exception):
    """The scheduler at `address` did not answer."""

    def __init__(self, address: str, reason: str):
        self.address = address
        self.reason = reason
        super().__init__(f"no Dask scheduler answered at {address}: {reason}")


async def _identity(address: str, seconds: float, args: dict) -> object:
    comm = await comm_connect(address, timeout=seconds, **args)
    try:
        await comm.write({"op": "identity", "reply": True})
        return await comm.read()
    finally:
        comm.abort()


def probe(address: str, seconds: float) -> None:
    """Raise Unreachable unless a Dask scheduler at `address` says who it is within `seconds`.

    The connection, the handshake and the answer are one bounded wait; the
    connection arguments are the ones a Client takes from Dask's configuration
    (its TLS settings, for a tls:// address).
    """
    scheme, _ = parse_address(address)
    args = Security().get_connection_args("client")
    if scheme in ("tls", "wss") and args.get("ssl_context") is None:
        raise Unreachable(address, f"a {scheme}:// scheduler needs Dask's TLS settings (distributed.comm.tls in its configuration), and none are set")
    try:
        info = asyncio.run(asyncio.wait_for(_identity(address, seconds, args), seconds))
    except (TimeoutError, asyncio.TimeoutError):
        raise Unreachable(address, "it accepted the connection and never answered") from None
    except Exception as exc:  # noqa: BLE001 (any failure of a peer that is not a scheduler is the same answer)
        raise Unreachable(address, f"it does not answer as a Dask scheduler ({pool.describe(exc)})") from None
    kind = info.get("type") if isinstance(info, dict) else None
    if kind != "Scheduler":
        raise Unreachable(address, f"it answers as {kind or 'something else'}, not as a Dask scheduler")


def connect(address: str, timeout: str = CONNECT_TIMEOUT) -> Client:
    """A client of the scheduler at `address`. The address is parsed, a port tried with a plain
    socket (refused or unknown at once), and the peer probed (`probe`) before a Client is made:
    a Client that fails half-built waits seconds more to close, and complains at exit."""
    seconds = float(timeout.rstrip("s"))
    try:
        scheme, _ = parse_address(address)
        if scheme in _SOCKET_SCHEMES:
            host, port = get_address_host_port(address)
            socket.create_connection((host, port), timeout=seconds).close()
    except (OSError, ValueError, TypeError) as exc:  # not an address, refused, no such host, or no answer
        raise Unreachable(address, pool.describe(exc)) from None
    probe(address, seconds)
    try:
        return Client(address, timeout=timeout, set_as_default=False)
    except Exception as exc:  # noqa: BLE001 (it answered the probe: a scheduler gone since, or refusing this client)
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
