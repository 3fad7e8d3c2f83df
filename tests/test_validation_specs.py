"""The validation sets (specs/validation/): every measured row of the data copied into the repo
(specs/validation/data/*.csv) is a scenario of a spec with its observation, the layout knobs
are params the scenarios set, and docs/validation.md shows the current figures.

The expected values are the published ones, read from the repo's copy of the data, not from
the specs. The mean errors the model reaches are held as bounds (issue 27 item 7, at the
end); the page's tables are regenerated from the model as it is.
"""

from __future__ import annotations

import csv
import sys
from pathlib import Path

import pytest

from ctdsl.api import check
from ctdsl.model import expr as E

ROOT = Path(__file__).resolve().parents[1]
VALIDATION = ROOT / "specs" / "validation"
DATA = VALIDATION / "data"
SETS = sorted(VALIDATION.glob("*.ct"))


@pytest.fixture(scope="module")
def specs():
    out = {}
    for path in SETS:
        r = check(str(path))
        assert r.ok and r.spec is not None, [d.message for d in r.diagnostics]
        out[path.name] = r.spec
    return out


def _rows(name: str) -> list[dict]:
    with open(DATA / name, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def _observed(spec, scenario: str):
    (o,) = [o for o in spec.observations if o.scenario == scenario]
    return o


FITTED = ["korthikanti_full.ct", "korthikanti_selective.ct", "llama3_405b.ct", "vtrain_18_4b.ct", "vtrain_3_6b.ct"]
ACCEPTANCE = ["acceptance_vtrain_175b.ct", "acceptance_vtrain_39_1b.ct"]


def test_the_sets_are_five_fitted_and_two_of_acceptance(specs):
    """Each fitted set fits one efficiency on one row; an acceptance set fits nothing and holds the
    efficiency its cluster's fitted set gives (below)."""
    assert sorted(specs) == sorted(FITTED + ACCEPTANCE)
    for name, spec in specs.items():
        if name in FITTED:
            (fit,) = spec.fits
            assert fit.param == "eff", name
        else:
            assert not spec.fits, name
            assert spec.dcs["cluster"].device == "a100_held"
        assert all(o.source for o in spec.observations)
        assert len(spec.scenarios) == len(spec.observations)  # each row a scenario with its observation


def test_every_vtrain_row_is_in_a_spec_with_its_layout_and_measured_time(specs):
    rows = _rows("vtrain_megatron_a100.csv")
    assert len(rows) == 41
    by_model = {"3.6": specs["vtrain_3_6b.ct"], "18.4": specs["vtrain_18_4b.ct"]}
    seen = {k: set() for k in by_model}
    for i, row in enumerate(rows, start=1):
        spec = by_model[row["Parameters (billion)"]]
        tp, pp, dp, mb = (int(row[k]) for k in ("tensor parallelism", "pipeline parallelism", "data parallelism", "micro batch"))
        matches = [s for s in spec.scenarios.values() if s.values == {"tp_n": tp, "pp_n": pp, "dp_n": dp, "micro": mb}]
        assert len(matches) == 1, (i, row)
        o = _observed(spec, matches[0].name)
        assert o.value == pytest.approx(float(row["iteration time (ms)"]) / 1000, rel=1e-12), (i, row)
        assert f"row {i})" in o.source and "ground_truth_multi.csv" in o.source
        seen[row["Parameters (billion)"]].add(matches[0].name)
        # the model and the job of the row
        (model,) = spec.models.values()
        shape = {k: E.evaluate(v, {}) for k, v in model.shape.items()}
        assert (shape["width"], shape["heads"], shape["layers"], shape["seq"]) == tuple(
            float(row[k]) for k in ("hidden size", "attention heads", "# layers", "sequence length")
        )
        assert E.evaluate(model.batch_tokens, {}) == int(row["global batch"]) * int(row["sequence length"])
        assert tp * pp * dp == int(row["# GPUs"])
    assert {k: len(v) for k, v in seen.items()} == {"3.6": 26, "18.4": 15}
    assert all(seen[k] == set(by_model[k].scenarios) for k in by_model)  # no scenario without its row


def test_every_vtrain_acceptance_row_is_in_a_spec_with_its_layout_and_measured_time(specs):
    """vTrain's other rows (39.1B and 175B on 512 A100s), copied to data/vtrain_acceptance_a100.csv:
    every row a scenario with its measured time, one spec a model; one layout measured twice."""
    rows = _rows("vtrain_acceptance_a100.csv")
    assert len(rows) == 68
    by_model = {"39.1": specs["acceptance_vtrain_39_1b.ct"], "175": specs["acceptance_vtrain_175b.ct"]}
    seen = {k: [] for k in by_model}
    for i, row in enumerate(rows, start=1):
        spec = by_model[row["Parameters (billion)"]]
        tp, pp, dp, mb = (int(row[k]) for k in ("tensor parallelism", "pipeline parallelism", "data parallelism", "micro batch"))
        matches = [s for s in spec.scenarios.values() if s.values == {"tp_n": tp, "pp_n": pp, "dp_n": dp, "micro": mb}]
        (o,) = [o for s in matches for o in spec.observations if o.scenario == s.name and f"row {i})" in o.source]
        assert o.value == pytest.approx(float(row["iteration time (ms)"]) / 1000, rel=1e-12), (i, row)
        assert "ground_truth_multi.csv" in o.source
        seen[row["Parameters (billion)"]].append(o.scenario)
        (model,) = spec.models.values()
        shape = {k: E.evaluate(v, {}) for k, v in model.shape.items()}
        assert (shape["width"], shape["heads"], shape["layers"], shape["seq"]) == tuple(
            float(row[k]) for k in ("hidden size", "attention heads", "# layers", "sequence length")
        )
        assert E.evaluate(model.batch_tokens, {}) == int(row["global batch"]) * int(row["sequence length"])
        assert tp * pp * dp == int(row["# GPUs"]) == 512
    assert {k: len(v) for k, v in seen.items()} == {"39.1": 47, "175": 21}
    assert all(sorted(seen[k]) == sorted(by_model[k].scenarios) for k in by_model)  # each scenario one row
    # the acceptance specs' replica is the fitted vTrain sets' (the same runs' code and cluster)
    ref = specs["vtrain_18_4b.ct"].replicas["layout"]
    fields = ("scaleup_link", "recompute", "sequence_parallel", "zero", "compute", "flash", "tp_async_backward", "loss_scaling")
    for name in ACCEPTANCE:
        rep = specs[name].replicas["layout"]
        assert [_value(getattr(rep, f)) for f in fields] == [_value(getattr(ref, f)) for f in fields], name


def _value(x):
    """A field as compared: an expression by its value (its source position aside), else itself."""
    return x if isinstance(x, (str, bool, int, float, type(None))) else E.evaluate(x, {})


def test_every_table_5_row_is_in_both_recomputation_sets(specs):
    rows = _rows("korthikanti_table5.csv")
    assert [r["model"] for r in rows] == ["22B", "175B", "530B", "1T"]
    for name, column in (("korthikanti_full.ct", "full_recompute_s"), ("korthikanti_selective.ct", "seq_parallel_selective_s")):
        spec = specs[name]
        for row in rows:
            want = {
                "layers_n": int(row["layers"]), "hidden": int(row["hidden"]), "heads_n": int(row["heads"]), "ffn": int(row["ffn"]),
                "pp_n": int(row["pp"]), "chunks": int(row["interleave"]), "micro": int(row["micro_batch"]), "batch": int(row["global_batch"]),
            }  # fmt: skip
            (s,) = [s for s in spec.scenarios.values() if s.values == want]
            o = _observed(spec, s.name)
            assert o.value == pytest.approx(float(row[column]), rel=1e-12), (name, row["model"])
            assert "Table 5" in o.source and row["model"] in o.source
            assert int(row["tp"]) == 8 and int(row["gpus"]) == 8 * int(row["pp"]) and int(row["seq"]) == 2048
        rep = spec.replicas["tp8"]
        assert E.evaluate(rep.tp, {}) == 8 and E.evaluate(spec.models["gpt"].batch_tokens, {"batch": 1}) == 2048


def test_every_8k_sequence_row_of_llama3_table_4_is_a_step_time_under_palms_flops(specs):
    """The paper gives TFLOP/s a GPU under PaLM's MFU (arXiv:2204.02311 Appendix B: 6 N + 12 L H Q T
    FLOPs a token); a step of tokens_per_batch (2^24, "16M") on G GPUs takes tokens x F / (G x
    TFLOP/s). Derived here from the csv and the parameter count, not from the spec."""
    spec = specs["llama3_405b.ct"]
    rows = [r for r in _rows("llama3_table4.csv") if r["seq"] == "8192"]
    assert len(rows) == 2 and len(_rows("llama3_table4.csv")) == 3  # the 131,072-token row is left out (the spec says why)
    N, L, HQ, T = 405_853_388_800, 126, 128 * 128, 8192
    flops = 6 * N + 12 * L * HQ * T  # 2.638057537536e12
    assert flops == 2_638_057_537_536
    assert E.evaluate(spec.models["llama405b"].shape["seq"], {}) == T
    for i, row in enumerate(rows, start=1):
        gpus, dp, per_rank = int(row["gpus"]), int(row["dp"]), int(row["batch_per_dp"])
        tokens = dp * per_rank * T
        assert tokens == 2**24 and gpus == 8 * 16 * dp  # TP 8 x PP 16 a replica
        step = tokens * flops / (gpus * float(row["tflops_per_gpu"]) * 1e12)
        (scenario,) = [s for s in spec.scenarios.values() if s.values == {"dp_n": dp, "per_rank": per_rank}]
        o = _observed(spec, scenario.name)
        assert o.value == pytest.approx(step, rel=1e-4), (row, o.value, step)
        assert f"row {i})" in o.source
        # the TFLOP/s and the MFU agree against the H100's 989 TFLOP/s to their rounding
        assert abs(float(row["tflops_per_gpu"]) / 989 * 100 - float(row["bf16_mfu_percent"])) < 0.6
    rep = spec.replicas["tp8pp16"]
    assert (rep.recompute, E.evaluate(rep.virtual_stages, {}), E.evaluate(rep.zero, {})) == ("none", 8, 2)


def test_the_vtrain_nodes_nvlink_is_the_preset_that_their_measured_all_reduces_give(specs):
    """vTrain's predictor times a tensor-parallel all-reduce of 2 to 8 GPUs from nccl-tests runs on
    its own A100 nodes (VIA-Research/vTrain f8dda84, trace/a100/AR_GPU{n}_1M_1024M_LUT; the rows of 8
    to 256 MiB are copied to data/vtrain_a100_allreduce.csv), and reads the README's 150 GB/s only
    for groups of more than 8 GPUs. A least-squares line t = alpha + 2 (n - 1) / n x S / B through
    those rows, against the nvlink3 preset the sets use: B = 300 GB/s x 0.77 = 231 GB/s, alpha =
    2 (n - 1) ring steps of 5 us."""
    import numpy as np

    rows = _rows("vtrain_a100_allreduce.csv")
    fitted = {}
    for n in (8, 4):
        mine = [r for r in rows if int(r["gpus"]) == n]
        x = np.array([2 * (n - 1) / n * int(r["size_bytes"]) for r in mine])
        y = np.array([int(r["time_ns"]) * 1e-9 for r in mine])
        (alpha, per_byte), *_ = np.linalg.lstsq(np.vstack([np.ones_like(x), x]).T, y, rcond=None)
        fitted[n] = (alpha, 1 / per_byte)
    preset = 300e9 * 0.77
    assert fitted[8][1] == pytest.approx(preset, rel=0.03)  # 227 GB/s
    assert fitted[4][1] == pytest.approx(preset, rel=0.07)  # 216 GB/s: 4 GPUs reach a little less
    assert fitted[8][0] == pytest.approx(14 * 5e-6, abs=20e-6)  # 84 us against 70 us
    assert 25e-6 < fitted[4][0] - 6 * 5e-6 < 40e-6  # 62 us against 30 us: the preset charges TP 4 about 32 us a call less
    for name in ("vtrain_3_6b.ct", "vtrain_18_4b.ct", *ACCEPTANCE):
        assert specs[name].replicas["layout"].scaleup_link == "nvlink3"


def test_the_layout_knobs_are_params_the_scenarios_set(specs):
    """tp, pp, dp (replicas), micro-batch and interleaving are replica and dc fields that
    take a param, so one spec holds every layout of a set."""
    for name in ("vtrain_3_6b.ct", "vtrain_18_4b.ct", *ACCEPTANCE):
        spec = specs[name]
        rep, dc = spec.replicas["layout"], spec.dcs["cluster"]
        assert [x.name for x in (rep.tp, rep.pp, rep.micro_batch, dc.replicas)] == ["tp_n", "pp_n", "micro", "dp_n"]
    for name in ("korthikanti_full.ct", "korthikanti_selective.ct"):
        rep = specs[name].replicas["tp8"]
        assert [x.name for x in (rep.pp, rep.virtual_stages, rep.micro_batch)] == ["pp_n", "chunks", "micro"]


def test_the_recomputation_of_each_table_5_set(specs):
    full, sel = specs["korthikanti_full.ct"].replicas["tp8"], specs["korthikanti_selective.ct"].replicas["tp8"]
    assert (full.recompute, full.sequence_parallel) == ("full", False)
    assert (sel.recompute, sel.sequence_parallel) == ("selective", True)


@pytest.fixture(scope="module")
def observed():
    """Every set solved and scored once, as tools/gen_validation_doc.py does (in this process)."""
    sys.path.insert(0, str(ROOT / "tools"))
    import gen_validation_doc

    return gen_validation_doc, gen_validation_doc.sets()


def test_the_docs_page_shows_the_current_figures(observed):
    tool, results = observed
    text, new = tool.page(results)
    assert new == text, "docs/validation.md is out of date: run python tools/gen_validation_doc.py"


# The mean errors the model reaches (issue 27 item 7), held as bounds just above what it reaches,
# so that a change that makes a set worse fails here. The expected values are the published
# measurements the specs observe (checked against the data above); one efficiency per set is
# fitted on its stated row, as the issue allows, and nothing else. At the time of writing, with
# per-operation compute, node-aware collectives, Megatron's optimiser passes and the backward's
# asynchronous TP collectives (tp_async_backward) that the runs' Megatron code had on, fp16's
# loss-scaling passes of the optimiser (loss_scaling) and the pipeline bubble without the end
# stages' extra (the previous bounds' figures in brackets):
#
#   set                        MAPE            Spearman       best layout
#   korthikanti_full.ct        6.3%  (8.5%)    -              -
#   korthikanti_selective.ct   10.2% (13.1%)   -              -
#   vtrain_3_6b.ct             9.5%  (14.7%)   0.94 (0.96)    right
#   vtrain_18_4b.ct            8.6%  (8.8%)    0.79 (0.80)    wrong
#
# Then tile and wave quantisation on the a100 preset (108 SMs, 256 x 128 tiles either way round:
# NVIDIA's Matrix Multiplication Background guide), the figures the bounds now hold:
#
#   korthikanti_full.ct        2.1%            -              -
#   korthikanti_selective.ct   5.6%            -              -
#   vtrain_3_6b.ct             9.2%            0.95           right
#   vtrain_18_4b.ct            7.3%            0.775          wrong
#
# The vTrain sets' NVLink is the nvlink3 preset, which vTrain's own all-reduce measurements on
# those nodes confirm (test_the_vtrain_nodes_nvlink_...), where it was the README's 150 GB/s read
# as a line rate (vTrain's predictor uses that figure only beyond 8 GPUs). 3.6B's MAPE fell from
# 14.7% to 9.5%; its Spearman moved from 0.96 to 0.94 (the fastest layout still right), 18.4B's
# from 0.80 to 0.79, and their bounds with them.
#
# loss_scaling tightened Table 5's bounds: the fp16 optimiser's copy and unscale passes (12 B a
# parameter more, 18 ms at 22B) are a cost the size of the model does not grow, on the row the
# efficiency is fitted on (8.5% -> 6.6%, 13.1% -> 10.6%). The bubble's fill and drain through the
# other stages, without the last stage's LM head, tightened 18.4B's (9.5% -> 8.8%: its PP 8 rows)
# and Table 5's again (6.3%, 10.2%); it moves 3.6B's PP 2 rows the other way (14.6% -> 14.7%,
# under the bound as it was).
#
# Table 5's bounds were loosened before, on purpose, when the specs came to state the overlap
# their runs' code made (Megatron-LM's LinearWithGradAccumulationAndAsyncCommunication, on by
# default), which hides the backward's TP all-reduces (a third of 22B's TP time) on the row the
# efficiency is fitted on; the fitted efficiency falls (0.72 -> 0.66 full, 0.65 -> 0.61
# selective) and the size trend a single efficiency cannot carry shows at 1T (+13.6%, +20.4%).
# Without the option the four sets gave 3.3%, 9.3%, 17.5% and 10.0% (the optimiser passes alone).
#
# Then the SMs a collective holds beside a GEMM (the nvlink3 preset's 24 NCCL channels of the
# a100's 108 SMs: x(c, w) = max(f c, c - w), overlaps.py) and, with sequence parallelism, the
# backward's gather of each column-parallel layer's input again (one all-reduce equivalent a
# layer, beside the input-gradient GEMM), both from their sources, not fitted:
#
#   korthikanti_full.ct        1.2%  (2.1%)    -              -
#   korthikanti_selective.ct   4.1%  (5.6%)    -              -
#   vtrain_3_6b.ct             9.5%  (9.2%)    0.95           right
#   vtrain_18_4b.ct            7.3%  (7.3%)    0.775          wrong
#
# 3.6B's bound is loosened from 9.5 to 10.0 on purpose: the collectives' share of the SMs costs
# its TP 8 row (the fit) more than its TP 1-4 rows, which were already fast.
# Of the targets (Table 5 within 5% in both modes, vTrain within 8%, Spearman at least 0.9
# and the best layout right for both), Table 5 in both modes, vTrain 18.4B's MAPE and 3.6B's
# Spearman and best layout are met; vTrain 3.6B's MAPE (9.5%) and 18.4B's ranking (0.775, the
# fastest layout fourth) are not.
BOUNDS = {  # set -> (MAPE bound in percent, Spearman at least, the fastest layout predicted right)
    "korthikanti_full.ct": (1.5, None, None),
    "korthikanti_selective.ct": (4.5, None, None),
    "vtrain_3_6b.ct": (10.0, 0.95, True),
    "vtrain_18_4b.ct": (7.5, 0.77, None),
    # One row predicted, from the other: 16K GPUs from the fit on 8K. The model gives it to 0.0002%,
    # inside the published TFLOP/s' rounding (400 and 430, given to 2-3 figures: about 1%), so
    # the bound is that rounding, not the agreement. Held at V = 4 instead of the paper's one
    # layer a chunk (V = 8) the same set gives +4.5%, at V = 2 +12.3%.
    "llama3_405b.ct": (1.5, None, None),
    # Acceptance (nothing fitted: the efficiency held at vtrain_18_4b.ct's fit, 0.70204): 39.1B
    # 7.5%, Spearman 0.69, the fastest layout right; 175B 8.2%, Spearman 0.84, the fastest wrong.
    # (Held at the fit before the collectives' SM share, 0.68871: 7.6%, 0.73; 9.3%, 0.83.)
    "acceptance_vtrain_39_1b.ct": (8.0, 0.68, True),
    "acceptance_vtrain_175b.ct": (8.5, 0.83, None),
}


def test_the_acceptance_sets_hold_the_efficiency_their_cluster_fits(observed, specs):
    """The acceptance sets' A100 fp16 efficiency is vtrain_18_4b.ct's fit, as the model makes it
    now: a change that moves the fit fails here until the held value moves with it."""
    _, results = observed
    (fit,) = [obs.fit for obs in results if Path(obs.path).name == "vtrain_18_4b.ct"]
    for name in ACCEPTANCE:
        held = E.evaluate(specs[name].devices["a100_held"].efficiency, {})
        assert held == pytest.approx(fit.value, abs=5e-6), (name, held, fit.value)


def test_mean_errors_and_rank_correlations_hold(observed):
    _, results = observed
    got = {Path(obs.path).name: obs for obs in results}
    assert sorted(got) == sorted(BOUNDS)
    for name, (mape, rho, best) in BOUNDS.items():
        obs = got[name]
        assert obs.mape is not None and obs.mape < mape, (name, obs.mape)
        if rho is not None:
            (group,) = obs.groups
            assert group.spearman is not None and group.spearman >= rho, (name, group.spearman)
        if best:
            (group,) = obs.groups
            assert group.best_right, (name, group.best_measured, group.best_predicted)


def test_the_by_component_table_is_what_the_model_gives_at_one_efficiency():
    """docs/validation.md ("By component") quotes every Table 5 row at one efficiency of 0.70,
    as tools/validation_components.py prints it: the page's figures are the model's, and each
    row's terms add up to its step."""
    sys.path.insert(0, str(ROOT / "tools"))
    import validation_components

    text = (ROOT / "docs" / "validation.md").read_text(encoding="utf-8")
    table = text[text.index("| row | full: measured |"):]
    lines = {ln.split("|")[1].strip(): [c.strip() for c in ln.split("|")[2:8]] for ln in table.splitlines()[2:6]}
    for col, name in ((0, "korthikanti_full.ct"), (3, "korthikanti_selective.ct")):
        _, found = validation_components.rows(str(VALIDATION / name), 0.70)
        for scenario, measured, predicted, terms in found:
            row = lines[scenario.removeprefix("gpt").upper()]
            assert float(row[col + 1].removesuffix(" s")) == pytest.approx(predicted, abs=0.0051 * max(1, predicted / 10)), (name, scenario)
            assert row[col + 2] == f"{100 * (predicted - measured) / measured:+.1f}%", (name, scenario)
            assert sum(terms.values()) == pytest.approx(predicted, rel=1e-9)


def test_the_residuals_by_layout_are_what_the_model_leaves_on_the_published_rows():
    """docs/validation.md ("What the TP 2 and TP 4 rows lack") groups vTrain 3.6B's rows by
    layout. The layouts, their rows, the measured times and the number of micro-batches of each
    row (global batch / dp / micro-batch) come from the repo's copy of the data; the predictions
    from the model at the fit (tools/validation_components.py); the grouping, medians and ranges
    are done here again, independently of the tool's --by, which must agree."""
    import statistics

    sys.path.insert(0, str(ROOT / "tools"))
    import validation_components

    from ctdsl.api import load

    study = load(str(VALIDATION / "vtrain_3_6b.ct"))
    _, found = validation_components.solved(study)  # every row solved once, for both checks below
    predicted = {name: p for name, _, p, _, _ in found}
    groups: dict[tuple[int, int, int], list[tuple[float, int]]] = {}
    for r in _rows("vtrain_megatron_a100.csv"):
        if r["Parameters (billion)"] != "3.6":
            continue
        tp, dp, pp, mb = (int(r[k]) for k in ("tensor parallelism", "data parallelism", "pipeline parallelism", "micro batch"))
        name = f"tp{tp}_pp{pp}_dp{dp}_mb{mb}"
        micro_batches = int(r["global batch"]) // dp // mb
        groups.setdefault((tp, pp, dp), []).append((float(r["iteration time (ms)"]) / 1e3 - predicted[name], micro_batches))

    by = validation_components.grouped(study, found, ["tp_n", "pp_n", "dp_n"])
    assert [tuple(int(v) for v in key) for key, *_ in by] == list(groups)
    text = (ROOT / "docs" / "validation.md").read_text(encoding="utf-8")
    table = text[text.index("| layout | data-parallel members a node |"):].split("\n\n")[0].splitlines()[2:]
    assert len(table) == len(groups)
    for line, (key, members), (_, names, median, least, most, sync) in zip(table, groups.items(), by, strict=True):
        cells = [c.strip() for c in line.split("|")[1:-1]]
        tp, pp, _ = key
        assert cells[0].startswith(f"TP {tp}" + (f" x PP {pp}" if pp > 1 else "")), (cells, key)
        assert int(cells[1].split()[0]) == (8 // tp if tp <= 8 else 1)
        residuals = [r for r, _ in members]
        assert len(names) == len(residuals) == int(cells[2])
        assert median == pytest.approx(statistics.median(residuals), abs=1e-9)
        assert (least, most) == pytest.approx((min(residuals), max(residuals)), abs=1e-9)
        assert cells[4] == f"{statistics.median(residuals):+.2f}", (cells, key)
        assert float(cells[5]) == pytest.approx(sync, abs=0.0006), (cells, key)
        # the range at 1 to 8 micro-batches, as the page gives it (its first two figures)
        few = [r for r, m in members if m <= 8 and not (tp == 8 and m == 1)]
        low, high = (float(x.replace("+", "")) for x in cells[3].split()[0:3:2])
        assert (low, high) == pytest.approx((min(few), max(few)), abs=0.0051), (cells, key)
        assert max(few) - min(few) <= 0.16 + 0.005  # "moves by at most 0.16 s"
