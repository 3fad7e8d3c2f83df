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

from solvekit import C, solve_text

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


# ---- latency along a route: per segment, or the route's end-to-end figure once -------------------

SITES = """
model m {{ params = 1e9; bytes_per_value = 2 B; tokens = 1000 }}
device g {{ peak = 100 TFLOP/s; efficiency = 1 }}
link ib {{ bandwidth = 50 GB/s; latency = 10 us; energy_per_bit = 15 pJ/bit }}
link wan {{ bandwidth = 12.5 GB/s; latency = 20 us; energy_per_bit = 15 pJ/bit; counted = {counted} }}
switch s {{}}
dc a {{ workers = 1; device = g; link = ib; switch = s }}
dc b {{ workers = 1; device = g; link = ib; switch = s }}
wan a <-> b = wan
scheme x {{ payload = dense; collective = allgather }}
"""


@pytest.mark.parametrize(
    "counted, latency, pj",
    [
        # a.w0 -> a.s -> b.s -> b.w0: ib, wan, ib: three segments, 10 + 20 + 10 us; energy on each
        ("transfer", 40 * US, 15 + 15 + 15),
        # the WAN's figure is the route's end to end (the seed study's 20 us): once, and the ib
        # segments add neither latency nor energy
        ("route", 20 * US, 15),
    ],
)
def test_a_cross_site_transfer_under_each_latency_convention(tmp_path, counted, latency, pj):
    """allgather of two workers in two sites: one step, each sends D = 2 GB to the other across the
    WAN: latency + 2e9 / 12.5e9 = latency + 0.16 s; energy 2 transfers x 16e9 bits x pj."""
    sol = solve_text(tmp_path, SITES.format(counted=counted))
    r = sol.schemes["x"]
    (ph,) = r.phases
    assert ph.latency.value == pytest.approx(latency, rel=1e-12)
    assert ph.time.value == pytest.approx(latency + 0.16, rel=1e-12)
    assert r.energy_parts["links"].value == pytest.approx(2 * 16e9 * pj * 1e-12, rel=1e-12)


# ---- a module's latency: once, in its own time ---------------------------------------------------

MODULE_SPEC = """
model m {{ params = 1e9; bytes_per_value = 2 B; tokens = 1000 }}
device g {{ peak = 100 TFLOP/s; efficiency = 1 }}
link ib {{ bandwidth = 50 GB/s; latency = 10 us }}
pluggable p {{ port {{ rate = 25 GB/s }}; latency = 1 us; ops = [dct] {counted} }}
switch s {{}}
dc a {{ workers = 2; device = g; link = ib; switch = s; pluggable = p }}
scheme x {{ payload = band; fraction = 1/16; cost = 0 FLOP/B; collective = allgather; at = p }}
"""


@pytest.mark.parametrize("counted, transfer", [("", 10 * US), ("; counted = crossing", 12 * US)])
def test_module_latency_counted_once(tmp_path, counted, transfer):
    """w0 -> w0.p -> s -> w1.p -> w1 with a band of D / 16 = 125 MB: once (the default) the
    transfer pays the ib's 10 us and no module latency (the seed's 10 us); per crossing 1 + 10 + 1
    = 12 us. The module's own time is D / 25 GB/s + 1 us either way: its latency once."""
    sol = solve_text(tmp_path, MODULE_SPEC.format(counted=counted))
    r = sol.schemes["x"]
    (ph,) = r.phases
    assert ph.latency.value == pytest.approx(transfer, rel=1e-12)
    # the stream 125e6 B on the port edge at 25 GB/s is the slowest share: 5 ms
    assert ph.time.value == pytest.approx(transfer + 125e6 / 25e9, rel=1e-12)
    assert r.components[C("transform")].value == pytest.approx(2e9 / 25e9 + 1 * US, rel=1e-12)


# ---- bytes to target ------------------------------------------------------------------------------

BYTES = """
model m { params = 1e9; bytes_per_value = 2 B; tokens = 1000 }
device g { peak = 100 TFLOP/s; efficiency = 1 }
link ib { bandwidth = 50 GB/s; latency = 10 us }
link wan { bandwidth = 12.5 GB/s; latency = 20 us }
switch s {}
dc a { workers = 2; device = g; link = ib; switch = s }
dc b : a {}
wan a <-> b = wan
scheme dense { payload = dense; collective = hier_allreduce; steps = 1000 }
scheme diloco : dense { period = 100; steps = 1200 }
scheme fp4 : diloco { payload = quantise; bits = 4 b; fragments = 4; delay = 1 }
baseline dense
"""


