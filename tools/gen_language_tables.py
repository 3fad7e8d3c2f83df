"""Fill the generated tables of docs/language.md from the code that defines them.

    python tools/gen_language_tables.py           # rewrite the tables in place
    python tools/gen_language_tables.py --check   # exit 1 if any is out of date

docs/language.md marks each table with a pair of comments,

    <!-- BEGIN GENERATED units -->
    ...
    <!-- END GENERATED units -->

and this script replaces what lies between them: the units (ctdsl/units.py),
the fields of each kind of block and of each pluggable stage and the payloads
(ctdsl/language/schema.py), the observables (ctdsl/language/observables.py), the limits (ctdsl/limits.py, each with its code) and
the bounds kept beside the back-end code they bound (BACK_END_LIMITS). The prose around
them is written by hand. tests/test_docs_language.py runs `--check`.
"""

from __future__ import annotations

import re
import sys
from fractions import Fraction
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ctdsl import limits  # noqa: E402
from ctdsl import units as U  # noqa: E402
from ctdsl.language import schema as S  # noqa: E402
from ctdsl.language.observables import OBSERVABLES  # noqa: E402
from ctdsl.model.expr import FUNCTIONS  # noqa: E402

DOC = ROOT / "docs" / "language.md"
_REGION = re.compile(r"(<!-- BEGIN GENERATED (\S+) -->\n)(.*?)(<!-- END GENERATED \2 -->)", re.S)

BOUNDS = {
    "positive": "> 0",
    "count": "a whole number > 0",
    "nonneg": ">= 0",
    "fraction": "in (0, 1]",
    "utilisation": "in [0, 1)",
    "ge1": ">= 1",
    "stage": "0, 1, 2 or 3",
}


def _power(n: int) -> str | None:
    """1 -> 1, 10^e (e >= 3) and 2^e (>= 1024) as powers; None otherwise."""
    if n == 1:
        return "1"
    e = len(str(n)) - 1
    if n == 10**e and e >= 3:
        return f"10^{e}"
    if n & (n - 1) == 0 and n >= 1024:
        return f"2^{n.bit_length() - 1}"
    return None


def _scale(x: Fraction) -> str:
    """1e9 -> 10^9, 2^30 -> 2^30, 1/8 -> 1/8, 1.25e8 (a gigabit) -> 10^9/8, 60 -> 60."""
    if x.denominator == 1 and (p := _power(x.numerator)):
        return p
    if x.numerator == 1:
        d = x.denominator
        e = len(str(d)) - 1
        if d == 10**e:
            return f"10^-{e}"
        if d == 8:
            return "1/8"
    y = x * 8
    if y.denominator == 1 and (p := _power(y.numerator)) and p != "1":
        return f"{p}/8"
    return str(x)


def units_table() -> str:
    rows = ["| unit | dimension | in base units |", "|---|---|---|"]
    order = [U.DATA, U.OPS, U.TIME, U.FREQUENCY, U.ENERGY, U.POWER, U.LENGTH, U.MONEY, U.CARBON, U.ONE]
    for d in order:
        for name, unit in U.UNITS.items():
            if unit.dim == d:
                base = "" if d.dimensionless else " " + d.symbol().removeprefix("1")
                rows.append(f"| `{name}` | {d.describe()} | {_scale(unit.scale)}{base} |")
    return "\n".join(rows)


