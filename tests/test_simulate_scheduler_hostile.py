"""`simulate --scheduler` at something that is not a Dask scheduler: CT801, exit 2, in bounded time.

Issue 25, item 9. A port that accepts and never answers held the command for
over 10 minutes (Dask bounds the TCP connection, not the handshake after it); an
HTTP server, a ws:// or a tls:// address ended in "internal error" (exit 3).
Each case here is a real server on the loopback, run in a thread of this
process, and the command a real process: exit 2, CT801 naming the address and
why, nothing on stdout, no traceback. (A real scheduler, a LocalCluster, is
tests/test_simulate_dask.py's.)
"""

from __future__ import annotations

import http.server
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest

pytest.importorskip("distributed")

ROOT = Path(__file__).resolve().parents[1]
CONTENTION = str(ROOT / "examples" / "15_contention.ct")
TIMEOUT = 240  # s: a guard that turns a hang into a failure; each case ends within the 5 s connect bound


class _Server:
    """A TCP server on the loopback that accepts connections and does `serve(conn)` with each."""

    def __init__(self, serve):
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.conns: list[socket.socket] = []
        self.serve = serve
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.conns.append(conn)  # held open: a silent peer
            self.serve(conn)

    def close(self) -> None:
        self.sock.close()
        for c in self.conns:
            c.close()


@pytest.fixture(scope="module")
def silent():
    s = _Server(lambda conn: None)  # accepts, reads nothing, answers nothing
    yield s.port
    s.close()


@pytest.fixture(scope="module")
def chatty():
    s = _Server(lambda conn: conn.sendall(b"SSH-2.0-OpenSSH_9.6\r\n" + bytes(range(256)) * 4))  # garbage at once
    yield s.port
    s.close()


@pytest.fixture(scope="module")
def web():
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), http.server.SimpleHTTPRequestHandler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield httpd.server_address[1]
    httpd.shutdown()
    httpd.server_close()


def simulate_on(address: str) -> subprocess.CompletedProcess:
    code = "from ctdsl.cli import main; main()"
    return subprocess.run(
        [sys.executable, "-c", code, "simulate", CONTENTION, "--seeds", "2", "--steps", "2", "--scheduler", address],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=TIMEOUT,
    )


CASES = [
    ("tcp://127.0.0.1:{silent}", "accepted the connection and never answered"),
    ("ws://127.0.0.1:{silent}", "accepted the connection and never answered"),
    ("tcp://127.0.0.1:{web}", "accepted the connection and never answered"),  # HTTP waits for a request
    ("ws://127.0.0.1:{web}", "does not answer as a Dask scheduler (WebSocketError: Non-websocket response)"),
    ("tcp://127.0.0.1:{chatty}", "does not answer as a Dask scheduler"),
    ("tls://127.0.0.1:{silent}", "needs Dask's TLS settings"),
    ("wss://127.0.0.1:{web}", "needs Dask's TLS settings"),
    ("ws://127.0.0.1:9", "Connection refused"),
    ("inproc://nothing", "does not answer as a Dask scheduler"),
]


@pytest.mark.parametrize("template, why", CASES, ids=[c[0].split(":")[0] + "-" + c[0].rsplit(":", 1)[1].strip("{}") for c in CASES])
def test_no_scheduler_there_is_ct801_exit_2(silent, chatty, web, template, why):
    address = template.format(silent=silent, chatty=chatty, web=web)
    r = simulate_on(address)
    assert r.returncode == 2, r.stderr
    assert f"CT801 no Dask scheduler answered at {address}" in r.stderr and why in r.stderr, r.stderr
    assert "Traceback" not in r.stderr and "internal error" not in r.stderr and r.stdout == ""
