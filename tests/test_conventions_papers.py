"""The conventions papers use (issue 31), each against numbers worked out by hand below.

The small spec of most tests: a 4-layer Llama-style model, L = 4, d = 64, h = g = 4,
f = 256, V = 1000 (untied embeddings):
  P = L (2 d^2 + 2 d g d/h + 3 d f) + 2 V d
    = 4 (8192 + 8192 + 49152) + 128000 = 390,144;  D = 2 P = 780,288 B.
One dc of two workers on link l (1 GB/s, 1 us, counted once per transfer), device at
1 TFLOP/s x 0.5, 10 tokens: compute = 6 P x 10 / 0.5e12 = 46.81728 us.
"""

from __future__ import annotations

import pytest

from solvekit import solve_text

US = 1e-6
P = 4 * (2 * 64**2 + 2 * 64 * 4 * 16 + 3 * 64 * 256) + 2 * 1000 * 64
D = 2 * P
COMPUTE = 6 * P * 10 / 0.5e12

HEAD = """
model m {{ layers = 4; width = 64; heads = 4; kv_heads = 4; mlp = 256; vocab = 1000; bytes_per_value = 2 B; tokens = 10 }}
device g {{ peak = 1 TFLOP/s; efficiency = 0.5 }}
link l {{ bandwidth = 1 GB/s; latency = 1 us {link} }}
switch s {{}}
dc d {{ workers = 2; device = g; link = l; switch = s }}
"""


def solve(tmp_path, schemes: str, link: str = ""):
    return solve_text(tmp_path, HEAD.format(link=link) + schemes)


def test_hand_model_size(tmp_path):
    sol = solve(tmp_path, "scheme x { payload = dense; collective = ring_allreduce }\n")
    assert P == 390_144
    assert sol.schemes["x"].dense.value == pytest.approx(D, rel=1e-12)


# ---- fragments sized in layers ---------------------------------------------------------------


@pytest.mark.parametrize("size, F", [(2, 2), (3, 2), (1, 4), (4, 1)])
def test_fragments_of_n_layers(tmp_path, size, F):
    """fragment_layers = n gives F = ceil(4 / n) fragments, each synced every H = 4 steps: a ring
    all-reduce of D / F over 2 workers is 2 steps of 1 us + D / (2 F) / 1 GB/s, F of them per 4 steps."""
    sol = solve(tmp_path, f"scheme x {{ payload = dense; collective = ring_allreduce; period = 4; fragment_layers = {size} }}\n"
                f"scheme y {{ payload = dense; collective = ring_allreduce; period = 4; fragments = {F} }}\n")
    tau = 2 * (1 * US + D / (2 * F) / 1e9)
    want = COMPUTE + tau * F / 4
    x, y = sol.schemes["x"], sol.schemes["y"]
    assert x.syncs[-1].fragments == F
    assert x.step_time.value == pytest.approx(want, rel=1e-12)
    assert y.step_time.value == pytest.approx(want, rel=1e-12)


# ---- a given step time ------------------------------------------------------------------------

SYNC = 2 * (1 * US + D / 2 / 1e9)  # a ring all-reduce of D over 2 workers: 2 steps of D / 2


def test_a_scheme_states_its_step(tmp_path):
    """step = 0.8 s is the compute of every step (not 6 P tokens / (peak x efficiency)); the sync
    follows it as before: 0.8 s + 2 (1 us + D / 2 / 1 GB/s)."""
    sol = solve(tmp_path, "scheme x { payload = dense; collective = ring_allreduce; step = 0.8 s }\n"
                "scheme y { payload = dense; collective = ring_allreduce }\n")
    x, y = sol.schemes["x"], sol.schemes["y"]
    assert x.step_time.value == pytest.approx(0.8 + SYNC, rel=1e-12)
    assert y.step_time.value == pytest.approx(COMPUTE + SYNC, rel=1e-12)
    assert x.utilisation.value == pytest.approx(0.8 / (0.8 + SYNC), rel=1e-12)


def test_a_job_states_its_step_and_a_scheme_overrides_it(tmp_path):
    """`step` on the model is every scheme's compute; a scheme's own step wins. With overlap = true
    and H = 4: max(step, sync / 4)."""
    text = HEAD.format(link="").replace("tokens = 10 }", "tokens = 10; step = 150 us }")
    sol = solve_text(tmp_path, text + "scheme x { payload = dense; collective = ring_allreduce; period = 4; overlap = true }\n"
                     "scheme y { payload = dense; collective = ring_allreduce; step = 10 us }\n")
    assert sol.schemes["x"].step_time.value == pytest.approx(max(150 * US, SYNC / 4), rel=1e-12)
    assert sol.schemes["y"].step_time.value == pytest.approx(10 * US + SYNC, rel=1e-12)
