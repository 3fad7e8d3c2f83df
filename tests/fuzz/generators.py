"""Inputs for the fuzz campaign: grammar sentences, mutated examples, random expressions, planted payloads.

Four sources, each deterministic given its seed:

- `grammar_strategy()`: sentences of grammar/ctdsl.lark (hypothesis.extra.lark.from_lark),
  with words, numbers and units drawn from small lists of real and fake ones so
  that names often resolve and units are often right; `sample_grammar(n, seed)`
  draws n of them outside a test, for the long run;
- `mutate(rng, corpus)`: a spec or example with lines deleted, duplicated or
  swapped, characters flipped, tokens inserted, and runs of tokens spliced in from
  another file of the corpus;
- `with_random_fields(rng, corpus)`: a spec or example with the value of some
  fields and params replaced by a random expression (huge and tiny exponents,
  exponent towers, deep nesting, min/max/ceil/log2/sqrt of params, zero
  divisors, units right and wrong);
- `with_payloads(seed, i)`: a real spec or example (specs/, examples/) with
  payloads aimed at each sink planted where its text reaches an output: the
  opening comment, comments, labels, display names, its own file name and an
  imported file's, names, values (cost bombs) and `--set` (tests/fuzz/payloads.py).
  It comes in from seed PAYLOADS_SINCE on, for PAYLOAD_SHARE of the inputs that are
  not grammar sentences; which inputs those are is drawn from a generator of its
  own, so that every other input of a seed is the text it always was, and a seed
  below PAYLOADS_SINCE gives exactly the inputs it gave before.

`generate(seed, i)` is input number i of a campaign: the same (seed, i) always
gives the same input, so a run can be split over processes and any input replayed.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

NAMES = [
    "a", "b", "x", "east", "west", "tor", "qsfp", "wan", "wan_bw", "eff", "m", "g",
    "h100", "a100", "ib_ndr", "eth100g", "llama3_8b", "llama3_70b", "std", "links", "devices", "models",
    "gpu", "true", "false", "bandwidth", "latency", "workers", "device", "link", "switch", "pluggable",
    "payload", "collective", "fraction", "chunk", "k", "bits", "index", "at", "sum", "loopback", "ops",
    "port", "optics", "compute", "fpga", "rate", "host", "budget", "tokens", "params", "period", "steps",
    "dense", "quantise", "topk", "demo", "band", "ring_allreduce", "hier_allreduce", "allgather",
    "hier_allgather", "innet_sum", "fft", "dct", "mac", "add", "compare", "min", "max", "ceil", "log2", "sqrt",
    "bytes_per_value", "efficiency", "peak", "model", "load", "transfer", "jitter", "jitter_kind",
    "exponential", "lognormal", "sigma", "label", "cost", "power", "seeds", "warmup",
    "variant", "sites", "none", "bare",
]
UNITS = [
    "B", "b", "GB", "KiB", "GB/s", "Gb/s", "s", "ms", "us", "h", "FLOP", "TFLOP/s", "FLOP/B", "W", "J",
    "pJ/bit", "pJ/FLOP", "m", "km", "Hz", "%", "tokens",
    "GBps", "KB", "FLOPS", "xs", "sec", "Bytes", "furlong",  # wrong or unknown
]
NUMBERS = ["0", "1", "2", "4", "0.5", "1.5", "12.5", "4096", "1e3", "7e10", "1_000", ".25", "1e400", "9" * 70]
STRINGS = ['"x"', '"AdamW"', '"\\eta"', '"b_{\\mathrm{WAN}}"', '"a.ct"', '"imports/none.ct"', '"\\input{x}"', '""']
INTS = ["0", "1", "2", "10", "41", "100001", "999999999999999"]

# what gets inserted, flipped in or spliced: syntax, keywords, hostile bytes and numbers
TOKENS = [
    "{", "}", "=", "==", ";", ",", "(", ")", "[", "]", "..", ".", ":", "^", "/", "*", "-", "+", "<->", "->",
    '"', "'", "#", "\t", "\n", "\r\n", "\x00", "\x1b[31m", "\u00b5", "\u00e9", "\ufeff", "\ud800", "param",
    "import", "model", "wan", "variant", "in", "log", "lin", "vs", "over", "baseline", "breakeven", "gpu", "true",
    "12.5 GB/s", "5 ms", "0", "-1", "1e999", "1e-999", "1/0", "0^-1", "10^10^10", "x", "east", "tor", "qsfp",
    "wan_bw", "hier_allgather", "topk", "std.links", "[[[[", "]]]]", "min(", "log2(", "ceil(",
    '"<script>alert(1)</script>"', '"[/bold]"', '"^^5c"', '"=1+1"', '"common/cluster.ct"',
]
FLIP_CHARS = "{}[]()=;:,.\"#^*/+-<>_ \t\n0123456789eEabcGBs%\x00\x7f\u00e9"


def corpus_files() -> list[Path]:
    """Every spec and example, the imported helper and the standard library: the seeds of mutation."""
    files = sorted((ROOT / "specs").glob("*.ct")) + sorted((ROOT / "examples").rglob("*.ct"))
    files += sorted((ROOT / "ctdsl" / "stdlib").glob("*.ct"))
    return files


@lru_cache(maxsize=1)
def corpus() -> tuple[tuple[str, str], ...]:
    """(name, text) of every corpus file, name relative to the repository."""
    return tuple((str(p.relative_to(ROOT)), p.read_text(encoding="utf-8")) for p in corpus_files())


# ---- the grammar (hypothesis) ------------------------------------------------------------


def grammar_strategy():
    """Sentences of the grammar, a space after every token (the lexer needs none, a quantity does)."""
    from hypothesis import strategies as st
    from hypothesis.extra.lark import from_lark
    from lark import Lark

    from ctdsl.syntax.parser import grammar_text

    lark = Lark(grammar_text(), parser="lalr", lexer="contextual", start=["start"])
    explicit = {}
    for term in lark.terminals:
        if term.pattern.type == "str":
            explicit[term.name] = st.just(term.pattern.value + " ")

    def sep(values):
        return st.sampled_from(values).map(lambda v: v + " ")

    explicit.update(
        NAME=sep(NAMES),
        UNIT=sep(UNITS),
        NUMBER=sep(NUMBERS),
        STRING=sep(STRINGS),
        INT=sep(INTS),
        SPACING=sep(["lin", "log"]),
        ARROW=sep(["<->", "->"]),
        _NL=st.just("\n"),
        COMMENT=st.just(" "),  # a comment runs to the end of the line: not between any two tokens
        WS=st.just(" "),
    )
    return from_lark(lark, start="start", explicit=explicit)


def sample_grammar(n: int, seed: int) -> list[str]:
    """n sentences of the grammar, the same for the same seed (hypothesis drives the drawing)."""
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as hseed

    out: list[str] = []

    @hseed(seed)
    @settings(
        max_examples=n,
        database=None,
        deadline=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(grammar_strategy())
    def draw(text):
        out.append(text)

    draw()
    return out[:n]


# ---- random expressions ------------------------------------------------------------------

HUGE = ["1e308", "1.8e308", "1e999", "9" * 400, "1e-320", "1e-999", "0.000000000000000000001", "2^1024",
        "10^400", "(1e300)^2", "10^10^10", "2^2^2^2^2", "9^9^9", "1e15^1e15", "0^0", "0^-1", "(-1)^0.5"]
FUNCS = ["min", "max", "ceil", "log2", "sqrt", "floor", "abs", "exp"]
SMALL = ["0", "1", "2", "0.5", "3", "16", "1/16", "1e-12", "1e12", "4096", "65536", "0.999"]
EXPR_UNITS = ["", "", "", " B", " GB", " GB/s", " Gb/s", " s", " ms", " us", " FLOP", " TFLOP/s", " FLOP/B",
              " W", " pJ/bit", " km", " %", " b", " furlong", " tokens"]


def random_expr(rng: random.Random, refs: list[str], depth: int = 0) -> str:
    """A random expression: hostile numbers, refs to the file's params, calls, operators, deep nesting."""
    roll = rng.random()
    if depth > 6 or roll < 0.25:
        pick = rng.random()
        if pick < 0.3:
            return rng.choice(HUGE) + rng.choice(EXPR_UNITS)
        if pick < 0.6 and refs:
            return rng.choice(refs)
        return rng.choice(SMALL) + rng.choice(EXPR_UNITS)
    if roll < 0.31:
        # nesting of parentheses and of unary minus: deep only at the top (a deep one costs the checker seconds)
        n = rng.choice([20, 50, 100, 200, 1000] if depth == 0 else [5, 20, 50])
        inner = random_expr(rng, refs, depth + 1)
        return "(" * n + inner + ")" * n if rng.random() < 0.7 else "-" * n + inner
    if roll < 0.6:
        f = rng.choice(FUNCS)
        k = rng.choice([0, 1, 1, 2, 2, 3, 6, 13])
        return f + "(" + ", ".join(random_expr(rng, refs, depth + 1) for _ in range(k)) + ")"
    op = rng.choice(["+", "-", "*", "/", "^", "^"])
    return random_expr(rng, refs, depth + 1) + f" {op} " + random_expr(rng, refs, depth + 1)


