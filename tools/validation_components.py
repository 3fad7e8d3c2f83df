"""Each validation row's predicted step by component, against its measurement.

    python tools/validation_components.py specs/validation/korthikanti_full.ct
    python tools/validation_components.py specs/validation/vtrain_3_6b.ct --eff 0.70

For every observation of the spec: measured, predicted, the error, and the step's terms
(compute: the GEMMs; memory-bound operations; the end stages' embedding and LM head;
recompute; tensor, pipeline parallel; the bubble; the optimiser; the data-parallel phases),
in seconds, at the spec's fitted efficiency, or at --eff (the same value for every row, to
see which rows a single value leaves out). docs/validation.md ("By component") quotes it.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ctdsl.api import load  # noqa: E402
from ctdsl.numeric.observe import fit_param, value_text  # noqa: E402

SHORT = {
    "compute": "gemm", "memory_bound": "mem", "end_stages": "ends", "recompute": "recomp", "tensor_parallel": "tp",
    "pipeline_bubble": "bubble", "pipeline_parallel": "p2p", "optimiser": "opt",
}  # fmt: skip


def rows(path: str, eff: float | None = None) -> tuple[float, list[tuple[str, float, float, dict[str, float]]]]:
    """(the efficiency, [(scenario, measured s, predicted s, {term: seconds})])."""
    study = load(path)
    spec = study.spec
    f = spec.fits[0]
    if eff is None:
        fit = fit_param(study.in_scenario(f.scenario, {}).solve(), f, spec.observations[f.observation])
        eff, given = fit.value, {f.param: value_text(fit.value, fit.dim)}
    else:
        given = {f.param: repr(eff)}
    out = []
    for obs in spec.observations:
        scheme = study.in_scenario(obs.scenario, given).solve().schemes[obs.scheme]
        terms = {SHORT.get(t.key.value, t.id.label): float(t.value.value) for t in scheme.terms if float(t.value.value) > 0}
        out.append((obs.scenario, obs.value, float(scheme.step_time.value), terms))
    return eff, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("spec")
    ap.add_argument("--eff", type=float, default=None, help="hold this efficiency for every row instead of the fit")
    a = ap.parse_args()
    eff, found = rows(a.spec, a.eff)
    print(f"{a.spec}: eff = {eff:.4f}")
    for name, measured, predicted, terms in found:
        parts = " ".join(f"{k}={v:.3f}" for k, v in terms.items())
        print(f"{name:20s} measured {measured:8.3f} predicted {predicted:8.3f} {100 * (predicted - measured) / measured:+6.1f}% | {parts}")


if __name__ == "__main__":
    main()
