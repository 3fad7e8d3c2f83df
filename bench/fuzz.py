"""The long fuzz campaign, on demand: every command on many generated inputs, in-process.

    python bench/fuzz.py --n 100000 --seed 1 --jobs 2
    python bench/fuzz.py --n 2000 --seed 7 --minutes 10 --no-write
    python bench/fuzz.py --seed 1 --start 40000 --minutes 30    # inputs 40000 on, of the same campaign
    python bench/fuzz.py --seed 18 --jobs 1 --log run.jsonl      # a line per input: what ran, what to replay
    python bench/fuzz.py --seed 18 --inputs @run.jsonl           # again, the inputs of run.jsonl that were not ok
    python bench/fuzz.py --seed 18 --inputs @run.jsonl --corpus /tmp/old   # ... of a run made on the tree /tmp/old

Input i of seed S is the same text for the same corpus (the specs, examples and
standard library the tree holds): a run continued on a tree whose corpus changed
makes other inputs from there on; --corpus replays a run made on another tree.

Input i of seed S is always the same text, for one corpus (tests/fuzz/generators.py): one in five
is a sentence of the grammar (hypothesis.extra.lark), the others are mutated specs
and examples and specs with random expressions in their fields. Each runs through
check, lint --format sarif, and, when it checks clean, solve (table, JSON), export
latex, graph, report (Markdown), a 3 x 3 sweep and a short simulate, in worker
processes (each under a 4 GB address-space limit), each command under a limit of CPU
seconds (with --clock wall, of wall-clock seconds; tests/fuzz/harness.py).

It prints the count of inputs per class (ok, crash, hang, slow), the slowest
inputs, then each distinct crash (exception type and innermost ctdsl frame) and
each slow command, and a gauge of the machine's speed before and after the run (the
CPU seconds of a fixed loop: on a shared machine they vary with the load, and
every command's CPU seconds with them). Slow is over --slow CPU seconds by default, and a command is
stopped (a hang) after --limit CPU seconds, or 6 times as many wall-clock seconds
when it waits without computing (--clock wall for wall-clock throughout): on a
shared machine, CPU time is what a command takes on a core of its own. Each new
crash is shrunk (lines deleted while the same crash reproduces) and written to
tests/fuzz/crashes/ as a regression case, marked xfail until it is fixed; --no-write
only reports. A worker stuck past the limit (a hang inside C code the alarm cannot
interrupt) is killed and restarted, and its input is counted as a hang. Ctrl-C or
`kill PID` stops a campaign early, with its report.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import queue
import re
import resource
import signal
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))  # the package tests/fuzz (this file's own name is fuzz.py too)

from fuzz.harness import WALL_BACKSTOP  # noqa: E402 - the standard library only, at import

GRAMMAR_EVERY = 5  # input i is a grammar sentence when i % 5 == 0
GRAMMAR_BATCH = 200
MEMORY = 4 << 30  # bytes of address space per worker
SLOWEST = 10  # the slowest inputs the report lists
REFREEZE = 1000  # inputs between two gc.freeze of a worker (Harness.warm_up)


def _input(seed: int, i: int, batches: dict):
    from fuzz.generators import FuzzInput, generate, sample_grammar

    if i % GRAMMAR_EVERY:
        return generate(seed, i)
    g = i // GRAMMAR_EVERY
    b = g // GRAMMAR_BATCH
    if b not in batches:
        batches.clear()
        batches[b] = sample_grammar(GRAMMAR_BATCH, seed * 1_000_003 + b)
    batch = batches[b]
    return FuzzInput("grammar", "grammar", batch[g % GRAMMAR_BATCH] if batch else "")


def worker(job: int, todo, opts: dict, q) -> None:
    """Run the inputs numbered in `todo` (a range or a list), reporting each on `q`."""
    try:
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))
    except (ValueError, OSError):
        pass
    import fuzz.generators
    from fuzz.generators import corpus
    from fuzz.harness import Harness

    if opts.get("corpus"):  # the specs, examples and standard library another tree had: its inputs, this code
        fuzz.generators.ROOT = Path(opts["corpus"]).resolve()
        corpus.cache_clear()
    h = Harness(slow=opts["slow"], limit=opts["limit"], clock=opts["clock"])
    h.warm_up(dict(corpus())["specs/llama70b_wan.ct"])  # imports and caches are not the input's time
    batches: dict = {}
    for n, i in enumerate(todo, 1):
        if time.time() > opts["deadline"]:
            break
        if n % REFREEZE == 0:
            h.warm_up("")  # what the caches gathered since, out of the collector's way too
        inp = _input(opts["seed"], i, batches)
        q.put(("start", job, i, inp.source, inp.origin, inp.text, inp.sets))
        r = h.run(inp.text, inp.sets)
        problems = [o.__dict__ for o in r.problems()]
        top = max(r.outcomes, key=lambda o: (o.cpu, o.seconds))
        q.put(("done", job, i, inp.source, r.kind, r.clean, problems, (top.cpu, top.seconds, top.command)))
    q.put(("exit", job))


class Campaign:
    def __init__(self, opts: dict) -> None:
        self.opts = opts
        self.kinds: Counter = Counter()
        self.by_source: dict[str, Counter] = defaultdict(Counter)
        self.clean = 0
        self.done = 0
        self.classes: dict[str, dict] = {}  # signature -> what we know of it
        self.current: dict[int, tuple] = {}  # job -> the input it is running, and since when
        self.procs: dict = {}  # job -> its worker process
        self.slowest: list[tuple] = []  # (CPU s, wall s, command, input, source) of the slowest inputs
        self.log = opts["log"].open("a", encoding="utf-8") if opts.get("log") else None  # a line per input

    def _log(self, i: int, source: str, kind: str, cpu: float, wall: float, command: str, problems: list[dict]) -> None:
        if self.log is not None:
            sigs = sorted({p["signature"] for p in problems if p["kind"] in ("crash", "hang")})
            self.log.write(json.dumps({"seed": self.opts["seed"], "i": i, "source": source, "kind": kind,
                                       "cpu": round(cpu, 3), "wall": round(wall, 3), "command": command,
                                       "signatures": sigs}) + "\n")
            self.log.flush()

    def record(self, source: str, origin: str, text: str, sets, problems: list[dict]) -> None:
        for p in problems:
            key = p["signature"] if p["kind"] in ("crash", "hang") else f"slow @ {p['command']}"
            c = self.classes.setdefault(key, {"kind": p["kind"], "count": 0, "commands": Counter(), "sources": Counter(),
                                              "message": p["message"], "where": p["where"], "max_s": 0.0, "max_cpu": 0.0,
                                              "examples": []})
            c["count"] += 1
            c["commands"][p["command"]] += 1
            c["sources"][source] += 1
            c["max_s"] = max(c["max_s"], p["seconds"])
            c["max_cpu"] = max(c["max_cpu"], p.get("cpu", 0.0))
            if len(c["examples"]) < 5:
                c["examples"].append({"text": text, "sets": list(sets), "origin": origin, "command": p["command"],
                                      "seconds": p["seconds"], "trace": p["trace"][-3000:]})

    def run(self) -> None:
        ctx = mp.get_context("spawn")
        q = ctx.Queue()
        jobs = self.opts["jobs"]
        numbers = self.opts["inputs"] or range(self.opts["start"], self.opts["n"])
        todo = {j: numbers[j::jobs] for j in range(jobs)}  # each job's inputs; after input i, todo[after(i):]
        procs = self.procs = {j: ctx.Process(target=worker, args=(j, todo[j], self.opts, q), daemon=True)
                              for j in range(jobs)}
        for p in procs.values():
            p.start()
        alive = set(procs)
        # past each command's own backstop (WALL_BACKSTOP times the limit, wall-clock) and then some: a
        # worker silent this long on one input is stuck where no signal reaches
        stuck_after = self.opts["limit"] * WALL_BACKSTOP * 2 + 60
        last_print = time.time()
        while alive:
            try:
                msg = q.get(timeout=5)
            except queue.Empty:
                msg = None
            if msg is not None:
                self._message(msg, alive)
            now = time.time()
            for job in list(alive):
                code = procs[job].exitcode
                if code not in (None, 0):  # died without a word: a signal, the memory limit
                    alive.discard(job)
                    if job in self.current:
                        i, source, origin, text, sets, since = self.current.pop(job)
                        problem = {"kind": "crash", "signature": f"WorkerDied({code}) @ ?", "command": "?",
                                   "message": f"worker exited with {code}", "where": "?", "seconds": now - since,
                                   "trace": ""}
                        self._count(source, "crash", False)
                        self._log(i, source, "crash", 0.0, now - since, "?", [problem])
                        self.record(source, origin, text, sets, [problem])
                        rest = todo[job][todo[job].index(i) + 1 :]
                        procs[job] = ctx.Process(target=worker, args=(job, rest, self.opts, q), daemon=True)
                        procs[job].start()
                        alive.add(job)
            for job, (i, source, origin, text, sets, since) in list(self.current.items()):
                if now - since > stuck_after and job in alive:
                    procs[job].kill()
                    procs[job].join()
                    problem = {"kind": "hang", "signature": "Timeout @ (killed: the alarm could not interrupt it)",
                               "command": "?", "message": f"worker killed after {now - since:.0f} s",
                               "where": "?", "seconds": now - since, "trace": ""}
                    self._count(source, "hang", False)
                    self._log(i, source, "hang", 0.0, now - since, "?", [problem])
                    self.record(source, origin, text, sets, [problem])
                    del self.current[job]
                    rest = todo[job][todo[job].index(i) + 1 :]
                    procs[job] = ctx.Process(target=worker, args=(job, rest, self.opts, q), daemon=True)
                    procs[job].start()
            if now - last_print > 60:
                last_print = now
                print(f"  {self.done} inputs, {dict(self.kinds)}, {len(self.classes)} classes", flush=True)

    def _message(self, msg, alive) -> None:
        if msg[0] == "start":
            _, job, i, source, origin, text, sets = msg
            self.current[job] = (i, source, origin, text, sets, time.time())
        elif msg[0] == "done":
            _, job, i, source, kind, clean, problems, (cpu, wall, command) = msg
            _, _, origin, text, sets, _ = self.current.pop(job)
            self._count(source, kind, clean)
            self._log(i, source, kind, cpu, wall, command, problems)
            self.slowest = sorted(self.slowest + [(cpu, wall, command, i, source)], reverse=True)[:SLOWEST]
            if problems:
                self.record(source, origin, text, sets, problems)
        elif msg[0] == "exit":
            alive.discard(msg[1])

    def _count(self, source: str, kind: str, clean: bool) -> None:
        self.done += 1
        self.kinds[kind] += 1
        self.by_source[source][kind] += 1
        self.clean += bool(clean)


def issue_class(signature: str, where: str, message: str) -> str:
    """A guess at the class of issue 18 a crash belongs to, for the xfail reason (review it)."""
    s = signature + " " + where + " " + message
    rules = [
        (r"Timeout", "3"), (r"RecursionError", "2"), (r"OverflowError|math range|inf \+ inf|nan", "1"),
        (r"MarkupError|rich", "6"), (r"plots|mathtext|Axis limits", "7"), (r"breakeven", "4"),
        (r"stragglers|NoConvergence", "9"), (r"loader|NUL|OSError", "5"), (r"to_sympy|NoneType|TypeError", "10"),
    ]
    for pattern, cls in rules:
        if re.search(pattern, s):
            return cls
    return "9"


def slug(signature: str) -> str:
    etype, _, where = signature.partition(" @ ")
    stem = where.replace("ctdsl/", "").replace(".py", "").replace("/", "_").replace(":", "_")
    return re.sub(r"[^a-z0-9_]+", "_", f"{etype}_{stem}".lower()).strip("_")[:80]


def write_crashes(campaign: Campaign, out: Path, budget: float) -> list[Path]:
    from fuzz.cases import cases, header
    from fuzz.harness import Harness, encode
    from fuzz.shrink import shrink

    known = {c.meta.get("fuzz") for c in cases(out)}
    h = Harness(slow=campaign.opts["slow"], limit=campaign.opts["limit"], clock=campaign.opts["clock"])
    written = []
    for sig, c in sorted(campaign.classes.items()):
        if c["kind"] != "crash" or sig in known:
            continue
        ex = min(c["examples"], key=lambda e: len(e["text"]))
        if ex["sets"]:
            continue  # a crash through --set only: reported, not a file (a case file holds no --set)
        text = shrink(h, ex["text"], sig, ex["command"], budget)
        commands = sorted(c["commands"])
        reason = f"issue 18 class {issue_class(sig, c['where'], c['message'])}: {sig.replace(' @ ', ' in ')}"
        path = out / f"{slug(sig)}.ct"
        n = 2
        while path.exists():
            path = out / f"{slug(sig)}_{n}.ct"
            n += 1
        path.write_bytes(encode(header(sig, commands, reason)) + encode(text))
        again = h.run(path.read_bytes(), only={ex["command"]})
        if not any(o.signature == sig for o in again.outcomes):
            print(f"  note: {path.name} did not reproduce once written (flaky?)")
        written.append(path)
    h.close()
    return written


def report(campaign: Campaign, seconds: float) -> None:
    k = campaign.kinds
    print(f"\n{campaign.done} inputs in {seconds:.0f} s ({campaign.done / max(seconds, 1e-9):.1f}/s), "
          f"{campaign.clean} checked clean")
    print("  " + ", ".join(f"{name} {k.get(name, 0)}" for name in ("ok", "crash", "hang", "slow")))
    for source, counts in sorted(campaign.by_source.items()):
        print(f"  {source:14s} " + ", ".join(f"{n} {v}" for n, v in sorted(counts.items())))
    if campaign.slowest:
        print(f"\nslowest inputs (the slowest command of each; seed {campaign.opts['seed']}):")
        for cpu, wall, command, i, source in campaign.slowest:
            print(f"  input {i:6d} {source:14s} {command:13s} {cpu:5.2f} s CPU, {wall:5.2f} s wall")
    for kind in ("crash", "hang", "slow"):
        rows = [(s, c) for s, c in campaign.classes.items() if c["kind"] == kind]
        if not rows:
            continue
        print(f"\n{kind}: {len(rows)} distinct")
        for sig, c in sorted(rows, key=lambda r: -r[1]["count"]):
            cmds = ", ".join(f"{n} {v}" for n, v in sorted(c["commands"].items()))
            print(f"  {c['count']:6d}  {sig}   [{cmds}] max {c['max_s']:.1f} s wall, {c['max_cpu']:.1f} s CPU")
            if kind != "slow":
                print(f"          at {c['where']}: {c['message'][:200]}")


def _inputs(spec: str | None, seed: int) -> list[int] | None:
    """The input numbers --inputs names, in order: `1,5,9`, or `@run.jsonl` for a log's inputs that were not ok."""
    if spec is None:
        return None
    if not spec.startswith("@"):
        return [int(x) for x in spec.split(",") if x.strip()]
    lines = [json.loads(line) for line in Path(spec[1:]).read_text(encoding="utf-8").splitlines() if line.strip()]
    return sorted({r["i"] for r in lines if r["kind"] != "ok" and r["seed"] == seed})