_FIELD = re.compile(r"^(\s*(?:param\s+\w+|[A-Za-z_]\w*)\s*=\s*)([^#\n{}]*?)(\s*(?:\bin\b.*)?(?:#.*)?)$")
_PARAM = re.compile(r"^\s*param\s+(\w+)", re.M)


def with_random_fields(rng: random.Random, text: str) -> str:
    """Replace the value of one to four `key = value` lines (fields and params) by random expressions."""
    lines = text.split("\n")
    refs = _PARAM.findall(text)
    slots = [i for i, line in enumerate(lines) if _FIELD.match(line)]
    if not slots:
        return text
    for i in rng.sample(slots, min(len(slots), rng.randint(1, 4))):
        m = _FIELD.match(lines[i])
        assert m is not None
        lines[i] = m.group(1) + random_expr(rng, refs) + m.group(3)
    return "\n".join(lines)


# ---- mutations ---------------------------------------------------------------------------

_TOKEN = re.compile(r'"[^"\n]*"|\d[\d_.eE+-]*(?: ?[A-Za-z%/]+)?|[A-Za-z_]\w*|<->|->|\.\.|\S')


def mutate(rng: random.Random, text: str, donors: tuple[tuple[str, str], ...]) -> str:
    """One to five mutations: lines deleted, duplicated, swapped; characters flipped; tokens inserted or spliced."""
    lines = text.split("\n")
    for _ in range(rng.randint(1, 5)):
        n = len(lines)
        i = rng.randrange(n)
        op = rng.choice(["delete", "delete", "duplicate", "swap", "flip", "flip", "insert", "splice", "splice_line",
                         "delete_chars", "repeat"])
        if op == "delete" and n > 1:
            k = rng.choice([1, 1, 1, 2, 5])
            del lines[i : i + k]
        elif op == "duplicate":
            lines.insert(i, lines[i])
        elif op == "swap":
            j = rng.randrange(n)
            lines[i], lines[j] = lines[j], lines[i]
        elif op == "flip" and lines[i]:
            at = rng.randrange(len(lines[i]))
            c = rng.choice(FLIP_CHARS) if rng.random() < 0.8 else chr(ord(lines[i][at]) ^ (1 << rng.randrange(7)))
            lines[i] = lines[i][:at] + c + lines[i][at + 1 :]
        elif op == "insert":
            at = rng.randint(0, len(lines[i]))
            lines[i] = lines[i][:at] + rng.choice(TOKENS) + lines[i][at:]
        elif op == "delete_chars" and lines[i]:
            at = rng.randrange(len(lines[i]))
            lines[i] = lines[i][:at] + lines[i][at + rng.randint(1, 8) :]
        elif op == "splice":
            lines[i] = _splice_tokens(rng, lines[i], rng.choice(donors)[1])
        elif op == "splice_line":
            donor = rng.choice(donors)[1].split("\n")
            j = rng.randrange(len(donor))
            lines[i:i] = donor[j : j + rng.randint(1, 12)]
        elif op == "repeat":  # a statement many times over: duplicates, sizes
            lines.insert(i, "\n".join([lines[i]] * rng.choice([10, 30, 100, 300])))
    return "\n".join(lines)


