"""Each validation row's predicted step by component, against its measurement.

    python tools/validation_components.py specs/validation/korthikanti_full.ct
    python tools/validation_components.py specs/validation/vtrain_3_6b.ct --eff 0.70
    python tools/validation_components.py specs/validation/vtrain_3_6b.ct --by tp_n,pp_n,dp_n

For every observation of the spec: measured, predicted, the error, and the step's terms
(compute: the GEMMs; memory-bound operations; the end stages' embedding and LM head;
recompute; tensor, pipeline parallel; the bubble; the optimiser; the data-parallel phases),
in seconds, at the spec's fitted efficiency, or at --eff (the same value for every row, to
see which rows a single value leaves out). docs/validation.md ("By component") quotes it.

With --by PARAMS (the spec's params that name a layout, comma-separated), the rows are grouped
by their scenarios' values of those params instead, and each group gives its rows' residuals
(measured - predicted, seconds): the median, the range, and the time the model gives the
step's data-parallel phases (the sync's terms), so that a residual that does not move with the
micro-batch shows as a cost of the layout a step (docs/validation.md, "vTrain 3.6B").
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ctdsl.api import load  # noqa: E402
from ctdsl.language.components import Group  # noqa: E402
from ctdsl.numeric.observe import fit_param, value_text  # noqa: E402

SHORT = {
    "compute": "gemm", "memory_bound": "mem", "end_stages": "ends", "recompute": "recomp", "tensor_parallel": "tp",
    "pipeline_bubble": "bubble", "pipeline_parallel": "p2p", "optimiser": "opt",
}  # fmt: skip


SYNC = (Group.SYNC_IN_SITE, Group.SYNC_ACROSS_SITES, Group.EXPOSED_SYNC)  # the data-parallel phases of a step


def rows(path: str, eff: float | None = None) -> tuple[float | None, list[tuple[str, float, float, dict[str, float]]]]:
    """(the efficiency, [(scenario, measured s, predicted s, {term: seconds})]); a set that fits
    nothing (the acceptance sets) is solved as it is written, and gives None for the efficiency."""
    eff, found = solved(load(path), eff)
    return eff, [(name, measured, predicted, terms) for name, measured, predicted, terms, _ in found]


def solved(study, eff: float | None = None) -> tuple[float | None, list[tuple[str, float, float, dict[str, float], float]]]:
    """rows(), and with each row the seconds of its step's data-parallel phases (SYNC)."""
    spec = study.spec
    if not spec.fits:
        if eff is not None:
            raise SystemExit("the set fits no param: --eff has nothing to set")
        given: dict[str, str] = {}
    elif eff is None:
        f = spec.fits[0]
        fit = fit_param(study.in_scenario(f.scenario, {}).solve(), f, spec.observations[f.observation])
        eff, given = fit.value, {f.param: value_text(fit.value, fit.dim)}
    else:
        given = {spec.fits[0].param: repr(eff)}
    out = []
    for obs in spec.observations:
        scheme = study.in_scenario(obs.scenario, given).solve().schemes[obs.scheme]
        terms = {SHORT.get(t.key.value, t.id.label): float(t.value.value) for t in scheme.terms if float(t.value.value) > 0}
        sync = sum(float(t.value.value) for t in scheme.of(*SYNC))
        out.append((obs.scenario, obs.value, float(scheme.step_time.value), terms, sync))
    return eff, out


LayoutRow = tuple[tuple[float, ...], list[str], float, float, float, float]


def by_layout(path: str, params: list[str], eff: float | None = None) -> list[LayoutRow]:
    """[(the params' values, [scenario], median residual s, least, most, the data-parallel phases s)], a group a
    layout in the spec's order; residual = measured - predicted; the phases' time is the median over the group's rows
    (the same in every row of a layout whose gradients do not depend on the micro-batch)."""
    study = load(path)
    return grouped(study, solved(study, eff)[1], params)


def grouped(study, found, params: list[str]) -> list[LayoutRow]:
    """by_layout() of rows the study has already solved (solved()'s)."""
    groups: dict[tuple[float, ...], list[tuple[str, float, float]]] = {}
    for name, measured, predicted, _, sync in found:
        key = tuple(study.spec.scenarios[name].values[p] for p in params)
        groups.setdefault(key, []).append((name, measured - predicted, sync))
    out = []
    for key, members in groups.items():
        residuals = [r for _, r, _ in members]
        out.append((key, [n for n, _, _ in members], statistics.median(residuals), min(residuals), max(residuals),
                    statistics.median(s for _, _, s in members)))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("spec")
    ap.add_argument("--eff", type=float, default=None, help="hold this efficiency for every row instead of the fit")
    ap.add_argument("--by", default=None, help="group the rows by these params' values (comma-separated): residuals a layout")
    a = ap.parse_args()
    if a.by:
        params = [p.strip() for p in a.by.split(",") if p.strip()]
        print(f"{a.spec}: measured - predicted, seconds, by {', '.join(params)}")
        for key, names, median, least, most, sync in by_layout(a.spec, params, a.eff):
            layout = " ".join(f"{p}={v:g}" for p, v in zip(params, key, strict=True))
            print(f"{layout:30s} rows {len(names):2d} median {median:+7.3f} range {least:+7.3f} .. {most:+7.3f} | "
                  f"data-parallel phases {sync:.3f}")
        return
    eff, found = rows(a.spec, a.eff)
    print(f"{a.spec}: " + ("as written (no fit)" if eff is None else f"eff = {eff:.4f}"))
    for name, measured, predicted, terms in found:
        parts = " ".join(f"{k}={v:.3f}" for k, v in terms.items())
        print(f"{name:20s} measured {measured:8.3f} predicted {predicted:8.3f} {100 * (predicted - measured) / measured:+6.1f}% | {parts}")


if __name__ == "__main__":
    main()
