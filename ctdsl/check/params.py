"""Typing params: constants with units, their ranges and sweeps, and `--set` overrides.

A param's default and the ends of its range are constants (no names), evaluated
once here; `--set name=value` replaces a default, with the same unit checks, and
the range checks then run at the new value. A scenario's values (`scenario NAME
{ param = value }`, when the spec is checked in that scenario) replace defaults
the same way, and win over `--set` for the params they set. Each `Param` is built once, with its
range, when everything about it is known.
"""

from __future__ import annotations

from ctdsl import limits
from ctdsl import units as U
from ctdsl.check.distributions import check_distribution
from ctdsl.check.exprs import ExprTyper, Typed
from ctdsl.check.loader import Loaded
from ctdsl.check.names import Namespace
from ctdsl.diagnostics import DiagnosticSink, Label, Span, did_you_mean
from ctdsl.language.bounds import OUTSIDE_RANGE
from ctdsl.language.enums import Spacing
from ctdsl.language.texname import problem
from ctdsl.model import entities as M
from ctdsl.model import expr as E
from ctdsl.syntax import ast
from ctdsl.syntax.parser import parse_expression

Range = tuple[float, float, "Spacing | None", "int | None"]  # lo, hi (base units), spacing, count


class ParamChecker:
    def __init__(self, loaded: Loaded, sink: DiagnosticSink, ns: Namespace, overrides: dict[str, str], scenario: dict[str, ast.Expr] | None = None):
        self.loaded = loaded
        self.sink = sink
        self.ns = ns
        self.overrides = overrides
        self.scenario = dict(scenario or {})  # param -> the value a scenario writes for it

    def params(self) -> dict[str, M.Param]:
        """Every param that checks, by name, in definition order; then unknown `--set` names."""
        out: dict[str, M.Param] = {}
        for d in self.ns.of_kind("param"):
            p = self.param(d.node)  # type: ignore[arg-type]
            if p is not None:
                out[p.name] = p
        self._unknown_overrides(out)
        return out

    def _const(self, node: ast.Expr, what: str) -> Typed | None:
        def no_names(ref: ast.Ref) -> None:
            self.sink.error(
                "CT309",
                f"{what} must be a constant, not '{ref.dotted}'",
                ref.span,
                help="a param's default and range are numbers with units, e.g. 12.5 GB/s",
            )
            return None

        typed = ExprTyper(self.sink, no_names).type(node)
        if typed is None:
            return None
        try:
            E.evaluate(typed.expr, {})
        except E.EvalError as err:
            self.sink.error("CT306", f"{what} cannot be evaluated: {err}", node.span)
            return None
        return typed

    def param(self, node: ast.Param) -> M.Param | None:
        name = node.name.text
        default = self._const(node.default, f"the default of param '{name}'")
        if default is None:
            return None
        unit, scale = None, 1.0
        if isinstance(node.default, ast.Number) and node.default.unit:
            unit = node.default.unit
            scale = float(U.parse_unit(unit).scale)
        value = E.evaluate(default.expr, {})
        overridden = name in self.overrides or name in self.scenario
        if overridden:
            value = self._given(name, default, self.scenario[name]) if name in self.scenario else self._override(name, default)
            if value is None:
                return None
        self._display(node)
        lo, hi, spacing, count = self._range(node, default, value, overridden) or (None, None, None, None)
        dist = check_distribution(self.sink, self._const, node, default, (lo, hi))
        return M.Param(
            name=name,
            dim=default.dim,
            default=value,
            unit=unit,
            unit_scale=scale,
            lo=lo,
            hi=hi,
            spacing=spacing,
            count=count,
            display=node.display,
            span=node.name.span,
            given=overridden,
            dist=dist,
        )

    def _display(self, node: ast.Param) -> None:
        why = None if node.display is None else problem(node.display)
        if why is None:
            return
        end = node.span  # the display string ends the statement
        at = Span(end.file, end.end_line, max(1, end.end_col - len(node.display) - 2), end.end_line, end.end_col)
        self.sink.error(
            "CT310",
            f"display name of '{node.name.text}' is not safe LaTeX math: {why}",
            at,
            label="refused",
            help=r'letters, digits, _ ^ { } (balanced; each ^ and _ with its argument; no ^^) and \-commands for Greek letters and \mathrm, e.g. "b_{\mathrm{WAN}}"',
        )

    def _range(self, node: ast.Param, default: Typed, value: float, overridden: bool) -> Range | None:
        """The checked range, or None when there is none or its ends do not type."""
        name, r = node.name.text, node.range
        if r is None:
            return None
        lo = self._const(r.lo, f"the low end of param '{name}'")
        hi = self._const(r.hi, f"the high end of param '{name}'")
        if lo is None or hi is None:
            return None
        for end, t, n in (("low", lo, r.lo), ("high", hi, r.hi)):
            if t.dim != default.dim:
                self.sink.error(
                    "CT207",
                    f"the {end} end of param '{name}' is {t.dim.describe()}, but its default is {default.dim.describe()}",
                    n.span,
                    label=t.dim.describe(),
                    secondary=(Label(node.default.span, default.dim.describe()),),
                )
                return None
        lo_v, hi_v, dim = E.evaluate(lo.expr, {}), E.evaluate(hi.expr, {}), default.dim
        if lo_v >= hi_v:
            self.sink.error(
                "CT307",
                f"param '{name}': the range must go from low to high",
                r.span,
                label=f"{U.format_quantity(lo_v, dim)} .. {U.format_quantity(hi_v, dim)}",
                help="write the smaller end first",
            )
        elif overridden and name in self.scenario:
            pass  # a scenario's value outside the range is CT316, reported where the spec is checked as written
        elif overridden and not lo_v <= value <= hi_v:
            where, text = f"--set {name}", self.overrides[name]
            code, message, help = OUTSIDE_RANGE
            self.sink.warning(
                code,
                message.format(param=name, shown=U.format_quantity(value, dim), low=U.format_quantity(lo_v, dim), high=U.format_quantity(hi_v, dim)),
                Span(where, 1, 1, 1, len(text) + 1),
                secondary=(Label(r.span, "declared range"),),
                help=help,
            )
        elif not overridden and not lo_v <= value <= hi_v:
            self.sink.error(
                "CT307",
                f"param '{name}': default {U.format_quantity(value, dim)} lies outside its range",
                node.default.span,
                secondary=(Label(r.span, "range"),),
                help="move the default into the range, or widen the range",
            )
        if r.spacing == Spacing.LOG and lo_v <= 0:
            self.sink.error(
                "CT307",
                f"param '{name}': a log sweep needs a positive low end",
                r.lo.span,
                label=U.format_quantity(lo_v, dim),
                help="start the sweep above zero, or sweep with lin",
            )
        if r.count is not None:
            if r.count < 1:
                self.sink.error("CT307", f"param '{name}': a sweep needs at least one point", r.span)
            elif r.count > limits.MAX_SWEEP_POINTS:
                self.sink.error(
                    "CT607",
                    f"param '{name}': {r.count} sweep points is more than {limits.MAX_SWEEP_POINTS}",
                    r.span,
                    help="sweep fewer points; a log sweep covers decades with few",
                )
        return lo_v, hi_v, Spacing(r.spacing) if r.spacing is not None else None, r.count

    def _override(self, name: str, default: Typed) -> float | None:
        text = self.overrides[name]
        where = f"--set {name}"
        self.loaded.sources.add(where, text)
        node = parse_expression(text, where, self.sink)
        if node is None:
            return None
        return self._given(name, default, node)

    def _given(self, name: str, default: Typed, node: ast.Expr) -> float | None:
        """The value `node` gives param `name` (a --set value, or a scenario's): a constant of its dimension."""
        typed = self._const(node, f"the value given for '{name}'")
        if typed is None:
            return None
        if typed.dim != default.dim:
            self.sink.error(
                "CT202",
                f"param '{name}' is {default.dim.describe()}, but the value given is {typed.dim.describe()}",
                node.span,
                label=typed.dim.describe(),
                help=f"give a value with a unit of {default.dim.describe()}",
            )
            return None
        return E.evaluate(typed.expr, {})

    def _unknown_overrides(self, params: dict[str, M.Param]) -> None:
        for name, text in self.overrides.items():
            if name in params or any(d.name == name for d in self.ns.of_kind("param")):
                continue
            where = f"--set {name}"
            self.loaded.sources.add(where, text)
            self.sink.error(
                "CT101",
                f"--set names unknown param '{name}'",
                Span(where, 1, 1, 1, len(text) + 1),
                help=did_you_mean(name, self.ns.names_of("param")) or f"params are: {', '.join(self.ns.names_of('param')) or 'none'}",
            )
