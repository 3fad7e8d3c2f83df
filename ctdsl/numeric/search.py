"""Design search: the best choice of scheme and param values under constraints.

`run_search(solution, search)` answers one checked `search` statement
(docs/codesign.md, "Design search"):

1. Each choice (a scheme, on its own sites: a scheme on a variant is a hardware
   option) has its time, energy, cost and CO2e to target, its mean power
   (energy / time) and, with `memory = true`, each dc's memory headroom, compiled
   once into one numpy function (as `ctdsl.numeric.forms` compiles the sweeps).
2. Bound: the objective's interval bound over the box of the params' ranges
   (`ctdsl.numeric.search_bounds`). Choices are searched by increasing bound; a
   choice whose bound exceeds the best objective found so far cannot win and is
   pruned (skipped, not evaluated).
3. Seed: every point of the grid (each param's declared spacing and count, or
   `grid`), the feasible point with the best objective.
4. Refine, one param at a time (up to REFINE_ROUNDS passes, a deterministic
   coordinate search), over the bracket of the grid neighbours: where a neighbour
   is infeasible, the constraint's boundary is solved exactly (Brent's method of
   `ctdsl.roots` on quantity - bound, to a few ulps) and the interval
   cut there; then the range end or boundary, or the interior minimum found by
   Brent's bounded minimisation (`ctdsl.numeric.minimise`, to SEARCH_XTOL),
   whichever is best.
5. The Pareto front of `pareto`'s objectives (each minimised): the non-dominated
   feasible points of the grid over every choice.

A param of `over` that none of a choice's forms holds (a module's budget, for a
scheme on sites without the module) does not move it: it is not refined, and
the choice's points, its range ends and the report leave it out.

A search whose every grid point of every choice breaks a constraint is CT703.
"""

from __future__ import annotations

import math

import numpy as np
import sympy as sp

from ctdsl.diagnostics import Diagnostic
from ctdsl.failure import Failure
from ctdsl.language.enums import Spacing
from ctdsl.language.tolerances import REL, SEARCH_BINDING, SEARCH_XTOL
from ctdsl.model.search import CAPS, DEFAULT_GRID, Search
from ctdsl.numeric.forms import _ceil_numpy, _tolerant
from ctdsl.numeric.minimise import minimise
from ctdsl.numeric.search_bounds import interval
from ctdsl.results.search import ChoiceOutcome, Point, SearchResult
from ctdsl.results.solution import Solution
from ctdsl.roots import brent, grid

REFINE_ROUNDS = 4
QUANTITIES = ("time", "energy", "cost", "co2e", "power")


class ChoiceForms:
    """One choice's quantities as one compiled function of every param."""

    def __init__(self, solution, scheme: str, search):
        r = solution.schemes[scheme]
        ex: dict[str, sp.Expr] = {"time": r.time_to_target.expr, "energy": r.energy_to_target.expr}
        if r.cost_to_target is not None:
            ex["cost"] = r.cost_to_target.expr
        if r.co2e_to_target is not None:
            ex["co2e"] = r.co2e_to_target.expr
        ex["power"] = ex["energy"] / ex["time"]
        self.memory_caps: dict[str, float] = {}
        if search.memory:
            model = solution.spec.schemes[scheme].model
            for m in solution.memory:
                if m.model == model and m.capacity is not None:
                    ex["memory:" + m.dc] = m.total.expr - m.capacity.expr
                    self.memory_caps["memory:" + m.dc] = float(m.capacity.value)
        obj = sum((sp.Rational(w.numerator, w.denominator) * ex[n] for n, w in search.terms), sp.Integer(0))
        self.minimised = obj if search.sense == "minimise" else -obj
        ex["objective"] = obj
        self.keys = list(ex)
        infos = list(solution.symbols.info.values())
        self.names = tuple(i.param.name for i in infos)
        self.defaults = {i.param.name: float(i.param.default) for i in infos}
        self.symbols = {i.param.name: i.symbol for i in infos}
        free = set().union(*(e.free_symbols for e in ex.values()))
        self.used = tuple(n for n in search.over if self.symbols[n] in free)  # the params of `over` it depends on
        fn = sp.lambdify(tuple(i.symbol for i in infos), [_tolerant(ex[k]) for k in self.keys], modules=[{"_ceil_tol": _ceil_numpy}, "numpy"], cse=True, dummify=True)
        self._fn = fn

    def __call__(self, values: dict[str, object]) -> dict[str, np.ndarray]:
        args = [values.get(n, self.defaults[n]) for n in self.names]
        with np.errstate(all="ignore"):
            outs = self._fn(*args)
        n = max((np.size(v) for v in values.values()), default=1)
        return {k: np.broadcast_to(np.asarray(o, dtype=np.float64), (n,)) if np.ndim(o) == 0 or np.size(o) != n else np.asarray(o, dtype=np.float64) for k, o in zip(self.keys, outs)}


