"""A job without a sync (issue 27, item 6): one site, data parallelism inside it or none, and
no scheme. Its step is an implicit scheme `step` (docs/language.md, "A job without a scheme"),
the dense gradient all-reduced in a ring over the site's workers.

By hand: P = 64e9 parameters at 2 B (D = 128e9 B), 1000 tokens a step a replica, 6 P FLOPs a
token, 100 TFLOP/s at efficiency 1, replicas of tp = 4 GPUs: compute 6 x 64e9 x 1000 /
(4 x 100e12) = 0.96 s. One replica: nothing to all-reduce, the step is the compute. Four
replicas: each GPU's shard s = D / 4 = 32e9 B in a ring of n = 4 over the 50 GB/s, 10 us NIC
(through the switch, one segment), reduce-scatter and all-gather (n - 1) (s / n / W + alpha)
each: 2 x 3 x (8e9 / 50e9 + 10e-6) = 0.96006 s.
"""

from __future__ import annotations

import math

import ctdsl
from ctdsl.api import check
from solvekit import solve_text

HEAD = """
model m { params = 64e9; bytes_per_value = 2 B; tokens = 1000 }
device d { peak = 100 TFLOP/s; efficiency = 1 }
link nic { bandwidth = 50 GB/s; latency = 10 us }
switch s {}
replica r { tp = 4; gpus_per_node = 4 }
"""


def test_one_replica_the_step_is_the_compute(tmp_path):
    sol = solve_text(tmp_path, HEAD + "dc a { replica = r; replicas = 1; device = d; link = nic; switch = s }\n")
    assert list(sol.schemes) == ["step"]
    assert math.isclose(sol.schemes["step"].step_time.value, 6 * 64e9 * 1000 / (4 * 100e12), rel_tol=1e-12)


def test_data_parallel_in_the_site_is_all_reduced(tmp_path):
    sol = solve_text(tmp_path, HEAD + "dc a { replica = r; replicas = 4; device = d; link = nic; switch = s }\n")
    sync = 2 * 3 * (32e9 / 4 / 50e9 + 10e-6)
    assert math.isclose(sol.schemes["step"].step_time.value, 0.96 + sync, rel_tol=1e-12)


def test_an_explicit_scheme_is_left_alone(tmp_path):
    text = HEAD + "dc a { replica = r; replicas = 4; device = d; link = nic; switch = s }\nscheme x { payload = dense; collective = ring_allreduce }\n"
    assert list(solve_text(tmp_path, text).schemes) == ["x"]


def test_several_sites_still_need_a_scheme(tmp_path):
    # two dcs joined by a WAN: which sync crosses it is the spec's to say; no implicit step
    text = HEAD + "link wan { bandwidth = 10 GB/s; latency = 1 ms }\ndc a { replica = r; replicas = 1; device = d; link = nic; switch = s }\ndc b : a {}\nwan a <-> b = wan\n"
    path = tmp_path / "two.ct"
    path.write_text(text, encoding="utf-8")
    assert not check(path).diagnostics
    assert list(ctdsl.load(path).solve().schemes) == []