def _splice_tokens(rng: random.Random, line: str, donor: str) -> str:
    """Replace a run of tokens of `line` by a run of tokens taken from another file."""
    ours = _TOKEN.findall(line)
    theirs = _TOKEN.findall(donor)
    if not theirs:
        return line
    j = rng.randrange(len(theirs))
    run = theirs[j : j + rng.randint(1, 6)]
    if not ours:
        return " ".join(run)
    i = rng.randrange(len(ours))
    k = rng.randint(0, 3)
    return " ".join(ours[:i] + run + ours[i + k :])


# ---- one input of a campaign -------------------------------------------------------------


@dataclass(frozen=True)
class FuzzInput:
    source: str  # grammar | mutate | fields | mutate+fields | payload
    origin: str  # which corpus file it came from, or the generator
    text: str
    sets: tuple[str, ...] = field(default=())  # --set overrides given to solve --format json
    filename: str = "fuzz.ct"  # the name the input is written under (and named by on the command line)
    files: tuple[tuple[str, str], ...] = field(default=())  # (name, text) written beside it: files it imports
    places: tuple[str, ...] = field(default=())  # for a payload input: where its payloads were planted


PAYLOADS_SINCE = 25  # the first seed with payload inputs (issue 25's campaign); older seeds' inputs are unchanged
PAYLOAD_SHARE = 0.5  # of the inputs that are not grammar sentences, from that seed on