def test_bytes_to_target_dense_diloco_fp4_streaming(tmp_path):
    """hier_allreduce over 2 dcs of L = 2 workers, payload c per sync:
    a worker sends c / 2 (reduce-scatter, L - 1 = 1 step of c / L) + 2 x c / 4 (all-reduce of its
    shard across N_dc = 2 dcs: 2 (N_dc - 1) = 2 steps of c / (L N_dc)) + c / 2 (all-gather) = 1.5 c.
      dense:  c = 2 GB, every step, 1000 steps: 1000 x 3 GB = 3e12 B
      diloco: c = 2 GB every 100 steps, 1200 steps: 12 syncs x 3 GB = 3.6e10 B
      fp4:    c = 1e9 x 4 bits = 0.5 GB (4 fragments of 1/4, each every 100 steps: the whole
              payload per 100 steps), 1200 steps: 12 x 0.75 GB = 9e9 B
    The WAN: each of the 2 workers of a dc sends 2 x c / 4 across per sync, both ways: 2 dcs x 2
    workers x c / 2 = 2 c per sync on the WAN links: dense 1000 x 4e9, diloco 12 x 4e9, fp4 12 x 1e9."""
    sol = solve_text(tmp_path, BYTES)
    got = {n: sol.schemes[n].bytes_to_target.value for n in ("dense", "diloco", "fp4")}
    assert got == pytest.approx({"dense": 3e12, "diloco": 3.6e10, "fp4": 9e9}, rel=1e-12)
    wan = {n: sol.schemes[n].class_bytes_to_target["wan"].value for n in ("dense", "diloco", "fp4")}
    assert wan == pytest.approx({"dense": 4e12, "diloco": 4.8e10, "fp4": 1.2e10}, rel=1e-12)
    # the ratios papers quote: DiLoCo 3e12 / 3.6e10 = 83.3x fewer bytes, FP4 streaming 333.3x
    table = next(t for t in sol_tables(sol) if t.title == "Time and energy to target")
    assert table.header[-3:] == ["bytes to target", "across sites", "across sites vs dense"]
    rows = {row[0]: row for row in table.rows}
    assert rows["diloco"][-1] == f"{4.8e10 / 4e12:.2f}x" and rows["fp4"][-1] == f"{1.2e10 / 4e12:.2f}x"
    data = sol.to_json()
    fp4 = next(s for s in data["schemes"] if s["name"] == "fp4")
    assert fp4["bytes_to_target"] == pytest.approx(9e9, rel=1e-12)
    assert fp4["link_bytes_to_target"]["wan"] == pytest.approx(1.2e10, rel=1e-12)


def sol_tables(sol):
    from ctdsl.report.tables import target_table

    return [target_table(sol)]


# ---- per-layer readiness of Streaming DiLoCo fragments -----------------------------------------

W = 2 * COMPUTE / 3  # the backward pass without the timeline: 2/3 of the compute


@pytest.mark.parametrize("bandwidth", [1e9, 100e9])
@pytest.mark.parametrize("ready, order, hidden", [
    # worst case: both fragments start at the step's end
    ("step", "strided", (0, 0)),
    # strided, layers {1, 3} and {2, 4}: the backward pass runs 4, 3, 2, 1, each layer W / 4;
    # fragment 1 is done at the end (lowest layer 1: nothing left to hide in), fragment 2 when
    # layer 2 is, with layer 1's W / 4 left
    ("layer", "strided", (0, 1 / 4)),
    # sequential, layers {1, 2} and {3, 4}: fragment 2 is done after layers 4 and 3, with W / 2 left
    ("layer", "sequential", (0, 1 / 2)),
])
def test_fragments_ready_per_layer(tmp_path, bandwidth, ready, order, hidden):
    """2 fragments of the 4-layer model, H = 4, no delay: a fragment's sync is a ring all-reduce of
    D / 2 over 2 workers, tau = 2 (1 us + D / 4 / b); each fragment once every 4 steps exposes
    max(0, tau - what is left of the backward pass when its layers are done)."""
    text = HEAD.format(link="").replace("bandwidth = 1 GB/s", f"bandwidth = {bandwidth / 1e9:g} GB/s")
    sol = solve_text(tmp_path, text + f"scheme x {{ payload = dense; collective = ring_allreduce; period = 4; fragments = 2; ready = {ready}; fragment_order = {order} }}\n")
    tau = 2 * (1 * US + D / 4 / bandwidth)
    want = COMPUTE + sum(max(0.0, tau - h * W) for h in hidden) / 4
    assert sol.schemes["x"].step_time.value == pytest.approx(want, rel=1e-12)


# ---- the bandwidth a 100B model's Streaming DiLoCo needs for 99% utilisation ----------------------

