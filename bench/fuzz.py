"""The long fuzz campaign, on demand: every command on many generated inputs, in-process, held to issue 25's bar.

    python bench/fuzz.py --n 100000 --seed 25 --jobs 2 --bar      # issue 25's campaign: exit 1 unless the bar is met
    python bench/fuzz.py --n 2000 --seed 7 --minutes 10 --no-write
    python bench/fuzz.py --seed 1 --start 40000 --minutes 30    # inputs 40000 on, of the same campaign
    python bench/fuzz.py --seed 25 --jobs 1 --log run.jsonl      # a line per input: what ran, what to replay
    python bench/fuzz.py --seed 25 --inputs @run.jsonl           # again, the inputs of run.jsonl that were not ok
    python bench/fuzz.py --seed 18 --inputs @run.jsonl --corpus /tmp/old   # ... of a run made on the tree /tmp/old
    python bench/fuzz.py --seed 25 --inputs 24,67 --shrink-leaks --no-write  # the smallest text that still leaks

Input i of seed S is always the same input for one corpus (the specs, examples and
standard library the tree holds; tests/fuzz/generators.py): a run continued on a tree
whose corpus changed makes other inputs from there on, and --corpus replays a run
made on another tree. One input in five is a sentence of the grammar
(hypothesis.extra.lark); the others are mutated specs and examples, specs with
random expressions in their fields, and, from seed 25 on, for half of them, real
specs with payloads planted where spec text reaches an output (Markdown, HTML,
LaTeX, terminal, CI-log, CSV and JSON payloads, line ends some readers do not count,
cost bombs; in the opening comment, comments, labels, display names, the file's own
name and an imported file's, names, values and --set: tests/fuzz/payloads.py). Seeds
below 25 give the inputs they always gave.

Each input runs through check, lint (SARIF, text, github), and, when it checks clean,
solve (table, JSON, Markdown, CSV), export latex, graph, report (Markdown and HTML),
explore, a 3 x 3 sweep, a short simulate and lint --fix on a copy
(tests/fuzz/commands.py), in worker processes (each under a 4 GB address-space
limit), each command under a limit of CPU seconds (with --clock wall, of wall-clock
seconds; tests/fuzz/harness.py), in the input's folder and naming it as given, as a
CI job would. Each command's outputs are read by an oracle per sink
(tests/fuzz/sinks.py): spec text arriving active in one is a leak, a finding of its
own. Each command's peak resident set is measured (Linux's high-water mark, reset
before the command: the worker's own memory, its imports and caches, included), and
a command over --max-memory is a memory finding; a worker whose resident set between
inputs passes 70% of --max-memory is replaced by a fresh one, so that one input's
measure is not another's leftovers.

The report gives the count of inputs per class (ok, crash, hang, memory, leak,
slow) and per source, the slowest inputs, each distinct crash (exception type and
innermost ctdsl frame), hang, memory finding, leak (its sink and rule, the payload
as a diff against the spec it was planted in) and slow command, the peak memory of
each command and the input that reached it, and then issue 25's bar stated
directly: uncaught exceptions, hangs, inputs over 10 s of wall-clock time, inputs
over 2 CPU-seconds, leaks per sink, peak memory against --max-memory (500 MB), the
rate in inputs a second, and a gauge of the machine's speed before and after the
run (the CPU seconds of a fixed loop: on a shared machine they vary with the load,
and every command's CPU seconds with them). An input is over a bound when one of its
commands is: the bar is about what a command a user or a CI job runs can cost. A
command's wall-clock time on a shared machine includes waiting for a core: the CPU
seconds are what it takes on a core of its own, the wall-clock count says what
this run saw (a command over 10 s of wall-clock time and well under 10 CPU-seconds
is the machine's load; replay it with --inputs on a quiet one). --bar exits 1 when
the bar is not met.

Slow is over --slow CPU seconds (2), and a command is stopped (a hang) after --limit
CPU seconds (10), or 6 times as many wall-clock seconds when it waits without
computing (--clock wall for wall-clock throughout). Each new crash is shrunk (lines
deleted while the same crash reproduces) and written to tests/fuzz/crashes/ as a
regression case, marked xfail until it is fixed; --no-write only reports.
--shrink-leaks shrinks one example of each leak the same way and prints it. A
worker stuck past the limit (a hang inside C code the alarm cannot interrupt) is
killed and restarted, and its input is counted as a hang. Ctrl-C or `kill PID`
stops a campaign early, with its report.
"""

