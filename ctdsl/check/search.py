"""Checking design searches: `search NAME { minimise = ...; over = [...]; ... }`.

A search's fields are read here, not through the block schema: its values are
names of objectives, params and schemes rather than quantities of a definition.

- `minimise` or `maximise` (exactly one): a weighted sum of time, energy, cost
  and co2e to target, `cost + 40 USD/h * time`; the terms must share a dimension;
- `over`: params with a range, moved over it; `choose`: schemes with steps to
  target (default: every one that has them);
- `deadline`, `power_cap`, `budget`, `co2e_cap`: constant quantities bounding
  the time, mean power, cost and CO2e to target; `memory = true`: each chosen
  scheme's model must fit its devices' memory;
- `pareto`: two or three objectives; `grid`: points per param.

Generic mistakes take the generic codes (CT101 unknown name, CT102 wrong kind,
CT104 unknown field, CT105 no objective, CT106 a field twice, CT108 an unknown
objective, CT202 a wrong dimension, CT607 too many points); what only a search
can get wrong is CT130.
"""

from __future__ import annotations

from fractions import Fraction

from ctdsl import limits
from ctdsl import units as U
from ctdsl.check.exprs import ExprTyper, constant_value
from ctdsl.check.names import Namespace
from ctdsl.diagnostics import DiagnosticSink, Label, did_you_mean
from ctdsl.language import schema as S
from ctdsl.model import search as MS
from ctdsl.syntax import ast

FIELDS = ("minimise", "maximise", "over", "choose", "deadline", "power_cap", "budget", "co2e_cap", "memory", "pareto", "grid")
CARBON_FIELDS = {("device", "embodied_carbon"), ("dc", "carbon_intensity")}


def check_searches(ns: Namespace, sink: DiagnosticSink, draft) -> None:
    """Check every search statement; append each good one to `draft.searches`."""
    seen: dict[str, ast.Search] = {}
    for stmt in ns.searches:
        if stmt.name.text in seen:
            sink.error("CT103", f"search '{stmt.name.text}' is defined twice", stmt.name.span, secondary=(Label(seen[stmt.name.text].name.span, "first defined here"),))
            continue
        seen[stmt.name.text] = stmt
        s = _Reader(ns, sink, draft, stmt).read()
        if s is not None:
            draft.searches.append(s)


def _priced(draft) -> tuple[bool, bool]:
    """Whether any definition sets a price, and any a carbon field (as the solver decides, ctdsl.symbolic.money)."""
    tables = {"device": draft.devices, "link": draft.links, "pluggable": draft.pluggables, "switch": draft.switches, "dc": draft.dcs}
    ents = [(k, e) for k, t in tables.items() for e in t.values()] + [("dc", d) for v in draft.variants.values() for d in v.dcs.values()]
    given = {(k, f) for k, e in ents for f in S.MONEY_FIELDS[k] if getattr(e, f, None) is not None}
    return bool(given - CARBON_FIELDS), bool(given & CARBON_FIELDS)