STUDY = """
param wan_bw = 1 GB/s in 0.001 GB/s .. 1000 GB/s
model big {{ layers = 80; width = 9216; heads = 72; kv_heads = 8; mlp = 36864; vocab = 128256; bytes_per_value = 2 B; tokens = 1000 }}
device g {{ peak = 1000 TFLOP/s; efficiency = 0.5 }}
link ib {{ bandwidth = 1000 GB/s; latency = 0 us }}
link wan {{ bandwidth = wan_bw; latency = 0 us }}
switch s {{}}
dc a {{ workers = 1; device = g; link = ib; switch = s }}
dc b : a {{}}
wan a <-> b = wan
scheme x {{ payload = quantise; bits = 4 b; collective = ring_allreduce; period = 100; fragment_layers = 5; step = 1 s; ready = {ready}; fragment_order = sequential }}
"""


def hand_bandwidth_for(cu: float, layered: bool) -> float:
    """By hand: T = 1 s given, w = 2/3 s, H = 100, F = 80 / 5 = 16 sequential fragments of n = 5
    layers, c = P x 0.5 B (FP4). A fragment's sync over two workers, one each side of the WAN, is a
    ring all-reduce of c / F: 2 steps of c / (2 F) across the WAN, no latency: tau = c / (F b).
    CU = T / (T + sum_k max(0, tau - e_k) / H) = cu  <=>  sum_k max(0, tau - e_k) = H T (1/cu - 1) = S.
    Worst case (every e_k = 0): tau = S / F. Per layer: e_k = w (k n) / L = k / 24 s for k = 0..15;
    with tau between e_K and e_K+1, (K + 1) tau - sum_{k <= K} e_k = S."""
    P = 80 * (2 * 9216**2 + 2 * 9216 * 8 * 128 + 3 * 9216 * 36864) + 2 * 128256 * 9216
    c, F, S = P * 0.5, 16, 100 * 1.0 * (1 / cu - 1)
    e = [(2 / 3) * k * 5 / 80 for k in range(F)]
    if not layered:
        tau = S / F
    else:
        for K in range(F):
            tau = (S + sum(e[: K + 1])) / (K + 1)
            if e[K] <= tau and (K + 1 == F or tau < e[K + 1]):
                break
    return c / (F * tau)


def test_per_layer_readiness_cuts_the_bandwidth_for_99_percent(tmp_path):
    """The model: P = 80 (2 d^2 + 2 d g d/h + 3 d f) + 2 V d = 99,000,778,752 (99B). For CU = 99%,
    the worst case (every fragment ready at the step's end) needs b_step, the per-layer schedule
    b_layer; at each, ctdsl's utilisation is 99%, and b_step / b_layer is the ratio worked out by
    hand: with S = 100 / 99 s, b_step = c F / S, tau_layer = (S + 21 / 24) / 7 (K = 6)."""
    b_step, b_layer = hand_bandwidth_for(0.99, False), hand_bandwidth_for(0.99, True)
    S = 100 / 99
    assert b_step / b_layer == pytest.approx(((S + 21 / 24) / 7) / (S / 16), rel=1e-12)
    assert round(b_step / b_layer, 2) == 4.27
    for ready, b in (("step", b_step), ("layer", b_layer)):
        sol = solve_text(tmp_path, STUDY.format(ready=ready), overrides={"wan_bw": f"{b / 1e9!r} GB/s"})
        assert sol.schemes["x"].utilisation.value == pytest.approx(0.99, rel=1e-9)
    # and the other way round: at b_layer, the worst case falls short of 99%
    sol = solve_text(tmp_path, STUDY.format(ready="step"), overrides={"wan_bw": f"{b_layer / 1e9!r} GB/s"})
    assert sol.schemes["x"].utilisation.value < 0.97


@pytest.mark.parametrize("ready, order", [("step", "strided"), ("layer", "strided"), ("layer", "sequential")])
def test_the_simulation_releases_fragments_per_layer(tmp_path, ready, order):
    """The step simulation (no noise) releases fragment j's sync e_j before the step's end and its
    mean step is the closed form's, for each readiness: an independent, event-by-event schedule."""
    import ctdsl
    from ctdsl.simulate import steps
    from ctdsl.simulate.plan import build_plans, free_spec

    path = tmp_path / "spec.ct"
    path.write_text(HEAD.format(link="") + f"scheme x {{ payload = dense; collective = ring_allreduce; period = 4; fragments = 2; ready = {ready}; fragment_order = {order} }}\n", encoding="utf-8")
    p = build_plans(free_spec(ctdsl.load(path).spec), ["x"])["x"]
    r = steps.run(p, 1, 0, 16, 4, load=False, jitter=False)
    tau = 2 * (1 * US + D / 4 / 1e9)
    hidden = {"step": (0, 0), "strided": (0, 1 / 4), "sequential": (0, 1 / 2)}[order if ready == "layer" else "step"]
    want = COMPUTE + sum(max(0.0, tau - h * W) for h in hidden) / 4
    assert p.free_step == pytest.approx(want, rel=1e-12)
    assert r.step == pytest.approx(want, rel=1e-9)