from __future__ import annotations

import argparse
import difflib
import json
import multiprocessing as mp
import queue
import re
import resource
import shutil
import signal
import subprocess
import sys
import time
import zlib
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))  # the package tests/fuzz (this file's own name is fuzz.py too)

from fuzz.harness import WALL_BACKSTOP  # noqa: E402 - the standard library only, at import

GRAMMAR_EVERY = 5  # input i is a grammar sentence when i % 5 == 0
GRAMMAR_BATCH = 200
MEMORY = 4 << 30  # bytes of address space per worker
MB = 1 << 20
SLOWEST = 10  # the slowest inputs the report lists
REFREEZE = 1000  # inputs between two gc.freeze of a worker (Harness.warm_up)
RECYCLE = 0.7  # a worker whose resident set between inputs passes this share of --max-memory is replaced
WALL_BAR = 10.0  # issue 25: no input over 10 s
SINKS = ("markdown", "html", "latex", "terminal", "cilog", "csv", "json", "fix", "oracle")


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


def _summary(r, slow: float) -> dict:
    """What the campaign keeps of one input's result (sent from the worker)."""
    from fuzz.harness import leak_signature

    top = max(r.outcomes, key=lambda o: (o.cpu, o.seconds))
    longest = max(r.outcomes, key=lambda o: o.seconds)
    problems = []
    for o in r.problems():
        d = {k: v for k, v in o.__dict__.items() if k != "leaks"}
        d["leaks"] = [{"sink": x.sink, "rule": x.rule, "excerpt": x.excerpt, "signature": leak_signature(x, o.command)}
                      for x in o.leaks]
        problems.append(d)
    return {
        "kind": r.kind, "clean": r.clean, "problems": problems,
        "top": (top.cpu, top.seconds, top.command), "longest": (longest.seconds, longest.cpu, longest.command),
        "over_wall": any(o.seconds > WALL_BAR for o in r.outcomes),
        "over_cpu": any(o.cpu > slow for o in r.outcomes),
        "memory": {o.command: (o.memory, o.grew) for o in r.outcomes},
        "sinks": sorted({x.sink for o in r.outcomes for x in o.leaks}),
    }


def _compile(r, h, workdir: Path) -> None:
    """Compile the input's export latex output with pdflatex; what it finds goes on export-latex's outcome."""
    from fuzz import sinks

    o = next(o for o in r.outcomes if o.command == "export-latex")
    if o.kind == "ok" and o.exit_code == 0:
        o.leaks += sinks.latex_compiles(h.kept["export-latex"].decode("utf-8", "replace"), workdir)