class _Problem:
    def __init__(self, solution, search):
        self.solution, self.search = solution, search
        self.params = {p: solution.spec.params[p] for p in search.over}
        self.caps = [(key, CAPS[key][0], float(v)) for key, v in search.caps]
        self.sign = 1.0 if search.sense == "minimise" else -1.0
        self.axes = {p: self._axis(p) for p in search.over}
        self.evaluations = 0

    def _axis(self, name: str) -> np.ndarray:
        p = self.params[name]
        n = self.search.grid or p.count or DEFAULT_GRID
        return np.array(grid(p.lo, p.hi, max(n, 2) - 1, p.spacing is Spacing.LOG))

    def is_log(self, name: str) -> bool:
        p = self.params[name]
        return p.spacing is Spacing.LOG and p.lo > 0

    def violations(self, forms: ChoiceForms, q: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        """Each constraint's excess over its bound (<= 0: met), relative to the bound."""
        out = {key: (q[what] - cap) / cap for key, what, cap in self.caps}
        for key, cap in forms.memory_caps.items():
            out[key] = q[key] / cap
        return out

    def evaluate(self, forms: ChoiceForms, values: dict[str, object]):
        """(quantities, minimised objective, feasible mask) at the points `values`."""
        q = forms(values)
        self.evaluations += len(q["objective"])
        m = self.sign * q["objective"]
        ok = np.isfinite(m)
        for v in self.violations(forms, q).values():
            ok &= v <= REL
        return q, m, ok

    def point(self, choice: str, forms: ChoiceForms, x: dict[str, float]) -> tuple[Point, float, bool]:
        q, m, ok = self.evaluate(forms, {k: np.array([v]) for k, v in x.items()})
        quantities = tuple((n, float(q[n][0])) for n in QUANTITIES if n in q)
        return Point(choice, tuple((p, float(x[p])) for p in forms.used), quantities, float(q["objective"][0])), float(m[0]), bool(ok[0])


def _mesh(problem: _Problem) -> dict[str, np.ndarray]:
    names = list(problem.search.over)
    if not names:
        return {}
    grids = np.meshgrid(*[problem.axes[n] for n in names], indexing="ij")
    return {n: g.ravel() for n, g in zip(names, grids)}


def _bound(problem: _Problem, forms: ChoiceForms) -> float:
    box = {forms.symbols[n]: (v, v) for n, v in forms.defaults.items()}
    for n, p in problem.params.items():
        box[forms.symbols[n]] = (float(p.lo), float(p.hi))
    return interval(forms.minimised, box)[0]


def _to_u(problem, name, t):
    return math.log(t) if problem.is_log(name) else t


def _from_u(problem, name, u):
    return math.exp(u) if problem.is_log(name) else u


def _boundary(problem: _Problem, forms: ChoiceForms, x: dict, name: str, end: float) -> float | None:
    """The feasible end of the cut where a constraint broken at `end` starts to break, from x[name]."""
    def excess(t: float) -> float:
        q = forms({**{k: np.array([v]) for k, v in x.items()}, name: np.array([t])})
        problem.evaluations += 1
        return max(float(v[0]) for v in problem.violations(forms, q).values())

    a, fa, fb = x[name], excess(x[name]), excess(end)
    if not (fa <= 0 < fb) or not (math.isfinite(fa) and math.isfinite(fb)):
        return None
    _root, lo, hi = brent(excess, a, end, fa, fb)
    near = lo if abs(lo - a) < abs(hi - a) else hi  # the bracket's end on x's side
    far = hi if near == lo else lo
    return near if excess(near) <= REL else (far if excess(far) <= REL else None)


def _line(problem: _Problem, choice: str, forms: ChoiceForms, x: dict, name: str, lo: float, hi: float):
    """The best feasible point along param `name` in [lo, hi], the others as in x."""
    cands = [dict(x)]
    ends = []
    for end in (lo, hi):
        y = {**x, name: end}
        _, _, ok = problem.point(choice, forms, y)
        if ok:
            ends.append(end)
        else:
            b = _boundary(problem, forms, x, name, end)
            ends.append(b if b is not None else x[name])
        cands.append({**x, name: ends[-1]})
    a, b = _to_u(problem, name, min(ends)), _to_u(problem, name, max(ends))
    if b > a:
        def f(u: float) -> float:
            pt, m, ok = problem.point(choice, forms, {**x, name: _from_u(problem, name, u)})
            return m if ok else math.inf

        span = _to_u(problem, name, problem.params[name].hi) - _to_u(problem, name, problem.params[name].lo)
        u, _, _ = minimise(f, a, b, SEARCH_XTOL * max(span, 1e-300))
        cands.append({**x, name: _from_u(problem, name, u)})
    best = None
    for c in cands:
        pt, m, ok = problem.point(choice, forms, c)
        if ok and (best is None or m < best[1] - REL * abs(best[1])):
            best = (c, m, pt)
    return best


def _refine(problem: _Problem, choice: str, forms: ChoiceForms, x: dict) -> tuple[dict, float, Point]:
    pt, m, _ = problem.point(choice, forms, x)
    best = (dict(x), m, pt)
    for _ in range(REFINE_ROUNDS):
        moved = False
        for name in forms.used:
            axis = problem.axes[name]
            t = best[0][name]
            lo = float(axis[axis < t * (1 - REL)].max()) if (axis < t * (1 - REL)).any() else float(problem.params[name].lo)
            hi = float(axis[axis > t * (1 + REL)].min()) if (axis > t * (1 + REL)).any() else float(problem.params[name].hi)
            got = _line(problem, choice, forms, best[0], name, lo, hi)
            if got is not None and got[1] < best[1] - REL * abs(best[1]):
                best, moved = got, True
        if not moved:
            break
    return best


def _seed(problem: _Problem, forms: ChoiceForms, mesh: dict):
    q, m, ok = problem.evaluate(forms, mesh) if mesh else problem.evaluate(forms, {})
    if not ok.any():
        return None, (q, m, ok)
    i = int(np.flatnonzero(ok)[np.argmin(m[ok])])
    return {n: float(v[i]) for n, v in mesh.items()}, (q, m, ok)


def pareto_front(points: list[Point], axes: tuple[str, ...]) -> tuple[Point, ...]:
    """The points no other point dominates (no worse on every axis, better on one), each axis minimised."""
    order = sorted(points, key=lambda p: tuple(p.quantity(a) for a in axes))
    front: list[Point] = []
    for p in order:
        v = tuple(p.quantity(a) for a in axes)
        if not any(all(f.quantity(a) <= x for a, x in zip(axes, v)) for f in front):
            front.append(p)
    return tuple(front)


def _grid_points(problem: _Problem, choice: str, forms: ChoiceForms, mesh: dict, q, ok) -> list[Point]:
    out = []
    for i in np.flatnonzero(ok):
        params = tuple((n, float(mesh[n][i])) for n in forms.used)
        quantities = tuple((n, float(q[n][i])) for n in QUANTITIES if n in q)
        out.append(Point(choice, params, quantities, float(q["objective"][i])))
    return out


def _infeasible(search) -> Failure:
    caps = ", ".join(k for k, _ in search.caps) + (", memory" if search.memory else "")
    return Failure([Diagnostic(
        "CT703", f"search '{search.name}': no choice meets {caps or 'its constraints'} at any point of the grid", search.span,
        help="relax a bound, widen a param's range, or add a choice; `ctdsl search --format json` shows each choice's status",
    )])  # fmt: skip


def run_search(solution: Solution, search: Search) -> SearchResult:
    problem = _Problem(solution, search)
    mesh = _mesh(problem)
    forms = {c: ChoiceForms(solution, c, search) for c in search.choose}
    bounds = {c: _bound(problem, forms[c]) for c in search.choose}
    order = sorted(search.choose, key=lambda c: (bounds[c], search.choose.index(c)))
    best, outcomes, evaluated = None, {}, {}
    for c in order:
        if best is not None and bounds[c] > best[1] + REL * abs(best[1]):
            outcomes[c] = ("pruned", None)
            continue
        x, evaluated[c] = _seed(problem, forms[c], mesh)
        if x is None:
            outcomes[c] = ("infeasible", None)
            continue
        got = _refine(problem, c, forms[c], x)
        outcomes[c] = ("feasible", got[2])
        if best is None or got[1] < best[1] - REL * abs(best[1]):
            best = (c, got[1], got[2], got[0])
    if best is None:
        raise _infeasible(search)
    choice, _, opt, x = best
    outcomes[choice] = ("optimum", opt)
    front: tuple[Point, ...] = ()
    if search.pareto:
        pts = []
        for c in search.choose:
            q, _, ok = evaluated.get(c) or problem.evaluate(forms[c], mesh)
            pts += _grid_points(problem, c, forms[c], mesh, q, ok)
        front = pareto_front(pts, search.pareto)
    return SearchResult(
        search.name, search.sense, search.text, search.dim, search.over,
        tuple((p, problem.params[p].dim) for p in search.over),
        tuple((k, CAPS[k][0], float(v)) for k, v in search.caps), search.memory, opt,
        _binding(problem, forms[choice], opt, x), _ends(problem, forms[choice], x),
        tuple(ChoiceOutcome(c, solution.schemes[c].label, solution.schemes[c].sites, bounds[c], *outcomes[c]) for c in order),
        search.pareto, front, tuple((p, len(problem.axes[p])) for p in search.over), problem.evaluations,
    )  # fmt: skip


def _binding(problem: _Problem, forms: ChoiceForms, opt: Point, x: dict) -> tuple[str, ...]:
    q = forms({k: np.array([v]) for k, v in x.items()})
    viol = problem.violations(forms, q)
    return tuple(k for k, v in viol.items() if abs(float(v[0])) <= SEARCH_BINDING)


def _ends(problem: _Problem, forms: ChoiceForms, x: dict) -> tuple[tuple[str, str], ...]:
    out = []
    for n, p in problem.params.items():
        if n not in forms.used:
            continue
        for end, v in (("low", p.lo), ("high", p.hi)):
            if abs(x[n] - v) <= SEARCH_BINDING * max(abs(v), abs(p.hi - p.lo)):
                out.append((n, end))
    return tuple(out)


__all__ = ["ChoiceForms", "pareto_front", "run_search"]
