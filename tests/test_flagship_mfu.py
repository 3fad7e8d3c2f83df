"""The flagship at Llama 3 405B's published configuration (issue 27 item 8).

Expected values are the published ones: Llama Team, "The Llama 3 Herd of Models"
(arXiv:2407.21783) Table 4, 16,384 H100s at TP 8, PP 16, DP 128: 400 TFLOP/s a GPU, BF16 MFU
41% (400 / 989 = 40.4%); the three runs of the table span 38-43%. Section 3.3.2 gives the
recomputation (none at 8K sequences), the interleaving (one layer a model chunk) and FSDP.
"""

from __future__ import annotations

import ctdsl
from ctdsl.api import check
from ctdsl.model import expr as E
from solvekit import ROOT

PUBLISHED = 400 / 989  # Table 4, 16K GPUs, 8K sequences


def test_one_site_of_16k_gpus_against_the_published_mfu():
    """The replica as section 3.3.2 describes the run (no recomputation, one layer a model chunk,
    FSDP), and the H100's efficiency fitted on Table 4's other row, 8K GPUs at 430 TFLOP/s
    (specs/validation/llama3_405b.ct). The model's MFU counts the attention core's causal half;
    the paper's is PaLM's (6 N + 12 L H Q T a token, the full square). Both are derived here
    from the model's step: within 3 points of the published 41% (400 / 989) on either count."""
    sol = ctdsl.load(ROOT / "specs" / "llama405b_16k.ct").solve()
    r = sol.schemes["step"]
    assert abs(r.mfu.value - PUBLISHED) < 0.03, r.mfu.value
    N, L, HQ, T = 405_853_388_800, 126, 128 * 128, 8192
    tokens, gpus = 16 * 8192 * 128, 16384
    palm = tokens * (6 * N + 12 * L * HQ * T) / (r.step_time.value * gpus * 989e12)
    assert abs(palm - PUBLISHED) < 0.03, palm
    assert palm > r.mfu.value  # the full square counts more FLOPs for the same step


def test_the_flagship_efficiency_is_the_one_the_validation_set_fits():
    """The flagship's eff is the value `ctdsl validate specs/validation/llama3_405b.ct` fits on the
    8K-GPU row (to the 4 figures the specs give it)."""
    fit = ctdsl.load(ROOT / "specs" / "validation" / "llama3_405b.ct").observe().fit
    assert fit.param == "eff" and fit.scenario == "gpus8k"
    assert round(fit.value, 4) == check(str(ROOT / "specs" / "llama405b_16k.ct")).spec.params["eff"].default


def test_the_one_site_replica_is_the_flagships():
    """specs/llama405b_16k.ct runs specs/llama405b_3dc.ct's replica, model and GPU efficiency."""
    one, three = (check(str(ROOT / "specs" / name)).spec for name in ("llama405b_16k.ct", "llama405b_3dc.ct"))
    shown = lambda v: E.render(v) if isinstance(v, E.Expr) else v  # noqa: E731
    keep = lambda r: {k: shown(getattr(r, k)) for k in r.__slots__ if k not in ("span", "spans", "file")}  # noqa: E731
    assert keep(one.replicas["tp8pp16"]) == keep(three.replicas["tp8pp16"])
    assert {k: E.render(v) for k, v in one.models["llama405b"].shape.items()} == {k: E.render(v) for k, v in three.models["llama405b"].shape.items()}
    assert one.params["eff"].default == three.params["eff"].default == 0.5434