def worker(job: int, todo, opts: dict, q) -> None:
    """Run the inputs numbered in `todo` (a range or a list), reporting each on `q`."""
    try:
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))
    except (ValueError, OSError):
        pass
    import fuzz.generators
    from fuzz.generators import corpus
    from fuzz.harness import Harness, Peak

    if opts.get("corpus"):  # the specs, examples and standard library another tree had: its inputs, this code
        fuzz.generators.ROOT = Path(opts["corpus"]).resolve()
        corpus.cache_clear()
    h = Harness(slow=opts["slow"], limit=opts["limit"], clock=opts["clock"], max_memory=opts["max_memory"])
    h.warm_up(dict(corpus())["specs/llama70b_wan.ct"])  # imports and caches are not the input's time
    q.put(("ready", job, Peak._status("VmRSS")))
    batches: dict = {}
    for n, i in enumerate(todo, 1):
        if time.time() > opts["deadline"]:
            break
        if n % REFREEZE == 0:
            h.warm_up("")  # what the caches gathered since, out of the collector's way too
        inp = _input(opts["seed"], i, batches)
        q.put(("start", job, i, {"source": inp.source, "origin": inp.origin, "text": inp.text, "sets": list(inp.sets),
                                 "filename": getattr(inp, "filename", "fuzz.ct"), "files": list(getattr(inp, "files", ())),
                                 "places": list(getattr(inp, "places", ()))}))
        r = h.run(inp.text, inp.sets, filename=getattr(inp, "filename", "fuzz.ct"), files=getattr(inp, "files", ()))
        every = opts["pdflatex_every"]
        if every and "export-latex" in h.kept and zlib.crc32(f"{opts['seed']}:{i}".encode()) % every == 0:
            _compile(r, h, Path(h.dir) / "tex")
        q.put(("done", job, i, _summary(r, opts["slow"])))
        if opts["max_memory"] and Peak._status("VmRSS") > RECYCLE * opts["max_memory"]:
            q.put(("recycle", job, i))  # a fresh worker for the rest: this one's memory would count against theirs
            return
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
        self.longest: list[tuple] = []  # (wall s, CPU s, command, input, source) of the longest by the wall clock
        self.bar: Counter = Counter()  # inputs: crash, hang, over_wall, over_cpu, memory, leak
        self.leaks: Counter = Counter()  # inputs with a leak, per sink
        self.peaks: dict[str, tuple] = {}  # command -> (peak bytes, input, source): its highest peak resident set
        self.grows: dict[str, tuple] = {}  # command -> (bytes, input, source): the most it added to the worker's
        self.baselines: list[int] = []  # each worker's resident set after its warm-up
        self.recycled = 0
        self.log = opts["log"].open("a", encoding="utf-8") if opts.get("log") else None  # a line per input

    def _log(self, i: int, source: str, kind: str, cpu: float, wall: float, command: str, problems: list[dict]) -> None:
        if self.log is not None:
            sigs = sorted({p["signature"] for p in problems if p["kind"] in ("crash", "hang", "memory")}
                          | {x["signature"] for p in problems for x in p.get("leaks", [])})
            self.log.write(json.dumps({"seed": self.opts["seed"], "i": i, "source": source, "kind": kind,
                                       "cpu": round(cpu, 3), "wall": round(wall, 3), "command": command,
                                       "signatures": sigs}) + "\n")
            self.log.flush()

    def _class(self, key: str, kind: str, p: dict, inp: dict, i: int, message: str, where: str, excerpt: str = "") -> None:
        c = self.classes.setdefault(key, {"kind": kind, "count": 0, "commands": Counter(), "sources": Counter(),
                                          "message": message, "where": where, "max_s": 0.0, "max_cpu": 0.0,
                                          "examples": []})
        c["count"] += 1
        c["commands"][p["command"]] += 1
        c["sources"][inp["source"]] += 1
        c["max_s"] = max(c["max_s"], p["seconds"])
        c["max_cpu"] = max(c["max_cpu"], p.get("cpu", 0.0))
        if len(c["examples"]) < 5:
            c["examples"].append({**inp, "i": i, "command": p["command"], "seconds": p["seconds"],
                                  "trace": p.get("trace", "")[-3000:], "excerpt": excerpt})

    def record(self, inp: dict, i: int, problems: list[dict]) -> None:
        for p in problems:
            if p["kind"] != "ok":
                key = p["signature"] if p["kind"] in ("crash", "hang", "memory") else f"slow @ {p['command']}"
                self._class(key, p["kind"], p, inp, i, p["message"], p["where"])
            for x in p.get("leaks", []):
                self._class(x["signature"], "leak", p, inp, i, f"{x['sink']}: {x['rule']}", x["sink"], x["excerpt"])

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

        def restart(job: int, after: int) -> None:
            rest = todo[job][todo[job].index(after) + 1 :]
            procs[job] = ctx.Process(target=worker, args=(job, rest, self.opts, q), daemon=True)
            procs[job].start()
            alive.add(job)

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
                if msg[0] == "recycle":
                    procs[msg[1]].join()
                    self.recycled += 1
                    restart(msg[1], msg[2])
                else:
                    self._message(msg, alive)
            now = time.time()
            for job in list(alive):
                code = procs[job].exitcode
                if code not in (None, 0):  # died without a word: a signal, the memory limit
                    alive.discard(job)
                    if job in self.current:
                        i, inp, since = self.current.pop(job)
                        problem = {"kind": "crash", "signature": f"WorkerDied({code}) @ ?", "command": "?",
                                   "message": f"worker exited with {code}", "where": "?", "seconds": now - since,
                                   "trace": ""}
                        self._finish(i, inp, {"kind": "crash", "clean": False, "problems": [problem],
                                              "top": (0.0, now - since, "?"), "longest": (now - since, 0.0, "?"),
                                              "over_wall": now - since > WALL_BAR, "over_cpu": False, "memory": {},
                                              "sinks": []})
                        restart(job, i)
            for job, (i, inp, since) in list(self.current.items()):
                if now - since > stuck_after and job in alive:
                    procs[job].kill()
                    procs[job].join()
                    problem = {"kind": "hang", "signature": "Timeout @ (killed: the alarm could not interrupt it)",
                               "command": "?", "message": f"worker killed after {now - since:.0f} s",
                               "where": "?", "seconds": now - since, "trace": ""}
                    del self.current[job]
                    self._finish(i, inp, {"kind": "hang", "clean": False, "problems": [problem],
                                          "top": (0.0, now - since, "?"), "longest": (now - since, 0.0, "?"),
                                          "over_wall": True, "over_cpu": False, "memory": {}, "sinks": []})
                    restart(job, i)
            if now - last_print > 60:
                last_print = now
                print(f"  {self.done} inputs, {dict(self.kinds)}, {len(self.classes)} classes", flush=True)

    def _message(self, msg, alive) -> None:
        if msg[0] == "ready":
            self.baselines.append(msg[2])
        elif msg[0] == "start":
            _, job, i, inp = msg
            self.current[job] = (i, inp, time.time())
        elif msg[0] == "done":
            _, job, i, summary = msg
            _, inp, _ = self.current.pop(job)
            self._finish(i, inp, summary)
        elif msg[0] == "exit":
            alive.discard(msg[1])

    def _finish(self, i: int, inp: dict, s: dict) -> None:
        source = inp["source"]
        self.done += 1
        self.kinds[s["kind"]] += 1
        self.by_source[source][s["kind"]] += 1
        self.clean += bool(s["clean"])
        kinds = {p["kind"] for p in s["problems"]}
        for k in ("crash", "hang", "memory"):
            self.bar[k] += k in kinds
        self.bar["over_wall"] += bool(s["over_wall"])
        self.bar["over_cpu"] += bool(s["over_cpu"])
        self.bar["leak"] += bool(s["sinks"])
        for sink in s["sinks"]:
            self.leaks[sink] += 1
        for command, (peak, grew) in s["memory"].items():
            if peak > self.peaks.get(command, (0,))[0]:
                self.peaks[command] = (peak, i, source)
            if grew > self.grows.get(command, (-1,))[0]:
                self.grows[command] = (grew, i, source)
        cpu, wall, command = s["top"]
        self._log(i, source, s["kind"], cpu, wall, command, s["problems"])
        self.slowest = sorted(self.slowest + [(cpu, wall, command, i, source)], reverse=True)[:SLOWEST]
        wall, cpu, command = s["longest"]
        self.longest = sorted(self.longest + [(wall, cpu, command, i, source)], reverse=True)[:SLOWEST]
        if s["problems"]:
            self.record(inp, i, s["problems"])


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