def gauge() -> float:
    """CPU seconds of a fixed pure-Python loop (10^7 additions): how fast a core is now, for reading the
    CPU seconds of a run on a shared machine (a busy sibling thread or host makes every one longer)."""
    start, total = time.process_time(), 0
    for k in range(10_000_000):
        total += k
    return time.process_time() - start


def _stop(signum, frame) -> None:
    raise KeyboardInterrupt


def main() -> int:
    # Ctrl-C, and `kill PID` (SIGTERM), stop the campaign and report what ran (a background job would
    # otherwise start with SIGINT ignored)
    signal.signal(signal.SIGINT, _stop)
    signal.signal(signal.SIGTERM, _stop)
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=100_000, help="inputs (default 100000)")
    ap.add_argument("--start", type=int, default=0, help="the first input's number (a run continued: inputs START to N-1)")
    ap.add_argument("--inputs", default=None,
                    help="only these inputs: numbers separated by commas, or @FILE of a --log (its inputs not ok: "
                         "a replay of what was slow, hung or crashed)")
    ap.add_argument("--corpus", type=Path, default=None,
                    help="mutate the specs, examples and standard library of this tree instead (input i of a run made "
                         "on an older tree, run on this code; sentences of the grammar come from this code's grammar)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--minutes", type=float, default=None, help="stop starting inputs after this long")
    ap.add_argument("--slow", type=float, default=2.0, help="a command over this many seconds is slow")
    ap.add_argument("--clock", choices=["cpu", "wall"], default="cpu",
                    help="seconds of what, for --slow and --limit: CPU time of the worker (default: what a command "
                         "takes on a core of its own, on a shared machine too) or wall-clock")
    ap.add_argument("--limit", type=float, default=10.0, help="a command is stopped after this many seconds (of --clock)")
    ap.add_argument("--out", type=Path, default=ROOT / "tests" / "fuzz" / "crashes")
    ap.add_argument("--no-write", action="store_true", help="report only: write no reproducer")
    ap.add_argument("--shrink-budget", type=float, default=60.0, help="seconds of shrinking per crash")
    ap.add_argument("--json", type=Path, default=None, help="also write every class, with examples, to this file")
    ap.add_argument("--log", type=Path, default=None,
                    help="append a JSON line per input finished to this file (its number, class, slowest command and "
                         "CPU seconds): which inputs a long or interrupted run covered, and which to replay")
    args = ap.parse_args()
    deadline = time.time() + args.minutes * 60 if args.minutes else float("inf")
    opts = {"n": args.n, "seed": args.seed, "jobs": args.jobs, "slow": args.slow, "limit": args.limit,
            "deadline": deadline, "clock": args.clock, "start": args.start, "log": args.log,
            "inputs": _inputs(args.inputs, args.seed), "corpus": args.corpus}
    before = gauge()
    start = time.time()
    campaign = Campaign(opts)
    try:
        campaign.run()
    except KeyboardInterrupt:
        print("interrupted: reporting what ran")
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # the report and the reproducers are written whole
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        for p in campaign.procs.values():
            p.kill()
    report(campaign, time.time() - start)
    print(f"\nCPU gauge (10^7 additions in a Python loop): {before:.2f} s before the run, {gauge():.2f} s after")
    if args.json:
        args.json.write_text(json.dumps(campaign.classes, indent=1, default=dict, sort_keys=True), encoding="utf-8")
    if not args.no_write:
        for path in write_crashes(campaign, args.out, args.shrink_budget):
            print(f"wrote {path}")
    return 1 if campaign.kinds.get("crash") or campaign.kinds.get("hang") else 0


if __name__ == "__main__":
    sys.exit(main())
