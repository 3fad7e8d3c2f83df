"""Every published figure of domain.md section 8, reproduced by a spec in examples/.

Each test solves the example and compares with the figure to the precision it is
printed with. The figures come from the reference, not from this code.
"""

from __future__ import annotations

from solvekit import solve_file


def phase_seconds(result, scheme: str) -> float:
    """Time of a scheme's only sync phase: one update crossing one link."""
    (phase,) = result.schemes[scheme].phases
    return phase.time.value


# ---- update sizes ----------------------------------------------------------------


def test_llama3_70b_bf16_update_is_141_10_gb():
    r = solve_file("examples/fig_update_sizes.ct")
    assert round(r.schemes["update_70b"].payload.value / 1e9, 2) == 141.10


def test_llama3_8b_bf16_update_is_16_06_gb():
    r = solve_file("examples/fig_update_sizes.ct")
    assert round(r.schemes["update_8b"].payload.value / 1e9, 2) == 16.06


# ---- ring all-reduce bytes per worker -------------------------------------------------


def test_ring_allreduce_8b_8_workers_sends_28_10_gb():
    r = solve_file("examples/fig_ring_8.ct")
    assert round(r.schemes["ring"].wire.value / 1e9, 2) == 28.10


def test_ring_allreduce_8b_64_workers_sends_31_62_gb():
    r = solve_file("examples/fig_ring_64.ct")
    assert round(r.schemes["ring"].wire.value / 1e9, 2) == 31.62


# ---- one update over one link ------------------------------------------------------------


def test_8b_update_over_nvlink4_takes_35_7_ms():
    r = solve_file("examples/fig_one_link_nvlink4.ct")
    assert round(phase_seconds(r, "update_8b") * 1e3, 1) == 35.7


def test_70b_update_over_nvlink4_takes_313_6_ms():
    r = solve_file("examples/fig_one_link_nvlink4.ct")
    assert round(phase_seconds(r, "update_70b") * 1e3, 1) == 313.6


def test_70b_update_over_infiniband_ndr_takes_2822_1_ms():
    r = solve_file("examples/fig_one_link_ndr.ct")
    assert round(phase_seconds(r, "update_70b") * 1e3, 1) == 2822.1


def test_70b_update_over_100gbe_takes_11288_4_ms():
    r = solve_file("examples/fig_one_link_100gbe.ct")
    assert round(phase_seconds(r, "update_bf16") * 1e3, 1) == 11288.4


def test_70b_update_at_2_bits_over_100gbe_takes_1411_1_ms():
    r = solve_file("examples/fig_one_link_100gbe.ct")
    assert round(phase_seconds(r, "update_2bit") * 1e3, 1) == 1411.1


# ---- the module's budget per byte -----------------------------------------------------------


def test_module_budget_of_10_gflops_is_0_40_flop_per_byte():
    r = solve_file("examples/fig_module_budget.ct", {"budget": "10 GFLOP/s"})
    assert round(r.schemes["band_module"].module.budget_per_byte.value, 2) == 0.40


def test_module_budget_of_99_gflops_is_3_96_flop_per_byte():
    r = solve_file("examples/fig_module_budget.ct", {"budget": "99 GFLOP/s"})
    assert round(r.schemes["band_module"].module.budget_per_byte.value, 2) == 3.96


# ---- KV hand-off ---------------------------------------------------------------------------


def test_kv_handoff_of_2048_tokens_of_llama3_8b_is_268_4_mb():
    r = solve_file("examples/fig_kv_handoff.ct")
    assert round(r.models["m8b"].kv_handoff.value / 1e6, 1) == 268.4
