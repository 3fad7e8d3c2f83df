"""Observations against predictions, as tables, JSON, Markdown and CSV.

`ctdsl solve` prints the table "Observed" under its others when a spec holds
observations; `ctdsl validate` prints it for every set, the rank groups, and a table
of the sets (MAPE, largest error, Spearman, the best layout). The conventions
(signed error, the fitted row left out of the error figures, the rank groups) are
those of `ctdsl.results.observed`; docs/validation.md and docs/solve-json.md describe
the output. Every text from a spec (names, sources) goes through the sink's encoder.
"""

from __future__ import annotations

import csv
import math
from io import StringIO
from typing import Iterable, Protocol

from ctdsl import units as U
from ctdsl.report.blocks import Grid
from ctdsl.report.encode import csv_cell, json_number
from ctdsl.results.observed import Observed, ObservedRow


class RowWriter(Protocol):
    """What csv.writer returns: the one method the rows are written with."""

    def writerow(self, row: Iterable[object]) -> object: ...


def shown(value: float | None, dim: U.Dim) -> str:
    """A measured or predicted value: a time with its unit, a fraction in percent."""
    if value is None or not math.isfinite(value):
        return "n/a"
    if dim == U.ONE:
        return f"{100 * value:.1f}%"
    return U.format_quantity(value, dim)


def pct(error: float | None) -> str:
    return "n/a" if error is None else f"{100 * error:+.1f}%"


def _where(r: ObservedRow) -> str:
    return r.scenario if r.scenario is not None else "defaults"


def observed_table(obs: Observed, title: str = "Observed") -> Grid:
    f = obs.fit
    t = Grid(title, ["scenario", "scheme", "observable", "measured", "predicted", "error"] + ([f"{f.param} it implies"] if f is not None else []))
    for i, r in enumerate(obs.rows):
        t.rows.append([_where(r), r.scheme, r.observable, shown(r.measured, r.dim), shown(r.predicted, r.dim) + (" (fitted)" if r.fitted else ""), pct(r.error)])
        if f is not None:
            t.rows[-1].append("none in range" if r.implied is None else _param_shown(r.implied, f.dim))
        if r.counted and obs.worst is r:
            t.marked.add((i, 5))
    t.notes.extend(observed_notes(obs))
    return t


def _param_shown(v: float, dim: U.Dim) -> str:
    return U.format_quantity(v, dim) if dim != U.ONE else f"{v:.3f}"


def fit_line(obs: Observed) -> str | None:
    f = obs.fit
    if f is None:
        return None
    extra = f"; {f.roots} sign changes in the range, the first used" if f.roots > 1 else ""
    return f"{f.param} fitted to {f.shown} on scenario {f.scenario} ({f.observation}), held for every other observation{extra}"


def summary_line(obs: Observed) -> str:
    counted = obs.counted
    if not counted:
        return "no observation to score (the fitted one is met by construction)" if obs.rows else "no observations"
    worst = obs.worst
    left = " (the fitted one not counted)" if obs.fit is not None else ""
    return f"MAPE {obs.mape:.1f}% over {len(counted)} observation{'s' * (len(counted) != 1)}{left}; largest error {pct(worst.error)} ({_where(worst)})"


def group_line(g) -> str:
    rho = "n/a (fewer than 3 layouts, or all alike)" if g.spearman is None else f"{g.spearman:.2f}"
    best = "best" if g.observable in ("mfu", "utilisation") else "fastest"
    verdict = "right" if g.best_right else "wrong"
    return (
        f"{g.group}, {g.observable} of {g.scheme}: Spearman {rho} over {len(g.scenarios)} layouts;"
        f" {best} measured {g.best_measured}, predicted {g.best_predicted} ({verdict})"
    )


def observed_notes(obs: Observed) -> list[str]:
    notes = [n for n in (fit_line(obs), summary_line(obs)) if n]
    if obs.fit is not None:
        notes.append(f"{obs.fit.param} it implies: the value of {obs.fit.param} at which that observation alone would be met, the rest of the scenario as it is")
    notes += [group_line(g) for g in obs.groups if len(g.scenarios) > 1]
    notes += [f"{_where(r)}: {r.note}" for r in obs.rows if r.note]
    notes.append("error: (predicted - measured) / measured")
    return notes


# ---- JSON ---------------------------------------------------------------------------------


