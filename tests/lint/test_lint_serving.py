"""The serving lint rules' figures (CTL014-CTL016) against solve's closed forms, an independent
method: lint computes the rooflines and capacities with plain floats, solve with sympy.

The study spec's capacities are the sister simulator's published ones (tests/test_serving.py
derives them by hand): decode 28.84 req/s, the 25 GbE link 4.656 req/s plain; the prefill of
2,048 tokens 133.867 ms, a lone decode step 13.529 ms.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ctdsl.api import load
from ctdsl.diagnostics import DiagnosticSink
from ctdsl.check.checker import Checker
from ctdsl.check.loader import load as load_files
from ctdsl.lint.context import Context
from ctdsl.lint.rules import serving as R

ROOT = Path(__file__).resolve().parents[2]
DISAGG = ROOT / "specs" / "llama70b_disagg.ct"


@pytest.fixture(scope="module")
def both():
    sink = DiagnosticSink()
    loaded = load_files(str(DISAGG), sink)
    spec = Checker(loaded, sink, {}).run()
    assert not sink.has_errors
    ctx = Context(spec, loaded.files, loaded.sources, loaded.std)
    return ctx, {r.name: r for r in load(DISAGG).solve().serving}


def test_decode_capacity_is_solves(both):
    ctx, rows = both
    sv = ctx.spec.serving
    got = R.decode_capacity(ctx, sv.pools["decode"], 2048, 256)
    assert got == pytest.approx(rows["disagg/ndr"].capacities["decode"].value, rel=1e-12)
    assert round(got, 2) == 28.84  # the sister's published bound


@pytest.mark.parametrize("handoff", ["ndr", "cpo", "e25", "e25_fp8_gpu", "e25_fp4_gpu"])
def test_link_capacity_is_solves_where_the_transform_is_on_the_gpu(both, handoff):
    ctx, rows = both
    sv = ctx.spec.serving
    h = sv.handoffs[handoff]
    st = R.steps(ctx, sv.instances["node"])
    wire = R._wire(ctx, h, R.sent_bytes(ctx, h, 2048 * st.kv))
    assert 1 / wire == pytest.approx(rows[f"disagg/{handoff}"].capacities["link"].value, rel=1e-12)


def test_a_module_only_slows_the_link(both):
    ctx, rows = both
    sv = ctx.spec.serving
    h = sv.handoffs["e25_fp8_mod"]
    st = R.steps(ctx, sv.instances["node"])
    wire = R._wire(ctx, h, R.sent_bytes(ctx, h, 2048 * st.kv))
    assert 1 / wire >= rows["disagg/e25_fp8_mod"].capacities["link"].value


def test_step_bounds_are_the_published_steps(both):
    ctx, _ = both
    st = R.steps(ctx, ctx.spec.serving.instances["node"])
    assert round(st.prefill(2048) * 1e3, 3) == 133.867
    assert round(st.decode(1, 2048) * 1e3, 3) == 13.529
    assert st.batch(2048, 256) == 194  # tests/test_serving.py: 448,288 tokens of KV / 2,304


def test_the_study_spec_is_flagged_where_its_comments_say(both):
    from ctdsl.lint.runner import lint_one
    from ctdsl.lint.catalogue import RULES

    text = DISAGG.read_text(encoding="utf-8").replace("# ctdsl: ignore[CTL015]", "").replace("# ctdsl: ignore[CTL014] slow links on purpose", "")
    res = lint_one(str(DISAGG), [RULES[c] for c in ("CTL014", "CTL015", "CTL016")], text=text)
    found = sorted((d.code, d.span.line) for d in res.diagnostics)
    lines = text.splitlines()
    e25 = [i + 1 for i, line in enumerate(lines) if line.startswith("handoff e25")]
    batch = [i + 1 for i, line in enumerate(lines) if line.strip().startswith("max_batch")]
    assert found == sorted([("CTL015", batch[0])] + [("CTL014", n) for n in e25])
