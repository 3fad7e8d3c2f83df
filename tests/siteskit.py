"""Shared by the tests of dcs of several sites (test_sites.py) and the explorer's browser tests:
a K-site spec with a break-even over K, and its step time derived by hand (see test_sites.py's
opening for the numbers)."""

from __future__ import annotations

REL = 1e-12
LAT_IN = 10e-6
LAT_ACROSS = 10e-6 + 1e-3 + 10e-6
D = 128e9
S = 16e9  # a GPU's shard
WAN = 400e9  # four 100 GB/s links

HEAD = """
model m { params = 64e9; bytes_per_value = 2 B; tokens = 1000 }
device d { peak = 100 TFLOP/s; efficiency = 1; static_power = 300 W }
link nic { bandwidth = 50 GB/s; latency = 10 us }
link wan { bandwidth = 100 GB/s; latency = 1 ms; energy_per_bit = 10 pJ/bit }
switch s { power = 500 W }
replica r { tp = 4; pp = 2 }
"""

BREAKEVEN = HEAD.replace("tokens = 1000", "batch_tokens = 4194304") + """
param K = 4 in 2 .. 64 log 6
dc a { replica = r; replicas = 16; sites = K; device = d; link = nic; switch = s }
wan a <-> a = wan * 4
scheme adamw { payload = dense; collective = hier_allreduce; steps = 10000 }
scheme diloco { payload = dense; collective = hier_allreduce; period = 20; steps = 11000 }
breakeven diloco vs adamw over K
"""


def step(K: float, H: float) -> float:
    """The step time of a scheme with sync period H at K sites: a fixed batch of 2^22 tokens split
    over the K x 128 GPUs, so compute falls as 1/K; the in-site rings do not change with K, and the
    all-reduce across the sites takes 2 (K - 1) steps in which the WAN binds (a site's 128 slices
    of s / (16 K) over 400 GB/s)."""
    compute = 6 * 64e9 * 4194304 / (K * 128 * 100e12)
    sync = 2 * 15 * (S / 16 / 50e9 + LAT_IN) + 2 * (K - 1) * (LAT_ACROSS + 128 * S / (16 * K) / WAN)
    return compute + sync / H
