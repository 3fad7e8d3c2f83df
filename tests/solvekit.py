"""Shared by the solver tests: write a spec to a temporary file and solve it."""

from __future__ import annotations

import textwrap
from pathlib import Path

import ctdsl

ROOT = Path(__file__).resolve().parents[1]


def solve_text(tmp_path: Path, text: str, name: str = "spec.ct", overrides=None):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return ctdsl.load(path, overrides).solve()


def solve_file(rel: str, overrides=None):
    return ctdsl.load(ROOT / rel, overrides).solve()


def C(text: str):
    """A step component by its key, as the JSON names it: C("stragglers"), C("exposed_sync:sync"),
    C("sync_across_sites:all-reduce of each shard across dcs") (ctdsl.language.components)."""
    from ctdsl.language.components import ComponentId

    return ComponentId.parse(text)
