"""The Python API: a thin facade over the pipeline, which the CLI also uses.

    import ctdsl
    study = ctdsl.load("specs/llama70b_wan.ct")   # parse and check, or raise SpecError
    result = study.solve()                        # symbolic costs at the defaults
    result.schemes["dense"].time_to_target

`load` and `check` import neither sympy nor numpy; `solve` does.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ctdsl.check.checker import Checker
from ctdsl.check.loader import Loaded, Unreadable, load as load_files
from ctdsl.check.topology import require_runnable
from ctdsl.diagnostics import Diagnostic, DiagnosticSink, Severity, Sources, render_text, sort_diagnostics
from ctdsl.model.entities import Spec

if TYPE_CHECKING:  # pragma: no cover
    from ctdsl.model.topology import Topology
    from ctdsl.simulate.runner import SimResult
    from ctdsl.results.solution import Solution


class SpecError(Exception):
    """A spec has errors; `diagnostics` lists them all."""

    def __init__(self, diagnostics: list[Diagnostic], sources: Sources):
        self.diagnostics = diagnostics
        self.sources = sources
        super().__init__(self.render())

    def render(self) -> str:
        return "\n\n".join(render_text(d, self.sources) for d in self.diagnostics)


@dataclass
class CheckResult:
    path: str
    spec: Spec | None
    diagnostics: list[Diagnostic]
    sources: Sources
    loaded: Loaded | None = field(default=None, repr=False)

    @property
    def ok(self) -> bool:
        return not any(d.severity is Severity.ERROR for d in self.diagnostics)


def check(path: str | Path, text: str | None = None, overrides: dict[str, str] | None = None) -> CheckResult:
    """Parse and check one spec. Raises `Unreadable` if the file cannot be read.

    `overrides` replaces param defaults (`{"wan_bw": "25 GB/s"}`); every check then
    runs at the new values.
    """
    sink = DiagnosticSink()
    loaded = load_files(path, sink, text=text)
    spec = None
    if not loaded.parse_failed:
        spec = Checker(loaded, sink, overrides or {}).run()
    return CheckResult(str(path), spec if not sink.has_errors else None, sort_diagnostics(sink.items), loaded.sources, loaded)


class Study:
    """A checked spec, ready to solve."""

    def __init__(self, result: CheckResult, overrides: dict[str, str] | None = None):
        assert result.spec is not None
        self.overrides = dict(overrides or {})
        self.path = result.path
        self.spec: Spec = result.spec
        self.sources = result.sources
        self.diagnostics = result.diagnostics

    def graph(self) -> "Topology":
        """The topology the checker built (its networkx graph is `.graph`)."""
        return self.spec.topology

    def solve(self, overrides: dict[str, str] | None = None) -> "Solution":
        """Symbolic costs of every scheme; `overrides` maps param names to values with units."""
        from ctdsl.report import notebook  # noqa: F401  (registers how results show themselves)
        from ctdsl.symbolic.solve import solve

        if overrides:
            return load(self.path, {**self.overrides, **overrides}).solve()
        return solve(self.spec)

    def simulate(
        self,
        steps: int | None = None,
        seeds: int | None = None,
        warmup: int | None = None,
        seed: int = 0,
        schemes: list[str] | None = None,
    ) -> "SimResult":
        """Run the SimPy model of every scheme (or `schemes`); settings default to the spec's."""
        from ctdsl.report import notebook  # noqa: F401  (registers how results show themselves)
        from ctdsl.simulate.runner import settings, simulate

        cfg = settings(self.spec, steps, seeds, warmup, seed)
        return simulate(self.spec, cfg, schemes)

    def __repr__(self) -> str:
        s = self.spec
        return f"<Study {self.path}: {len(s.schemes)} schemes, {len(s.dcs)} dcs, {len(s.params)} params>"


def check_runnable(path: str | Path, text: str | None = None, overrides: dict[str, str] | None = None) -> CheckResult:
    """`check`, for a spec that is to run: a file without a dc is a library, and checks
    clean, but cannot be solved (CT410 when it has schemes)."""
    result = check(path, text, overrides)
    if result.spec is None:
        return result
    sink = DiagnosticSink()
    require_runnable(result.spec, sink)
    if not sink.items:
        return result
    return CheckResult(result.path, None, sort_diagnostics([*result.diagnostics, *sink.items]), result.sources, result.loaded)


def load(path: str | Path, overrides: dict[str, str] | None = None) -> Study:
    """Parse and check a spec; raise SpecError (with every diagnostic) if it has errors."""
    try:
        result = check_runnable(path, overrides=overrides)
    except Unreadable as exc:
        raise FileNotFoundError(str(exc)) from None
    if not result.ok:
        raise SpecError(list(result.diagnostics), result.sources)
    return Study(result, overrides)


__all__ = ["load", "check", "Study", "SpecError", "CheckResult", "Unreadable"]