def dimensions_table() -> str:
    named = [
        U.ONE, U.DATA, U.TIME, U.RATE, U.OPS, U.OPS_RATE, U.ENERGY, U.POWER,
        U.ENERGY_PER_DATA, U.ENERGY_PER_OP, U.OPS_PER_DATA, U.LENGTH, U.FREQUENCY,
        U.MONEY, U.MONEY_RATE, U.MONEY_PER_ENERGY, U.MONEY_PER_DATA, U.CARBON, U.CARBON_PER_ENERGY,
    ]
    rows = ["| dimension | in base units | written, e.g. |", "|---|---|---|"]
    examples = {
        U.ONE: "`0.4`, `40 %`, `16384 tokens`",
        U.DATA: "`2 B`, `2 b`, `80 GiB`",
        U.TIME: "`10 us`, `20 ms`",
        U.RATE: "`12.5 GB/s`, `100 Gb/s`",
        U.OPS: "`420 GFLOP`",
        U.OPS_RATE: "`989 TFLOP/s`",
        U.ENERGY: "`1 kJ`",
        U.POWER: "`700 W`",
        U.ENERGY_PER_DATA: "`15 pJ/bit`, `60 pJ/B`",
        U.ENERGY_PER_OP: "`1 pJ/FLOP`",
        U.OPS_PER_DATA: "`10 FLOP/B`",
        U.LENGTH: "`800 km`",
        U.FREQUENCY: "`1 GHz`",
        U.MONEY: "`30000 USD`, `40 kUSD`",
        U.MONEY_RATE: "`2.5 USD/h`",
        U.MONEY_PER_ENERGY: "`0.08 USD/kWh`",
        U.MONEY_PER_DATA: "`2000 USD/month / 1 Gb/s` (a rent per capacity and time)",
        U.CARBON: "`1500 kgCO2e`, `3 tCO2e`",
        U.CARBON_PER_ENERGY: "`400 gCO2e/kWh`",
    }
    for d in named:
        kind = d.describe().split(" (")[0]
        rows.append(f"| {kind} | {d.symbol()} | {examples[d]} |")
    return "\n".join(rows)


def _type(f: S.FieldSpec) -> str:
    if f.type == "quantity":
        return d.describe() if (d := f.dim) is not None else "quantity"
    if f.type == "ref":
        return "name of a " + " or ".join("`gpu`" if r == "gpu" else r for r in f.refs)
    if f.type == "enum":
        return "one of " + ", ".join(f"`{c}`" for c in f.choices)
    if f.type == "bool":
        return "`true` or `false`"
    if f.type == "ops":
        return "list of operations"
    if f.type == "refs":
        return "list of names of a " + " or ".join(f.refs)
    return "string"


def _default(f: S.FieldSpec) -> str:
    if f.required:
        return "required"
    v = f.default
    if v is None:
        return ""
    if isinstance(v, bool):
        return f"`{str(v).lower()}`"
    if isinstance(v, tuple):
        return "`[" + ", ".join(v) + "]`"
    if isinstance(v, str):
        return f"`{v}`"
    if f.dim is not None and not f.dim.dimensionless and v != 0:
        return f"`{U.format_quantity(float(v), f.dim)}`"
    return f"`{v}`"


def fields_table(fields: dict[str, S.FieldSpec]) -> str:
    rows = ["| field | takes | bound | default | e.g. | meaning |", "|---|---|---|---|---|---|"]
    for f in fields.values():
        bound = BOUNDS.get(f.bound, "") if f.bound else ""
        example = f"`{f.example}`" if f.example else ""
        rows.append(f"| `{f.name}` | {_type(f)} | {bound} | {_default(f)} | {example} | {f.doc} |")
    return "\n".join(rows)


def payloads_table() -> str:
    rows = [
        "| payload | needs | may also take | its transform needs | default cost |",
        "|---|---|---|---|---|",
    ]
    for p in S.PAYLOADS:
        needs = ", ".join(f"`{k}`" for k in S.PAYLOAD_REQUIRES.get(p, ())) or "nothing"
        extra = [k for k, ps in S.PAYLOAD_FIELDS.items() if p in ps and k not in S.PAYLOAD_REQUIRES.get(p, ())]
        ops = ", ".join(f"`{o}`" for o in S.PAYLOAD_NEEDS[p]) or "no transform"
        rows.append(
            f"| `{p}` | {needs} | {', '.join(f'`{k}`' for k in extra) or ''} | {ops} | `{S.DEFAULT_COST[p]} FLOP/B` |"
        )
    return "\n".join(rows)


def functions_table() -> str:
    rows = ["| function | arguments | result |", "|---|---|---|"]
    what = {
        "min": "the same dimension, one or more | the smallest, in that dimension",
        "max": "the same dimension, one or more | the largest, in that dimension",
        "ceil": "one plain number | the smallest whole number not below it",
        "log2": "one plain number, > 0 | its base-2 logarithm",
    }
    for name in FUNCTIONS:
        rows.append(f"| `{name}(...)` | {what[name]} |")
    return "\n".join(rows)


