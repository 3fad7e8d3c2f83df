"""examples/notebook.ipynb runs under nbclient, and what it stores stays small.

The notebook is committed without outputs; run here, each output is bounded:
the repr of a Solution under 2,000 characters (the bound derived in
tests/test_notebook_display.py), a Quantity's rich displays short, and the
whole executed notebook far below the 403,677 characters one cell stored when
a Solution's repr was the whole tree.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from backstop import HANG

nbformat = pytest.importorskip("nbformat", reason="the notebook extra (nbformat, nbclient, ipykernel) is not installed")
nbclient = pytest.importorskip("nbclient", reason="the notebook extra is not installed")
pytest.importorskip("ipykernel", reason="the notebook extra is not installed")

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
NOTEBOOK = EXAMPLES / "notebook.ipynb"


def test_the_committed_notebook_has_no_outputs():
    nb = nbformat.read(NOTEBOOK, as_version=4)
    assert all(not c.get("outputs") and c.get("execution_count") is None for c in nb.cells if c.cell_type == "code")


@pytest.fixture(scope="module")
def executed():
    nb = nbformat.read(NOTEBOOK, as_version=4)
    nbclient.NotebookClient(nb, timeout=HANG, kernel_name="python3", resources={"metadata": {"path": str(EXAMPLES)}}).execute()
    return nb


def _outputs(cell) -> dict[str, str]:
    out: dict[str, str] = {}
    for o in cell.outputs:
        assert o.output_type != "error", o
        if o.output_type == "stream":
            out["stream"] = out.get("stream", "") + o.text
        else:
            out.update({k: v if isinstance(v, str) else json.dumps(v) for k, v in o.get("data", {}).items()})
    return out


def test_the_notebook_runs_and_its_outputs_are_small(executed):
    code = [c for c in executed.cells if c.cell_type == "code"]
    solution, scheme, quantity, breakeven, simulation = (_outputs(c) for c in code)
    assert solution["stream"].startswith("<Solution ") and len(solution["stream"]) < 2000
    assert "band_gpu: step 14.66 s (compute binds), time to target 46.84 h" in solution["stream"]
    assert scheme["text/plain"].startswith("<SchemeResult band_gpu: step 14.66 s") and "<table>" in scheme["text/html"]
    assert scheme["text/latex"].startswith("$$")
    # float in base units (s), the unit, and ms: 14.661724732872987 s x 1000
    value, unit, ms = quantity["stream"].split()
    assert unit == "s" and float(ms) == pytest.approx(1000 * float(value), rel=1e-12)
    assert quantity["text/plain"] == "<Quantity 14.66 s>"
    assert quantity["text/html"] == '<span class="ctdsl-quantity">14.66&nbsp;s</span>'
    assert quantity["text/latex"] == r"$14.66\,\mathrm{s}$"
    assert breakeven["text/plain"].startswith("<BreakevenResult band_switch vs adamw over wan_bw")
    assert simulation["text/plain"].startswith("<SimResult ") and len(simulation["text/plain"]) < 2000
    assert "| band_gpu |" in simulation["text/markdown"] and "<table>" in simulation["text/html"]
    stored = len(nbformat.writes(executed))
    assert stored < 20_000, stored  # five code cells, each output under the 2,000-character bound or a table; 9,256 when written
