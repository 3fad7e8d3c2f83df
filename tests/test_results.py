"""The solver's result tree is data: frozen, every number computed, shown by the report layer."""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path

import pytest

import ctdsl
from ctdsl.results.quantity import Quantity

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def sol():
    return ctdsl.load(ROOT / "specs/llama70b_wan.ct").solve()


def test_results_cannot_be_changed(sol):
    r = sol.schemes["adamw"]
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.binding = "sync"
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.step_time.value = 0.0
    with pytest.raises(TypeError):
        r.components[r.binding] = r.step_time
    with pytest.raises(TypeError):
        sol.schemes.pop("adamw")
    assert isinstance(r.phases, tuple) and isinstance(sol.breakevens, tuple)


def test_every_quantity_is_computed(sol):
    """Each Quantity in the tree holds a float value already: readers evaluate nothing."""
    seen = 0

    def walk(x):
        nonlocal seen
        if isinstance(x, Quantity):
            assert isinstance(x.value, float) and math.isfinite(x.value)
            seen += 1
        elif dataclasses.is_dataclass(x) and not isinstance(x, type):
            for f in dataclasses.fields(x):
                if f.name not in ("symbols", "result", "spec"):
                    walk(getattr(x, f.name))
        elif isinstance(x, dict):
            for v in x.values():
                walk(v)
        elif isinstance(x, (tuple, list)):
            for v in x:
                walk(v)

    walk(sol)
    assert seen > 500


def test_the_tree_shows_itself_through_the_report_layer(sol):
    r = sol.schemes["band_switch"]
    assert r._repr_latex_().startswith("$$")
    assert "<table>" in r._repr_html_()
    data = sol.to_json()
    assert json.loads(json.dumps(data))["schema"] == "ctdsl.solve/2"
    assert "Bytes per sync" in str(sol)
    assert len(repr(sol)) < 2000  # a few lines: the bound derived in tests/test_notebook_display.py