def distributions_table() -> str:
    from ctdsl.check.distributions import KINDS

    rows = ["| distribution | arguments | bounds (CT314) | drawn as |", "|---|---|---|---|"]
    what = {
        "uniform": ("lo < hi, inside the param's range", "every value in lo .. hi equally likely"),
        "triangular": ("lo <= mode <= hi, lo < hi, inside the param's range", "density rising linearly from lo to mode, falling to hi"),
        "normal": ("sd > 0", "mean and standard deviation; unbounded"),
        "lognormal": ("median > 0, sigma > 0", "ln x normal with mean ln(median) and sd sigma (a plain number)"),
        "samples": ("at least 2 samples, each inside the param's range", "one of the samples, each equally likely (a value written twice, twice as often)"),
    }
    for name, (args, plain_last) in KINDS.items():
        if name == "samples":  # one argument, a table: `[v1, v2, ...]`
            rows.append(f"| `~ samples([v1, v2, ...])` | a table of samples, each with the param's unit | {what[name][0]} | {what[name][1]} |")
            continue
        shown = ", ".join(a + (" (plain number)" if plain_last and i == len(args) - 1 else "") for i, a in enumerate(args))
        rows.append(f"| `~ {name}({', '.join(args)})` | {shown}: the param's unit unless said | {what[name][0]} | {what[name][1]} |")
    return "\n".join(rows)


def _limits_in(path: Path):
    """(name, value text, comment) of each `MAX_... = value  # comment` line of a source file."""
    src = path.read_text(encoding="utf-8")
    for m in re.finditer(r"^(MAX_[A-Z_]+|[A-Z_]+_CHARS) = ([^#\n]+?)\s*(?:#\s*(.*))?$", src, re.M):
        yield m.group(1), m.group(2), (m.group(3) or "").replace("|", "\\|")


def limits_table() -> str:
    rows = ["| limit | value | code | what it bounds |", "|---|---|---|---|"]
    for name, _, doc in _limits_in(ROOT / "ctdsl" / "limits.py"):
        value = getattr(limits, name)
        rows.append(f"| `{name}` | {value:,} | {limits.CODES[name]} | {doc} |")
    return "\n".join(rows)


# bounds kept beside the code they bound: (module, name, what passing it gives)
BACK_END_LIMITS = [
    ("ctdsl/check/observed.py", "MAX_OBSERVED_SCENARIOS", "CT318, before any scenario is solved"),
    ("ctdsl/symbolic/breakeven.py", "MAX_REGIMES", "CT701"),
    ("ctdsl/symbolic/regimes.py", "MAX_EXACT_DEGREE", "none: the roots come from the numeric scan"),
    ("ctdsl/symbolic/regimes.py", "MAX_EXACT_NODES", "none: the roots come from the numeric scan"),
    ("ctdsl/symbolic/regimes.py", "MAX_EXACT_TERMS", "none: the roots come from the numeric scan"),
    ("ctdsl/symbolic/breakeven.py", "MAX_EXACT_PAIRS", "none: the roots come from the numeric scan and Brent's method, marked numeric"),
    ("ctdsl/symbolic/breakeven.py", "MAX_TIDY_NODES", "none: the root's exact form is given as found, not cancelled"),
    ("ctdsl/roots.py", "MAX_BRENT_STEPS", "none: the bracket so far is the answer"),
    ("ctdsl/numeric/minimise.py", "MAX_MINIMISE_STEPS", "none: the best point so far is the answer"),
    ("ctdsl/cli/simulate_cmd.py", "MAX_JOBS", "usage error (exit 2) for `-j`"),
    ("ctdsl/simulate/serving.py", "MAX_REQUESTS", "usage error (exit 2) for `ctdsl simulate --requests` on a serving spec; ValueError from `run`"),
    ("ctdsl/simulate/serving.py", "MAX_TOKENS", "usage error (exit 2) from `ctdsl simulate` on a serving spec, once the lengths are drawn and before any is simulated; ValueError from `run`"),
    ("ctdsl/numeric/sweepdata.py", "MAX_POINTS_IN_MEMORY", "ValueError from `Study.sweep` (a larger grid goes to a file: `ctdsl sweep -f parquet`)"),
    ("ctdsl/numeric/uncertainty.py", "MAX_UNCERTAINTY_SAMPLES", "usage error (exit 2) for `ctdsl uncertainty --samples`; ValueError from the API"),
    ("ctdsl/numeric/winnermap.py", "MAX_MAP_POINTS", "none: `ctdsl sweep --plot` maps at most 400 x 400 points of a larger grid"),
    ("ctdsl/report/paper_forms.py", "MAX_OPS", "none: a larger form is printed as it comes, not rearranged"),
    ("ctdsl/report/paper_cases.py", "MAX_SPLIT_OPS", "none: the max / min is printed without its regime split"),
    ("ctdsl/report/paper_cases.py", "MAX_SPLIT_DEGREE", "none: the crossing comes from the numeric scan, or the split is left out"),
    ("ctdsl/results/reprs.py", "NAME_CHARS", "none: a longer name is cut in a repr"),
    ("ctdsl/simulate/stepplan.py", "MAX_SCHEDULE_OPS", "none: a larger pipeline's makespan is the closed form's, and `--validate` says so"),
    ("ctdsl/simulate/validate.py", "MAX_SETTLE", "none: `--validate` measures after that warm-up, and a check that still differs is shown as an approximation"),
    ("ctdsl/simulate/trace.py", "MAX_STEPS", "none: `explore --simulate` records at most this many steps"),
    ("ctdsl/simulate/trace.py", "MAX_WARMUP", "none: and at most this many warm-up steps"),
    ("ctdsl/simulate/trace.py", "MAX_POINTS", "none: later queue changes are not kept; the page says so"),
    ("ctdsl/simulate/trace.py", "MAX_JOBS", "none: later jobs and phases are not kept; the page says so"),
    ("ctdsl/report/encode.py", "PLOT_CHARS", "none: a longer text is cut, with an ellipsis"),
    ("ctdsl/report/encode.py", "TICK_CHARS", "none: a longer tick label is cut, with an ellipsis"),
    ("ctdsl/report/plots/topology.py", "MAX_WORKERS_DRAWN", "none: the rest of a dc's workers drawn as '...'"),
    ("ctdsl/report/plots/curves.py", "MAX_MARKED", "none: the sweep figure marks this many break-evens and counts the rest under it; the report lists all"),
    ("ctdsl/lint/gitindex.py", "MAX_INDEX_BYTES", "none: lint does not know the tracked files, so no .gitignore skips anything there (a warning says so)"),
]