def observed_json(obs: Observed) -> dict:
    worst = obs.worst
    return {
        "rows": [
            {
                "scenario": r.scenario,
                "scheme": r.scheme,
                "observable": r.observable,
                "unit": r.dim.symbol(),
                "measured": json_number(r.measured),
                "measured_text": r.text,
                "predicted": json_number(r.predicted) if r.predicted is not None else None,
                "error": json_number(r.error) if r.error is not None else None,
                "fitted": r.fitted,
                "counted": r.counted,
                "source": r.source,
                "model": r.group,
                "note": r.note or None,
                "implied": json_number(r.implied) if r.implied is not None else None,
            }
            for r in obs.rows
        ],
        "fit": None
        if obs.fit is None
        else {
            "param": obs.fit.param,
            "scenario": obs.fit.scenario,
            "value": json_number(obs.fit.value),
            "unit": obs.fit.dim.symbol(),
            "range": [json_number(obs.fit.lo), json_number(obs.fit.hi)],
            "bracket": [json_number(x) for x in obs.fit.bracket],
            "sign_changes": obs.fit.roots,
            "observation": obs.fit.observation,
        },
        "summary": {
            "counted": len(obs.counted),
            "mape_pct": json_number(obs.mape) if obs.mape is not None else None,
            "max_error": json_number(worst.error) if worst is not None else None,
            "max_error_scenario": _where(worst) if worst is not None else None,
        },
        "groups": [
            {
                "model": g.group,
                "observable": g.observable,
                "scheme": g.scheme,
                "scenarios": list(g.scenarios),
                "spearman": json_number(g.spearman) if g.spearman is not None else None,
                "best_measured": g.best_measured,
                "best_predicted": g.best_predicted,
                "best_right": g.best_right,
            }
            for g in obs.groups
        ],
    }


# ---- Markdown and CSV -----------------------------------------------------------------------


CSV_HEADER = ["scenario", "scheme", "observable", "unit", "measured", "predicted", "error", "fitted", "source"]


def observed_rows_csv(obs: Observed, writer: RowWriter, path: str | None = None) -> None:
    for r in obs.rows:
        text = [csv_cell(c) for c in (_where(r), r.scheme, r.observable, r.dim.symbol())]
        numbers = [repr(r.measured), "" if r.predicted is None else repr(r.predicted), "" if r.error is None else repr(r.error)]
        writer.writerow(([csv_cell(path)] if path is not None else []) + text + numbers + [str(r.fitted).lower(), csv_cell(r.source)])


def observed_csv(obs: Observed) -> str:
    buf = StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(CSV_HEADER)
    observed_rows_csv(obs, w)
    return buf.getvalue()


# ---- sets (ctdsl validate) ------------------------------------------------------------------


def sets_table(sets: list[Observed]) -> Grid:
    t = Grid("Sets", ["set", "observations", "fit", "MAPE", "max error", "Spearman", "best layout"])
    for obs in sets:
        worst = obs.worst
        ranked = [g for g in obs.groups if len(g.scenarios) > 1]
        rho = ", ".join("n/a" if g.spearman is None else f"{g.spearman:.2f}" for g in ranked) or "-"
        best = ", ".join("right" if g.best_right else "wrong" for g in ranked) or "-"
        t.rows.append(
            [
                obs.path,
                str(len(obs.rows)),
                f"{obs.fit.param} = {obs.fit.shown} on {obs.fit.scenario}" if obs.fit is not None else "-",
                f"{obs.mape:.1f}%" if obs.mape is not None else "n/a",
                f"{pct(worst.error)} ({_where(worst)})" if worst is not None else "n/a",
                rho,
                best,
            ]
        )
    t.notes.append("MAPE and max error over the observations not fitted on; Spearman and the best layout per group of layouts that share a model")
    return t


def worst_rows(obs: Observed, n: int = 3) -> list[ObservedRow]:
    """The n counted rows with the largest |error|, largest first."""
    return sorted(obs.counted, key=lambda r: -abs(r.error))[:n]


__all__ = [
    "observed_table", "observed_notes", "observed_json", "observed_csv", "observed_rows_csv",
    "sets_table", "worst_rows", "shown", "pct", "fit_line", "summary_line", "group_line", "CSV_HEADER",
]  # fmt: skip
