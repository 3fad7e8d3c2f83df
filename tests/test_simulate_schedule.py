"""The pipeline schedule of one replica chain (ctdsl/simulate/schedule.py), simulated in SimPy,
against schedules derived by hand and against the closed form's pipeline terms.

The expected values are derived here, operation by operation, or from the textbook makespan
of 1F1B with equal operations (Narayanan et al. 2021, section 2.2), not from the code under test.
"""

from __future__ import annotations

import itertools

import pytest

from ctdsl.simulate import schedule as S

# one micro-batch on one stage: forward 1 s, its backward's traffic 0 s and its computation 2 s,
# a point-to-point transfer 0.25 s
F, BT, BC, P = 1.0, 0.0, 2.0, 0.25


def test_one_f_one_b_orders_are_megatrons():
    # pp = 2, m = 3: stage 0 warms up with one forward, stage 1 with none
    assert S.rank_ops(2, 3, 1, 0) == [("F", 0, 0), ("F", 1, 0), ("B", 0, 0), ("F", 2, 0), ("B", 1, 0), ("B", 2, 0)]
    assert S.rank_ops(2, 3, 1, 1) == [("F", 0, 0), ("B", 0, 0), ("F", 1, 0), ("B", 1, 0), ("F", 2, 0), ("B", 2, 0)]
    # interleaved, pp = 2, v = 2, m = 4: rank 0 warms up with (2 - 0 - 1) 2 + (2 - 1) 2 = 4 forwards,
    # micro-batches 0, 1 of chunk 0 then 0, 1 of chunk 1; backwards start with the last chunk
    ops = S.rank_ops(2, 4, 2, 0)
    assert ops[:4] == [("F", 0, 0), ("F", 1, 0), ("F", 0, 1), ("F", 1, 1)]
    assert ops[5] == ("B", 0, 1) and len(ops) == 2 * 4 * 2


def test_pp2_m3_by_hand_blocking_sends_only_where_data_moves():
    """Stage 0 runs F0 F1 B0 F2 B1 B2, stage 1 F0 B0 F1 B1 F2 B2; a forward of stage 0 and a backward
    of stage 1 end with their send (0.25 s), the sender blocked; the data arrives at the send's end.

        stage 0: F0 [0, 1.25]  F1 [1.25, 2.5]  B0 [4.5, 6.5]  F2 [6.5, 7.75]  B1 [7.75, 9.75]  B2 [11, 13]
        stage 1: F0 [1.25, 2.25]  B0 [2.25, 4.5]  F1 [4.5, 5.5]  B1 [5.5, 7.75]  F2 [7.75, 8.75]  B2 [8.75, 11]
    """
    s = S.simulate(2, 3, 1, F, BT, BC, P, S.SENT)
    assert s.makespan == pytest.approx(13.0, rel=1e-15) and s.rank_end == pytest.approx((13.0, 11.0), rel=1e-15)
    assert S.sent_makespan(2, 3, F + BT + BC, P) == 13.0  # (m + 1)(f + b + t_p2p): one transfer a micro-batch


def test_pp2_m3_by_hand_calculons_convention():
    """Every forward ends with a transfer and every backward starts with one: each forward 1.25 s and
    each backward 2.25 s on both stages.

        stage 0: F0 [0, 1.25]  F1 [1.25, 2.5]  B0 [4.75, 7]  F2 [7, 8.25]  B1 [8.25, 10.5]  B2 [11.75, 14]
        stage 1: F0 [1.25, 2.5]  B0 [2.5, 4.75]  F1 [4.75, 6]  B1 [6, 8.25]  F2 [8.25, 9.5]  B2 [9.5, 11.75]

    14 s = (m + pp - 1)(f + b) + (2 m + 2 (pp - 1)) t_p2p = 4 x 3 + 8 x 0.25: the closed form's compute,
    bubble and pipeline-parallel terms."""
    s = S.simulate(2, 3, 1, F, BT, BC, P, S.EVERY)
    assert s.makespan == pytest.approx(14.0, rel=1e-15) and s.rank_end == pytest.approx((14.0, 11.75), rel=1e-15)
    assert S.transfers_every(2, 3, 1) == 8


@pytest.mark.parametrize("pp,m,v", [(1, 3, 1), (3, 1, 1), (3, 5, 1), (4, 2, 1), (2, 4, 2), (4, 8, 2), (3, 6, 3), (4, 4, 2), (2, 2, 4)])
def test_calculons_convention_is_the_textbook_makespan(pp, m, v):
    # equal operations on every rank: (m + (pp - 1)/v) (f + b + 2 v t_p2p) (Narayanan 2021, section 2.2.2)
    f, bt, bc, p = 0.7, 0.2, 1.3, 0.11
    expected = m * (f + bt + bc) if pp == 1 else (m + (pp - 1) / v) * (f + bt + bc + 2 * v * p)
    got = S.simulate(pp, m, v, f, bt, bc, p, S.EVERY).makespan
    assert got == pytest.approx(expected, rel=1e-12)


def test_blocking_sends_derivation_holds_for_every_small_case():
    """sent_makespan's derivation against the SimPy schedule: pp 2..6, m 1..9, several ratios of
    forward, backward and transfer (both regimes of the transfer against the computation)."""
    for pp, m in itertools.product(range(2, 7), range(1, 10)):
        for f, bt, bc, p in [(1.0, 0.0, 2.0, 0.05), (0.3, 0.4, 0.9, 1.7), (2.0, 0.1, 0.5, 0.0)]:
            got = S.simulate(pp, m, 1, f, bt, bc, p, S.SENT).makespan
            assert got == pytest.approx(S.sent_makespan(pp, m, f + bt + bc, p), rel=1e-12, abs=1e-12), (pp, m, f, bt, bc, p)


def test_blocking_sends_expose_three_transfers_less_than_calculon_for_pp_3_and_more():
    # the critical path: micro-batch 0 down and up to stage 1, stage 1's steady state, micro-batch m - 1
    # down and up; the last stage's two forwards and the first stage's backward on it send nothing
    for pp, m in [(3, 4), (4, 8), (8, 16), (5, 2)]:
        every = S.simulate(pp, m, 1, F, BT, BC, P, S.EVERY).makespan
        sent = S.simulate(pp, m, 1, F, BT, BC, P, S.SENT).makespan
        assert (every - sent) / P == pytest.approx(3.0, rel=1e-12)
    assert (S.simulate(4, 1, 1, F, BT, BC, P, S.EVERY).makespan - S.simulate(4, 1, 1, F, BT, BC, P, S.SENT).makespan) / P == pytest.approx(2.0)


def test_interleaved_without_transfers_has_the_bubble_over_v():
    # (m + (pp - 1)/v)(f + b): the interleaved schedule's bubble is (pp - 1)/v micro-batches
    for pp, m, v in [(2, 4, 2), (4, 8, 4), (4, 12, 2)]:
        got = S.simulate(pp, m, v, 1.0, 0.0, 2.0, 0.0, S.SENT).makespan
        assert got == pytest.approx((m + (pp - 1) / v) * 3.0, rel=1e-12)


def test_what_cannot_be_scheduled_says_why():
    assert S.schedulable(2, 3, 1) is None and S.schedulable(4, 8, 2) is None
    assert "whole number" in S.schedulable(2, 2.5, 1)
    assert "multiple of pp" in S.schedulable(4, 6, 2)