def back_end_limits_table() -> str:
    rows = ["| limit | where | value | past it | what it bounds |", "|---|---|---|---|---|"]
    for path, name, effect in BACK_END_LIMITS:
        found = {n: (v, d) for n, v, d in _limits_in(ROOT / path)}
        if name not in found:
            raise SystemExit(f"{path} defines no {name}")
        value, doc = found[name]
        rows.append(f"| `{name}` | `{path}` | {value.replace('**', '^')} | {effect} | {doc} |")
    return "\n".join(rows)


def observables_table() -> str:
    rows = ["| observable | takes | bound | best layout | meaning |", "|---|---|---|---|---|"]
    for o in OBSERVABLES.values():
        rows.append(f"| `{o.name}` | {o.dim.describe()} | {BOUNDS[o.bound]} | {o.better} | {o.meaning} |")
    return "\n".join(rows)


def tables() -> dict[str, str]:
    out = {
        "observables": observables_table(),
        "units": units_table(),
        "dimensions": dimensions_table(),
        "functions": functions_table(),
        "distributions": distributions_table(),
        "payloads": payloads_table(),
        "limits": limits_table(),
        "back-end-limits": back_end_limits_table(),
    }
    for kind, fields in S.KINDS.items():
        out[f"fields:{kind}"] = fields_table(fields)
    for stage, fields in S.STAGES.items():
        out[f"stage:{stage}"] = fields_table(fields)
    return out


def render(text: str) -> str:
    generated = tables()
    seen: set[str] = set()

    def fill(m: re.Match) -> str:
        name = m.group(2)
        if name not in generated:
            raise SystemExit(f"docs/language.md asks for an unknown table '{name}'")
        seen.add(name)
        return f"{m.group(1)}{generated[name]}\n{m.group(4)}"

    result = _REGION.sub(fill, text)
    missing = sorted(set(generated) - seen)
    if missing:
        raise SystemExit(f"docs/language.md has no place for the tables {missing}")
    return result


def main(argv: list[str]) -> int:
    current = DOC.read_text(encoding="utf-8")
    updated = render(current)
    if "--check" in argv:
        if updated != current:
            print("docs/language.md tables are out of date: run python tools/gen_language_tables.py", file=sys.stderr)
            return 1
        return 0
    DOC.write_text(updated, encoding="utf-8")
    print("updated docs/language.md")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