class _Reader:
    def __init__(self, ns: Namespace, sink: DiagnosticSink, draft, stmt: ast.Search):
        self.ns, self.sink, self.draft, self.stmt = ns, sink, draft, stmt
        self.ok = True
        self.fields: dict[str, ast.Field] = {}

    def error(self, code: str, message: str, span, **kw) -> None:
        self.ok = False
        self.sink.error(code, message, span, **kw)

    def read(self) -> MS.Search | None:
        for item in self.stmt.items:
            if not isinstance(item, ast.Field):
                self.error("CT104", "a search takes fields only, not a stage or a WAN statement", item.span)
            elif item.key.text not in FIELDS:
                self.error("CT104", f"a search has no field '{item.key.text}'", item.key.span, help=did_you_mean(item.key.text, FIELDS) or "fields: " + ", ".join(FIELDS))
            elif item.key.text in self.fields:
                self.error("CT106", f"field '{item.key.text}' is set twice", item.key.span, secondary=(Label(self.fields[item.key.text].key.span, "first set here"),))
            else:
                self.fields[item.key.text] = item
        goal = [k for k in ("minimise", "maximise") if k in self.fields]
        terms, dim = None, None
        if len(goal) != 1:
            where = self.fields["maximise"].key.span if len(goal) == 2 else self.stmt.name.span
            self.error("CT105" if not goal else "CT130", f"search '{self.stmt.name.text}' needs {'one of' if not goal else 'only one of'} minimise and maximise", where, help="e.g. minimise = cost")
        else:
            terms, dim = self._objective(self.fields[goal[0]].value)
        over = self._names("over", "param")
        choose = self._names("choose", "scheme")
        caps = self._caps()
        pareto = self._pareto()
        memory = self._memory()
        grid = self._grid(over or ())
        if not self.ok or terms is None:
            return None
        return MS.Search(
            self.stmt.name.text, goal[0], terms, dim, _text(self.fields[goal[0]].value), over or (), choose or self._all_schemes(),
            caps, memory, pareto, grid, self.stmt.span, {k: f.span for k, f in self.fields.items()},
        )

    # ---- the objective -----------------------------------------------------------

    def _objective(self, node) -> tuple[tuple | None, U.Dim | None]:
        terms: list[tuple[str, Fraction, U.Dim]] = []
        for sign, term in _summands(node, 1):
            got = self._term(term)
            if got is None:
                return None, None
            name, w, wdim = got
            terms.append((name, sign * w, wdim * MS.OBJECTIVE_DIMS[name]))
        dims = {d for _, _, d in terms}
        if len(dims) > 1:
            self.error("CT202", "the terms of an objective must have one dimension: weight each, e.g. cost + 40 USD/h * time", node.span, label=", ".join(sorted(d.describe() for d in dims)))
            return None, None
        self._need_prices([n for n, _, _ in terms], node.span)
        merged: dict[str, Fraction] = {}
        for n, w, _ in terms:
            merged[n] = merged.get(n, Fraction(0)) + w
        return tuple(merged.items()), terms[0][2]

    def _term(self, node) -> tuple[str, Fraction, U.Dim] | None:
        if isinstance(node, ast.Ref):
            return self._objective_name(node), Fraction(1), U.ONE
        if isinstance(node, ast.BinOp) and node.op in "*/":
            for name, weight in ((node.right, node.left), (node.left, node.right)) if node.op == "*" else ((node.left, node.right),):
                if isinstance(name, ast.Ref) and not _mentions_ref(weight):
                    typed = ExprTyper(self.sink, lambda r: None).type(weight)
                    value = constant_value(typed) if typed is not None else None
                    if value is None or value == 0:
                        break
                    if node.op == "/":
                        return self._objective_name(name), 1 / value, U.ONE / typed.dim
                    return self._objective_name(name), value, typed.dim
        self.error("CT130", "an objective is a weighted sum of time, energy, cost and co2e to target", node.span, label="not a constant times one of them", help="e.g. minimise = cost + 40 USD/h * time")
        return None

    def _objective_name(self, ref: ast.Ref) -> str:
        text = ref.dotted
        if text not in MS.OBJECTIVES:
            self.error("CT108", f"'{text}' is not an objective: one of {', '.join(MS.OBJECTIVES)}", ref.span, help=did_you_mean(text, MS.OBJECTIVES))
            return "time"
        return text

    def _need_prices(self, names, span) -> None:
        priced, carbon = _priced(self.draft)
        for n, given, what in (("cost", priced, "a price"), ("co2e", carbon, "a carbon intensity or embodied carbon")):
            if n in names and not given:
                self.error("CT130", f"the search asks for {n} to target, but no definition gives {what}", span, help="see docs/codesign.md, 'Cost and carbon'")

    # ---- names, constraints, options ----------------------------------------------

    def _list(self, key: str) -> list[ast.Ref] | None:
        f = self.fields.get(key)
        if f is None:
            return None
        items = f.value.items if isinstance(f.value, ast.ListValue) else (f.value,)
        refs = [i for i in items if isinstance(i, ast.Ref) and len(i.parts) == 1]
        if len(refs) != len(items):
            self.error("CT130", f"{key} is a list of names", f.value.span, help=f"e.g. {key} = [a, b]")
            return None
        return refs

    def _names(self, key: str, kind: str) -> tuple[str, ...] | None:
        refs = self._list(key)
        if refs is None:
            return None
        out: list[str] = []
        for r in refs:
            if not self.ns.expect(r.parts[0], kind):
                self.ok = False
            elif r.dotted in out:
                self.error("CT106", f"{key} names '{r.dotted}' twice", r.span)
            elif kind == "param" and self.draft.params.get(r.dotted) is None:
                self.ok = False  # declared, but it did not check (its own diagnostic says why): nothing to search over
            elif kind == "param" and self.draft.params[r.dotted].lo is None:
                self.error("CT130", f"param '{r.dotted}' has no range to search over", r.span, help="declare its range after its default: in LO .. HI")
            elif kind == "scheme" and r.dotted in self.draft.schemes and self.draft.schemes[r.dotted].steps is None:
                self.error("CT130", f"scheme '{r.dotted}' has no steps to target, so nothing to target to compare", r.span, help="give it steps = N")
            else:
                out.append(r.dotted)
        return tuple(out)

    def _all_schemes(self) -> tuple[str, ...]:
        got = tuple(n for n, s in self.draft.schemes.items() if s.steps is not None)
        if not got:
            self.error("CT130", f"search '{self.stmt.name.text}' has no scheme with steps to target to choose from", self.stmt.name.span)
        return got

    def _constant(self, key: str, dim: U.Dim) -> Fraction | None:
        f = self.fields[key]
        typed = ExprTyper(self.sink, lambda r: self._no_ref(r, key)).type(f.value) if not isinstance(f.value, (ast.ListValue, ast.StringValue)) else None
        if typed is None:
            self.ok = False
            if isinstance(f.value, (ast.ListValue, ast.StringValue)):
                self.error("CT202", f"{key} is a quantity", f.value.span)
            return None
        if typed.dim != dim:
            self.error("CT202", f"{key} must be {dim.describe()}, not {typed.dim.describe()}", f.value.span, label=typed.dim.describe())
            return None
        value = constant_value(typed)
        if value is None or value <= 0:
            self.error("CT130", f"{key} must be a positive constant", f.value.span)
            return None
        return value

    def _no_ref(self, ref: ast.Ref, key: str):
        self.error("CT130", f"{key} is a constant: it cannot read '{ref.dotted}'", ref.span)
        return None

    def _caps(self) -> tuple[tuple[str, Fraction], ...]:
        out = []
        for key, (what, dim) in MS.CAPS.items():
            if key in self.fields:
                v = self._constant(key, dim)
                if v is not None:
                    out.append((key, v))
                if what in ("cost", "co2e"):
                    self._need_prices([what], self.fields[key].span)
        return tuple(out)

    def _pareto(self) -> tuple[str, ...]:
        refs = self._list("pareto")
        if refs is None:
            return ()
        names = [self._objective_name(r) for r in refs]
        if not 2 <= len(set(names)) == len(names) <= 3:
            self.error("CT130", "a Pareto front is of two or three different objectives", self.fields["pareto"].value.span, help="e.g. pareto = [time, cost]")
            return ()
        self._need_prices(names, self.fields["pareto"].span)
        return tuple(names)

    def _memory(self) -> bool:
        f = self.fields.get("memory")
        if f is None:
            return False
        if not (isinstance(f.value, ast.Ref) and f.value.dotted in ("true", "false")):
            self.error("CT202", "memory is true or false", f.value.span)
            return False
        return f.value.dotted == "true"

    def _grid(self, over: tuple[str, ...]) -> int | None:
        n = None
        if "grid" in self.fields:
            v = self._constant("grid", U.ONE)
            if v is None:
                return None
            if v.denominator != 1 or v < 2:
                self.error("CT130", "grid is a whole number of points per param, at least 2", self.fields["grid"].value.span)
                return None
            n = int(v)
        points = 1
        for p in over:
            points *= n or self.draft.params[p].count or MS.DEFAULT_GRID
        if points > limits.MAX_SEARCH_POINTS:
            self.error("CT607", f"the search's grid has {points:,} points per choice; at most {limits.MAX_SEARCH_POINTS:,} are searched", self.stmt.name.span, help="set a smaller grid = N (points per param), or fewer params in over")
        return n


def _summands(node, sign: int):
    if isinstance(node, ast.BinOp) and node.op in "+-":
        yield from _summands(node.left, sign)
        yield from _summands(node.right, sign if node.op == "+" else -sign)
    elif isinstance(node, ast.Neg):
        yield from _summands(node.operand, -sign)
    else:
        yield sign, node


def _mentions_ref(node) -> bool:
    if isinstance(node, ast.Ref):
        return True
    return any(_mentions_ref(c) for c in getattr(node, "args", ()) + tuple(getattr(node, k) for k in ("left", "right", "operand") if hasattr(node, k)))


def _text(node) -> str:
    """The objective as written (for display), rebuilt from its syntax tree."""
    if isinstance(node, ast.Number):
        return node.text + (" " + node.unit if node.unit else "")
    if isinstance(node, ast.Ref):
        return node.dotted
    if isinstance(node, ast.Neg):
        return "-" + _text(node.operand)
    if isinstance(node, ast.BinOp):
        return f"{_text(node.left)} {node.op} {_text(node.right)}"
    if isinstance(node, ast.Call):
        return f"{node.func.text}({', '.join(_text(a) for a in node.args)})"
    return "?"


__all__ = ["check_searches"]
