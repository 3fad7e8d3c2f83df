"""Regression files: what they hold and what is expected of them.

A regression file is a spec whose first lines may say, in comments:

    # fuzz: ValueError @ ctdsl/report/plots.py:sweep_figure     (the crash it was found with)
    # commands: report-md                                        (the commands to run; default: all)
    # xfail: issue 18 class 7: ValueError in report/plots.py:sweep_figure
    # sets: wan_bw=2^1030 GB/s                                   (--set overrides for solve --format json)
    # counted by: tests/test_x.py::test_y                        (a case found as a timeout: the test that
                                                                  keeps its fix by counting work, not time)
    # filename: "::error::x.ct"                                  (the name the input is written under, as a
                                                                  JSON string; default fuzz.ct)

A file with an `xfail:` line still fails: its test is marked xfail(strict=True),
so the suite stays green now and turns red the day the crash is fixed, when the
line must be removed. The lines are comments: the spec reads the same without them.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from backstop import HANG
from fuzz.harness import WALL_BACKSTOP

HERE = Path(__file__).resolve().parent
CRASHES = HERE / "crashes"
HOSTILE = HERE / "hostile"
_HEADER = re.compile(r"^#\s*(fuzz|commands|xfail|class|sets|counted by|filename)\s*:\s*(.*?)\s*$")
# CPU seconds per command in the suite, with the harness's wall-clock backstop at HANG: far above any command's
# time on a loaded machine, so a command is stopped only when it would never end. How fast each case runs is
# measured by bench/bench_regressions.py, never asserted.
LIMIT = HANG / WALL_BACKSTOP


@dataclass
class Case:
    path: Path
    data: bytes  # the file as it is (it may hold bytes that are not UTF-8)
    meta: dict[str, str] = field(default_factory=dict)

    @property
    def commands(self) -> set[str] | None:
        raw = self.meta.get("commands", "").strip()
        return set(raw.replace(",", " ").split()) if raw and raw != "all" else None

    @property
    def xfail(self) -> str | None:
        return self.meta.get("xfail") or None

    @property
    def counted_by(self) -> str | None:
        return self.meta.get("counted by") or None

    @property
    def sets(self) -> tuple[str, ...]:
        raw = self.meta.get("sets", "").strip()
        return tuple(s.strip() for s in raw.split(";") if s.strip())

    @property
    def filename(self) -> str:
        raw = self.meta.get("filename", "").strip()
        return json.loads(raw) if raw else "fuzz.ct"

    @property
    def id(self) -> str:
        return self.path.stem


def read_case(path: Path) -> Case:
    data = path.read_bytes()
    text = data.decode("utf-8", "replace")
    meta: dict[str, str] = {}
    for line in text.split("\n"):
        m = _HEADER.match(line)
        if not m:
            break
        meta[m.group(1)] = m.group(2)
    return Case(path, data, meta)


def header(signature: str, commands: list[str], xfail: str | None, filename: str = "fuzz.ct") -> str:
    lines = [f"# fuzz: {signature}", f"# commands: {' '.join(commands)}"]
    if xfail:
        lines.append(f"# xfail: {xfail}")
    if filename != "fuzz.ct":
        lines.append(f"# filename: {json.dumps(filename)}")
    return "\n".join(lines) + "\n"


def cases(folder: Path) -> list[Case]:
    return [read_case(p) for p in sorted(folder.glob("*.ct"))]
