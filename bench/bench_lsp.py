"""How long `ctdsl lsp` takes from a didChange to the diagnostics it publishes.

    python bench/bench_lsp.py              # the flagship, 5 changes to warm up, 40 timed
    python bench/bench_lsp.py --changes 100 --spec examples/12_diloco.ct

A real client (tests/lspkit.py, pygls's LanguageClient over the server's stdio)
opens the spec, then types into it: each change inserts or deletes one character
of the first comment, so that every change is a real edit and the spec stays
valid. The time of one change is from just before the client sends didChange to
the moment its publishDiagnostics arrives, so the figure includes the round trip
through the pipes and JSON-RPC, the re-parse and re-check of the document, and
the lint rules. It prints the median, the quartiles and the worst; then the CPU
time of the same re-analysis in-process (`ctdsl.lsp.analysis.analyse`), which
load from other processes on the machine does not inflate, and the server's own
CPU time per change (from /proc, so Linux only). The target for
the flagship, in a warm server, is a median under 50 ms. Run on demand; tests
never time anything.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from lspkit import Session  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--spec", default=str(ROOT / "specs" / "llama70b_wan.ct"))
    ap.add_argument("--changes", type=int, default=40)
    ap.add_argument("--warmup", type=int, default=5)
    args = ap.parse_args()
    path = Path(args.spec).resolve()
    s = Session()
    try:
        uri = s.open(path)
        s.diagnostics(uri)
        times = []
        pid = s.client._server.pid  # noqa: SLF001 - pygls keeps the server's process there
        for i in range(args.warmup + args.changes):
            if i == args.warmup:
                cpu0 = _cpu_ms(pid)
            t0 = time.perf_counter()
            if i % 2 == 0:
                s.edit(uri, 0, 1, 1, "x")  # `#x Llama...`
            else:
                s.edit(uri, 0, 1, 2, "")
            diags = s.diagnostics(uri)
            elapsed = s.received_at[-1] - t0
            if diags:
                raise SystemExit(f"unexpected diagnostics after change {i}: {[d.code for d in diags]}")
            if i >= args.warmup:
                times.append(elapsed * 1000)
        server_cpu = (_cpu_ms(pid) - cpu0) / args.changes
    finally:
        s.close()
    q = statistics.quantiles(times, n=4)
    print(f"{path.name}: {len(times)} changes, didChange -> publishDiagnostics (wall clock)")
    print(f"  median {statistics.median(times):.1f} ms   quartiles {q[0]:.1f} .. {q[2]:.1f} ms   worst {max(times):.1f} ms")
    print(f"  the server's CPU time per change (user + system, from /proc): {server_cpu:.1f} ms")
    cpu = _in_process(path, args.changes)
    print(f"the same re-analysis in this process (CPU time, which other load on the machine does not inflate):")
    print(f"  median {statistics.median(cpu):.1f} ms   worst {max(cpu):.1f} ms")


def _cpu_ms(pid: int) -> float:
    """CPU time of a process so far (user + system), from /proc/PID/stat (Linux)."""
    import os

    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) * 1000 / os.sysconf("SC_CLK_TCK")


def _in_process(path: Path, n: int) -> list[float]:
    from ctdsl.lsp.analysis import analyse

    text = path.read_text(encoding="utf-8")
    analyse(str(path), text)  # warm: the library's trees, the rules' tables
    out = []
    for i in range(n):
        edited = text[:1] + "x" + text[1:] if i % 2 == 0 else text
        t0 = time.process_time()
        analyse(str(path), edited)
        out.append((time.process_time() - t0) * 1000)
    return out


if __name__ == "__main__":
    main()