# ---- bucket rules ----------------------------------------------------------------------------------


def fifo(releases: list[float], tau: float) -> float:
    """When the last of buckets released at `releases` ends on one first-in first-out link, each taking tau."""
    t = 0.0
    for r in releases:
        t = max(t, r) + tau
    return t


@pytest.mark.parametrize("bandwidth", [1e9, 100e9])
def test_one_bucket_per_layer(tmp_path, bandwidth):
    """bucket = layer: the 4-layer model's gradient in 4 buckets, one as the backward pass passes each
    layer, at W / 4, 2 W / 4, 3 W / 4 and W; each a ring all-reduce of D / 4 over 2 workers, 2 steps of
    1 us + D / 8 / b. The step waits for what the FIFO link still has to do after W."""
    text = HEAD.format(link="").replace("bandwidth = 1 GB/s", f"bandwidth = {bandwidth / 1e9:g} GB/s")
    sol = solve_text(tmp_path, text + "scheme x { payload = dense; collective = ring_allreduce; overlap = backward; bucket = layer }\n")
    r = sol.schemes["x"]
    tau = 2 * (1 * US + D / 8 / bandwidth)
    exposed = fifo([W * k / 4 for k in range(1, 5)], tau) - W
    assert r.syncs[0].buckets == 4
    assert r.step_time.value == pytest.approx(COMPUTE + exposed, rel=1e-12)


def test_a_child_scheme_drops_an_inherited_bucket(tmp_path):
    """bucket = none in a scheme that extends one with a bucket: the base's 40 MB no longer applies, so
    the child can leave the backward pass (no CT113), or keep it with the default 25 MB."""
    sol = solve(tmp_path, "scheme a { payload = dense; collective = ring_allreduce; overlap = backward; bucket = layer }\n"
                "scheme b : a { overlap = false; bucket = none }\n"
                "scheme c : a { bucket = none }\n")
    b, c = sol.schemes["b"], sol.schemes["c"]
    assert b.step_time.value == pytest.approx(COMPUTE + SYNC, rel=1e-12)  # in series: compute, then the sync
    # the default 25 MB: ceil(780,288 / 25e6) = 1 bucket, released at W: the whole sync after the backward pass
    assert c.syncs[0].buckets == 1
    assert c.step_time.value == pytest.approx(COMPUTE + SYNC, rel=1e-12)


# ---- the utilisation-target table of docs/cost-model.md ---------------------------------------------

PAPER_SPEC = "tests/data/paper_conventions.ct"
SCHEMES = ("dp", "diloco", "streaming", "overlapped", "fp4")
SIZES = (("1b", "1B"), ("10b", "10B"), ("100b", "100B"))


def paper_table(sol) -> str:
    """The docs table: a row per model and scheme, a column per utilisation target."""
    from ctdsl import units as U

    cells = {}
    for t in sol.targets:
        cells[(t.scheme, f"{t.target:g}")] = U.format_quantity(t.roots[0].value, t.dim) if t.roots else "never in range"
    lines = ["| model | scheme | CU 0.5 | CU 0.8 | CU 0.9 | CU 0.95 | CU 0.99 |", "|---|---|---|---|---|---|---|"]
    for key, size in SIZES:
        for s in SCHEMES:
            row = [cells[(f"{s}_{key}", u)] for u in ("0.5", "0.8", "0.9", "0.95", "0.99")]
            lines.append(f"| {size} | {s} | " + " | ".join(row) + " |")
    return "\n".join(lines)


def test_the_paper_conventions_table_in_the_docs_is_true():
    """docs/cost-model.md's table of 15 rows by 5 targets is what `ctdsl solve` gives for the one spec
    (tests/data/paper_conventions.ct), every assumption stated in it."""
    from solvekit import ROOT, solve_file

    text = (ROOT / "docs" / "cost-model.md").read_text(encoding="utf-8")
    block = text[text.index("<!-- paper conventions table -->") + len("<!-- paper conventions table -->"):text.index("<!-- end paper conventions table -->")]
    assert block.strip() == paper_table(solve_file(PAPER_SPEC))