def real_specs() -> tuple[tuple[str, str], ...]:
    """The specs and examples a user would write (not the standard library, not the imported helper)."""
    return tuple((n, t) for n, t in corpus() if n.startswith(("specs/", "examples/")) and n.count("/") == 1)


def with_payloads(seed: int, i: int) -> FuzzInput:
    """A real spec with payloads planted where its text reaches an output (tests/fuzz/payloads.py)."""
    from fuzz.payloads import plant

    rng = random.Random(f"ctdsl-payload:{seed}:{i}")
    name, text = rng.choice(real_specs())
    p = plant(rng, text)
    return FuzzInput("payload", name, p.text, tuple(p.sets), p.filename, tuple(p.files), tuple(p.places))


def is_payload(seed: int, i: int) -> bool:
    """Is input i of this seed a payload input (drawn apart from the other sources' generator)?"""
    return seed >= PAYLOADS_SINCE and random.Random(f"ctdsl-mix:{seed}:{i}").random() < PAYLOAD_SHARE


def generate(seed: int, i: int, payloads: bool = True) -> FuzzInput:
    """Input i of the campaign with this seed (payloads, mutations and random fields; grammar inputs come in batches);
    with `payloads` off, what it would be without the payload source (the same text for every other input)."""
    if payloads and is_payload(seed, i):
        return with_payloads(seed, i)
    rng = random.Random(f"ctdsl-fuzz:{seed}:{i}")
    files = corpus()
    name, text = rng.choice(files)
    roll = rng.random()
    if roll < 0.45:
        out = FuzzInput("mutate", name, mutate(rng, text, files))
    elif roll < 0.85:
        out = FuzzInput("fields", name, with_random_fields(rng, text))
    else:  # both: random fields, then a mutation
        out = FuzzInput("mutate+fields", name, mutate(rng, with_random_fields(rng, text), files))
    if rng.random() < 0.15:
        refs = _PARAM.findall(out.text) or ["wan_bw"]
        sets = tuple(f"{rng.choice(refs)}={random_expr(rng, [], 4)}" for _ in range(rng.randint(1, 2)))
        out = FuzzInput(out.source, out.origin, out.text, sets)
    return out