def _harness(opts: dict):
    from fuzz.harness import Harness

    return Harness(slow=opts["slow"], limit=opts["limit"], clock=opts["clock"], max_memory=opts["max_memory"])


def write_crashes(campaign: Campaign, out: Path, budget: float) -> list[Path]:
    from fuzz.cases import cases, header
    from fuzz.harness import encode
    from fuzz.shrink import shrink

    known = {c.meta.get("fuzz") for c in cases(out)}
    h = _harness(campaign.opts)
    written = []
    for sig, c in sorted(campaign.classes.items()):
        if c["kind"] != "crash" or sig in known:
            continue
        ex = min(c["examples"], key=lambda e: len(e["text"]))
        if ex["sets"] or ex.get("files"):
            continue  # a crash through --set or an imported file only: reported, not a file (a case holds neither)
        filename = ex.get("filename", "fuzz.ct")
        text = shrink(h, ex["text"], sig, ex["command"], budget, filename=filename)
        commands = sorted(c["commands"])
        reason = f"issue 18 class {issue_class(sig, c['where'], c['message'])}: {sig.replace(' @ ', ' in ')}"
        path = out / f"{slug(sig)}.ct"
        n = 2
        while path.exists():
            path = out / f"{slug(sig)}_{n}.ct"
            n += 1
        path.write_bytes(encode(header(sig, commands, reason, filename)) + encode(text))
        again = h.run(path.read_bytes(), only={ex["command"]}, filename=filename)
        if not any(sig in o.signatures() for o in again.outcomes):
            print(f"  note: {path.name} did not reproduce once written (flaky?)")
        written.append(path)
    h.close()
    return written


