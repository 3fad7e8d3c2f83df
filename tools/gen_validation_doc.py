"""Write the current tables of docs/validation.md: every set of specs/validation/ solved and scored.

    python tools/gen_validation_doc.py           # rewrite the generated part of docs/validation.md
    python tools/gen_validation_doc.py --check   # exit 1 if it is out of date

The tables sit between `<!-- BEGIN GENERATED validation -->` and `<!-- END GENERATED
validation -->`; the rest of the page is written by hand. They are what `ctdsl validate
specs/validation/` prints (docs/validation.md says how to read them): the sets, the three
largest errors of each, and each set's observations. tests/test_validation_specs.py runs
`--check`, so the page cannot drift from the model: when the model changes, run this.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ctdsl.api import load  # noqa: E402
from ctdsl.report.blocks import Grid  # noqa: E402
from ctdsl.report.document_md import tables_md  # noqa: E402
from ctdsl.report.observed_out import observed_table, pct, sets_table, shown, worst_rows  # noqa: E402

DOC = ROOT / "docs" / "validation.md"
BEGIN = "<!-- BEGIN GENERATED validation -->"
END = "<!-- END GENERATED validation -->"


def sets() -> list:
    """Every spec directly in specs/validation/, observed (paths relative to the root)."""
    here = os.getcwd()
    os.chdir(ROOT)
    try:
        return [load(p.relative_to(ROOT).as_posix()).observe() for p in sorted((ROOT / "specs" / "validation").glob("*.ct"))]
    finally:
        os.chdir(here)


def worst_table(results) -> Grid:
    t = Grid("The three largest errors of each set", ["set", "scenario", "measured", "predicted", "error"])
    for obs in results:
        for r in worst_rows(obs):
            t.rows.append([Path(obs.path).name, r.scenario or "defaults", shown(r.measured, r.dim), shown(r.predicted, r.dim), pct(r.error)])
    return t


def render(results: list | None = None) -> str:
    """The generated part of the page, from `results` (every set observed) or solved here."""
    results = sets() if results is None else results
    tables = [sets_table(results), worst_table(results)] + [observed_table(obs, title=f"Observed: {obs.path}") for obs in results]
    return tables_md(tables, 3)


def page(results: list | None = None) -> tuple[str, str]:
    """The page as it is and as the model makes it."""
    text = DOC.read_text(encoding="utf-8")
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    return text, f"{head}{BEGIN}\n\n{render(results)}\n{END}{tail}"


def main(argv: list[str]) -> int:
    text, new = page()
    if "--check" in argv:
        if new != text:
            print("docs/validation.md is out of date: run python tools/gen_validation_doc.py", file=sys.stderr)
            return 1
        return 0
    DOC.write_text(new, encoding="utf-8")
    print("wrote docs/validation.md")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
