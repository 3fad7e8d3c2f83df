"""Hostile cases too large to keep as files (up to 240 KB each), built from the base study below.

Each builder returns the text of a spec; `LARGE` maps a case's name to its issue 18
class, its builder, the commands it runs through and, while it still fails, why. The small cases are
files in hostile/, written from the same base study.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

HEAD = """import std.devices
import std.links
import std.models

param wan_bw = 12.5 GB/s in 0.1 GB/s .. 1000 GB/s log 41

model job : llama3_8b { tokens = 8192 }
device gpu0 : h100 { efficiency = 0.4 }
switch tor {}
"""
TOPOLOGY = """link wan_link : eth100g { bandwidth = wan_bw }
dc east { workers = 4; device = gpu0; link = ib_ndr; switch = tor }
dc west : east {}
wan east <-> west = wan_link
"""
SCHEMES = """scheme adamw { payload = dense; collective = hier_allreduce; steps = 10000 }
scheme band { payload = band; fraction = 1/16; collective = hier_allreduce; steps = 10800 }
baseline adamw
breakeven band vs adamw over wan_bw
"""


def links_inheriting(n: int = 10_000) -> str:
    """n links, each inheriting from the one before; the WAN uses the last."""
    chain = ["link l0 : eth100g { bandwidth = wan_bw }"] + [f"link l{i} : l{i - 1} {{}}" for i in range(1, n)]
    topo = TOPOLOGY.replace("link wan_link : eth100g { bandwidth = wan_bw }", "\n".join(chain))
    return HEAD + topo.replace("= wan_link", f"= l{n - 1}") + SCHEMES


def chain_newest_first(n: int = 3_000) -> str:
    """An inheritance chain written newest first: l0 : l1, l1 : l2, ..., the root last."""
    chain = [f"link l{i} : l{i + 1} {{}}" for i in range(n - 1)] + [f"link l{n - 1} : eth100g {{ bandwidth = wan_bw }}"]
    topo = TOPOLOGY.replace("link wan_link : eth100g { bandwidth = wan_bw }", "\n".join(chain))
    return HEAD + topo.replace("= wan_link", "= l0") + SCHEMES


def field_refs_newest_first(n: int = 164) -> str:
    """A chain of field references written newest first: l0's bandwidth is l1's, ..., the last one's a number."""
    chain = [f"link l{i} : eth100g {{ bandwidth = l{i + 1}.bandwidth }}" for i in range(n - 1)]
    chain.append(f"link l{n - 1} : eth100g {{ bandwidth = 12.5 GB/s }}")
    topo = TOPOLOGY.replace("link wan_link : eth100g { bandwidth = wan_bw }", "\n".join(chain))
    return HEAD + topo.replace("= wan_link", "= l0") + SCHEMES


def long_label(size: int = 240_000) -> str:
    """A scheme label of `size` characters."""
    label = ("a label " * (size // 8 + 1))[:size]
    return HEAD + TOPOLOGY + SCHEMES.replace("scheme adamw {", f'scheme adamw {{ label = "{label}";')


def texts_at_limit() -> str:
    """The longest label (256 characters) and names (128: a scheme, a stage's dc) that CT609 allows."""
    label = ("a label " * 32)[:256]
    scheme, dc = "s" * 128, "d" * 128
    text = HEAD + TOPOLOGY + SCHEMES.replace("scheme adamw {", f'scheme adamw {{ label = "{label}";')
    return text.replace("scheme band", f"scheme {scheme}").replace("breakeven band", f"breakeven {scheme}").replace("east", dc)


def many_schemes(n: int = 10_000) -> str:
    """n schemes, each a copy of adamw (short lines: the file stays under the 256 KiB limit)."""
    rows = [f"scheme s{i} : adamw {{}}" for i in range(n)]
    return HEAD + TOPOLOGY + SCHEMES + "\n".join(rows) + "\n"


def many_breakevens(n: int = 5_000) -> str:
    rows = ["breakeven band vs adamw over wan_bw"] * n
    return HEAD + TOPOLOGY + SCHEMES + "\n".join(rows) + "\n"


def duplicate_wans(n: int = 9_000) -> str:
    return HEAD + TOPOLOGY + "wan east <-> west = wan_link\n" * n + SCHEMES


def inheritance_chain(n: int = 1_000) -> str:
    """The checker's recursion: a chain of about 1,000 device definitions, newest first."""
    chain = [f"device d{i} : d{i + 1} {{}}" for i in range(n - 1)] + [f"device d{n - 1} : h100 {{ efficiency = 0.4 }}"]
    topo = TOPOLOGY.replace("device = gpu0", "device = d0")
    return HEAD + "\n".join(chain) + "\n" + topo + SCHEMES


def huge_workers_jitter() -> str:
    """The straggler expectation of a huge lognormal jitter (issue 18 class 9: stragglers.py sum_law, the integrals)."""
    topo = TOPOLOGY.replace("switch = tor }", "switch = tor; jitter = 1e300 s; jitter_kind = lognormal; jitter_sigma = 30 }")
    return HEAD + topo + SCHEMES


def max_workers() -> str:
    """The most workers the checker allows (1,024 per DC, 2,048 in all): the routing of every pair."""
    return HEAD + TOPOLOGY.replace("workers = 4", "workers = 1024") + SCHEMES


@dataclass(frozen=True)
class Large:
    cls: str  # the class of issue 18 and what the case does
    build: Callable[[], str]
    commands: frozenset[str] | None = None  # None: every command
    xfail: str | None = None  # why it still fails, until it is fixed
    counted_by: str | None = None  # for a case found as a timeout: the test that keeps its fix by counting work


LARGE: dict[str, Large] = {
    "c03_links_inheriting_10000": Large(
        "3 10,000 links each inheriting from the previous", links_inheriting),
    "c03_chain_newest_first_3000": Large(
        "3 a 3,000-long inheritance chain defined newest-first", chain_newest_first),
    "c03_label_240kb": Large(
        "3 a 240 KB label (CT609 at the string)", long_label, frozenset({"check", "report-md", "report-html"}),
        counted_by="tests/test_hostile_output.py::test_figure_texts_are_clipped"),
    "c03_texts_at_limit": Large(
        "3 a label of 256 characters and names of 128, the most CT609 allows, through every figure and table",
        texts_at_limit, frozenset({"check", "solve-table", "export-latex", "graph-json", "report-md", "report-html"})),
    "c03_schemes_10000": Large(
        "3 10,000 schemes (CT621 alone: no cascade of unknown names from the cut namespace; the parse of the "
        "240 KB is about 1 s of CPU)", many_schemes, frozenset({"check", "solve-json"})),
    "c03_breakevens_5000": Large(
        "3 5,000 break-evens", many_breakevens, frozenset({"check", "solve-json"})),
    "c03_max_workers": Large(
        "3 the most workers the checker allows (1,024 per DC)", max_workers, frozenset({"check", "solve-json"})),
    "c08_duplicate_wans_9000": Large(
        "8 9,000 duplicate WAN statements (check and lint take seconds: slow, not stopped)", duplicate_wans,
        frozenset({"check", "lint-sarif"})),
    "c09_stragglers_overflow": Large(
        "9 the straggler expectation of a 1e300 s lognormal jitter", huge_workers_jitter),
    "c10_field_refs_newest_first_164": Large(
        "10 a field-reference chain of 164 links defined newest-first (CT622)", field_refs_newest_first),
    "c10_inheritance_chain_1000": Large(
        "10 an inheritance chain of 1,000 defined newest-first", inheritance_chain),
}
