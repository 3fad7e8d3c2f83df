"""The job's size in `ctdsl solve`'s tables and JSON: GPUs, nodes and sites, counted by hand from the specs.

- specs/llama405b_3dc.ct: three dcs of replicas of tp 8 x pp 16 = 128 GPUs, 8 a node:
  300 + 280 + 220 = 800 replicas, 102,400 GPUs, 12,800 nodes, 3 sites;
- examples/20_sites.ct: a dc standing for n_sites = 4 sites of 32 replicas of tp 8 x pp 4
  (1,024 GPUs a site) and a hub of 96 replicas: 4,096 + 3,072 = 7,168 GPUs, 896 nodes of 8,
  5 sites; at n_sites = 10, 10,240 + 3,072 = 13,312 GPUs, 1,664 nodes, 11 sites;
- examples/01_params.ct: two dcs of 4 workers each, a worker its own node: 8, 8, 2.
"""

from __future__ import annotations

from pathlib import Path

import ctdsl
from ctdsl.report.tables import job_table

ROOT = Path(__file__).resolve().parents[1]


def _jobs(path, sets=None):
    return {s["name"]: s["job"] for s in ctdsl.load(ROOT / path, sets).solve().to_json()["schemes"]}


def test_405b_three_sites_is_102400_gpus():
    jobs = _jobs("specs/llama405b_3dc.ct")
    assert set(jobs) == {"adamw", "fp8", "band", "diloco"}
    for job in jobs.values():
        assert job == {"gpus": 102400.0, "nodes": 12800.0, "sites": 3.0}


def test_counted_sites_follow_the_param():
    assert set(map(str, _jobs("examples/20_sites.ct").values())) == {str({"gpus": 7168.0, "nodes": 896.0, "sites": 5.0})}
    assert set(map(str, _jobs("examples/20_sites.ct", {"n_sites": "10"}).values())) == {str({"gpus": 13312.0, "nodes": 1664.0, "sites": 11.0})}


def test_workers_are_nodes():
    assert list(_jobs("examples/01_params.ct").values())[0] == {"gpus": 8.0, "nodes": 8.0, "sites": 2.0}


def test_the_table_says_it():
    t = job_table(ctdsl.load(ROOT / "specs/llama405b_3dc.ct").solve())
    assert t.header == ["schemes", "sites", "nodes", "GPUs"] and t.rows == [["all", "3", "12,800", "102,400"]]