def shrink_leaks(campaign: Campaign, budget: float) -> None:
    """One example of each leak, shrunk while the same leak reproduces (kept in the class for the report)."""
    from fuzz.shrink import shrink

    h = _harness(campaign.opts)
    for sig, c in sorted(campaign.classes.items()):
        if c["kind"] != "leak":
            continue
        ex = min(c["examples"], key=lambda e: len(e["text"]))
        c["shrunk"] = shrink(h, ex["text"], sig, ex["command"], budget, filename=ex.get("filename", "fuzz.ct"),
                             files=tuple(tuple(f) for f in ex.get("files", ())), sets=tuple(ex["sets"]))
        c["shrunk_from"] = ex["i"]
    h.close()


def _origin_text(origin: str) -> str | None:
    from fuzz.generators import corpus

    return dict(corpus()).get(origin)


def planted(ex: dict, limit: int = 1200) -> str:
    """What an example changed in the spec it came from: a diff (or the text, for one that did not come from one)."""
    base = _origin_text(ex["origin"])
    if base is None:
        return repr(ex["text"][:limit])
    diff = difflib.unified_diff(base.splitlines(True), ex["text"].splitlines(True), ex["origin"], "input", n=0)
    out = "".join(line if line.endswith("\n") else line + "\n" for line in diff)
    return "\n".join(repr(line)[1:-1] for line in out.splitlines())[:limit]


def _mb(n: int) -> str:
    return f"{n / MB:.0f} MB"


def report(campaign: Campaign, seconds: float) -> None:
    k = campaign.kinds
    print(f"\n{campaign.done} inputs in {seconds:.0f} s ({campaign.done / max(seconds, 1e-9):.2f}/s), "
          f"{campaign.clean} checked clean")
    print("  " + ", ".join(f"{name} {k.get(name, 0)}" for name in ("ok", "crash", "hang", "memory", "leak", "slow")))
    for source, counts in sorted(campaign.by_source.items()):
        print(f"  {source:14s} " + ", ".join(f"{n} {v}" for n, v in sorted(counts.items())))
    seed = campaign.opts["seed"]
    if campaign.slowest:
        print(f"\nslowest inputs by CPU (the slowest command of each; seed {seed}):")
        for cpu, wall, command, i, source in campaign.slowest:
            print(f"  input {i:6d} {source:14s} {command:14s} {cpu:5.2f} s CPU, {wall:5.2f} s wall")
        print(f"longest inputs by the wall clock (seed {seed}):")
        for wall, cpu, command, i, source in campaign.longest:
            print(f"  input {i:6d} {source:14s} {command:14s} {wall:5.2f} s wall, {cpu:5.2f} s CPU")
    for kind in ("crash", "hang", "memory", "leak", "slow"):
        rows = [(s, c) for s, c in campaign.classes.items() if c["kind"] == kind]
        if not rows:
            continue
        print(f"\n{kind}: {len(rows)} distinct")
        for sig, c in sorted(rows, key=lambda r: -r[1]["count"]):
            cmds = ", ".join(f"{n} {v}" for n, v in sorted(c["commands"].items()))
            print(f"  {c['count']:6d}  {sig}   [{cmds}] max {c['max_s']:.1f} s wall, {c['max_cpu']:.1f} s CPU")
            if kind == "slow":
                continue
            ex = min(c["examples"], key=lambda e: len(e["text"]))
            print(f"          at {c['where']}: {c['message'][:200]}")
            print(f"          e.g. input {ex['i']} ({ex['source']} of {ex['origin']}, file {ex.get('filename', 'fuzz.ct')!r}"
                  + (f", imports {[f[0] for f in ex['files']]!r}" if ex.get("files") else "")
                  + (f", --set {ex['sets']!r}" if ex["sets"] else "") + ")")
            if kind == "leak":
                print(f"          output: {ex['excerpt'][:200]}")
                if ex["source"] == "payload":
                    print("          planted:\n" + "\n".join("            " + ln for ln in planted(ex).splitlines()))
                if "shrunk" in c:
                    print(f"          shrunk (input {c['shrunk_from']}): {c['shrunk'][:600]!r}")
    if campaign.peaks:
        print("\nmemory of each command: its highest peak resident set (the worker's own included) and the input, "
              "and the most it added to what the worker held when it started, and the input:")
        for command, (peak, i, source) in sorted(campaign.peaks.items(), key=lambda r: -r[1][0]):
            grew, gi, gsource = campaign.grows[command]
            print(f"  {command:14s} {_mb(peak):>8s}  input {i:6d} ({source:13s})   +{_mb(grew):>7s}  input {gi} ({gsource})")


def bar(campaign: Campaign, seconds: float, gauges: tuple[float, float]) -> bool:
    """Issue 25's bar, stated directly; True when it is met."""
    b, opts = campaign.bar, campaign.opts
    command, (mem, i, source) = max(campaign.peaks.items(), key=lambda r: r[1][0], default=("-", (0, "-", "-")))
    gcommand, (grew, gi, _) = max(campaign.grows.items(), key=lambda r: r[1][0], default=("-", (0, "-", "-")))
    leaks = ", ".join(f"{s} {campaign.leaks.get(s, 0)}" for s in SINKS)
    rows = [
        ("uncaught exceptions (crashes)", b["crash"], b["crash"] == 0),
        (f"hangs (stopped at {opts['limit']:g} s of {'CPU' if opts['clock'] == 'cpu' else 'wall clock'})",
         b["hang"], b["hang"] == 0),
        (f"inputs over {WALL_BAR:g} s of wall-clock time", b["over_wall"], b["over_wall"] == 0),
        (f"inputs over {opts['slow']:g} CPU-seconds", b["over_cpu"], b["over_cpu"] == 0),
        (f"inputs with a leak ({leaks})", b["leak"], b["leak"] == 0),
        (f"inputs over {_mb(opts['max_memory'])} (memory findings)", b["memory"], b["memory"] == 0),
    ]
    met = all(ok for _, _, ok in rows) and mem < opts["max_memory"] and campaign.done > 0
    base = f"workers {_mb(min(campaign.baselines))}-{_mb(max(campaign.baselines))} after warm-up" if campaign.baselines else ""
    print(f"\nissue 25's bar, seed {opts['seed']}, {campaign.done} inputs (an input is over a bound when one of its "
          "commands is):")
    for label, n, ok in rows:
        print(f"  {label:86s} {n:7d}   {'met' if ok else 'NOT MET'}")
    print(f"  {'peak memory: ' + _mb(mem) + f' ({command}, input {i}, {source}; {base})':86s} "
          f"{'<' if mem < opts['max_memory'] else '>='} {_mb(opts['max_memory'])}   "
          f"{'met' if mem < opts['max_memory'] else 'NOT MET'}")
    print(f"  the most one command added to its worker's resident set: {_mb(grew)} ({gcommand}, input {gi})")
    print(f"  rate: {campaign.done / max(seconds, 1e-9):.2f} inputs/s on {opts['jobs']} jobs ({seconds:.0f} s); "
          f"workers replaced for memory: {campaign.recycled}")
    print(f"  CPU gauge (10^7 additions in a Python loop): {gauges[0]:.2f} s before the run, {gauges[1]:.2f} s after")
    print(f"  => the bar is {'met' if met else 'NOT met'}")
    return met


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


def _latex_missing() -> str:
    """What the compile check of export latex lacks on this machine ("" when nothing): pdflatex, or the siunitx
    package the export's units need."""
    if shutil.which("pdflatex") is None:
        return "pdflatex is not on PATH"
    try:
        found = subprocess.run(["kpsewhich", "siunitx.sty"], capture_output=True, text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        found = ""
    return "" if found else "LaTeX has no siunitx package (kpsewhich siunitx.sty finds none)"


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
                         "a replay of what was slow, hung, crashed or leaked)")
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
    ap.add_argument("--max-memory", type=float, default=500, help="MB: a command whose peak resident set is over this is "
                                                                  "a memory finding (default 500)")
    ap.add_argument("--pdflatex-every", type=int, default=50,
                    help="compile the export latex output of one clean input in this many with pdflatex -no-shell-escape "
                         "(about a second each; 0: never)")
    ap.add_argument("--bar", action="store_true", help="exit 1 unless issue 25's bar is met (see the report's last lines)")
    ap.add_argument("--out", type=Path, default=ROOT / "tests" / "fuzz" / "crashes")
    ap.add_argument("--no-write", action="store_true", help="report only: write no reproducer")
    ap.add_argument("--shrink-budget", type=float, default=60.0, help="seconds of shrinking per crash (or leak)")
    ap.add_argument("--shrink-leaks", action="store_true", help="shrink an example of each leak and print it")
    ap.add_argument("--json", type=Path, default=None, help="also write every class, with examples, to this file")
    ap.add_argument("--log", type=Path, default=None,
                    help="append a JSON line per input finished to this file (its number, class, slowest command and "
                         "CPU seconds): which inputs a long or interrupted run covered, and which to replay")
    args = ap.parse_args()
    if args.pdflatex_every > 0 and (missing := _latex_missing()):
        print(f"fuzz.py: {missing}, so the LaTeX sink's compile check would count every input it samples as a leak; "
              "install it (as .ci/run does: texlive-latex-base, texlive-latex-recommended, texlive-science) or pass "
              "--pdflatex-every 0", file=sys.stderr)
        return 2
    deadline = time.time() + args.minutes * 60 if args.minutes else float("inf")
    opts = {"n": args.n, "seed": args.seed, "jobs": args.jobs, "slow": args.slow, "limit": args.limit,
            "deadline": deadline, "clock": args.clock, "start": args.start, "log": args.log,
            "inputs": _inputs(args.inputs, args.seed), "corpus": args.corpus, "max_memory": int(args.max_memory * MB),
            "pdflatex_every": args.pdflatex_every}
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
    seconds = time.time() - start
    if args.shrink_leaks:
        shrink_leaks(campaign, args.shrink_budget)
    report(campaign, seconds)
    met = bar(campaign, seconds, (before, gauge()))
    if args.json:
        args.json.write_text(json.dumps(campaign.classes, indent=1, default=dict, sort_keys=True), encoding="utf-8")
    if not args.no_write:
        for path in write_crashes(campaign, args.out, args.shrink_budget):
            print(f"wrote {path}")
    if args.bar:
        return 0 if met else 1
    return 1 if campaign.kinds.get("crash") or campaign.kinds.get("hang") else 0


if __name__ == "__main__":
    sys.exit(main())
