"""docs/lint-rules.md, generated from the rule registry.

    python -m ctdsl.lint.docs > docs/lint-rules.md

A test regenerates it and compares, so the page never drifts from the rules.
"""

from __future__ import annotations

import sys

from ctdsl.lint.catalogue import all_rules
from ctdsl.lint.registry import Rule


_FIX_SAYS = {
    "safe": "Fix: **safe**, applied by `--fix`.",
    "unsafe": "Fix: **unsafe**, applied by `--fix` only with `--unsafe-fixes` (or `unsafe-fixes = true`).",
}


def _anchor(r: Rule) -> str:
    return f"{r.code.lower()}-{r.name}"


def render_rules_markdown() -> str:
    rules = all_rules()
    out = [
        "# Lint rules",
        "",
        "<!-- Generated from ctdsl/lint/rules/ by `python -m ctdsl.lint.docs > docs/lint-rules.md`; do not edit. -->",
        "",
        "`ctdsl lint` reports specs that parse and check but look physically wrong. It runs the",
        "checker first: a spec with checker errors gets only those (with their CT codes, see",
        "docs/diagnostics.md). Numbers are taken at the params' defaults. Definitions from the",
        "standard library are presets and are never reported themselves.",
        "",
        "Silence a finding on its line with `# ctdsl: ignore[CODE]`; select or ignore rules with",
        "`--select`/`--ignore` or in `[tool.ctdsl.lint]` of pyproject.toml (see docs/ci.md).",
        "A rule's fix is **safe** (`ctdsl lint --fix` applies it) or **unsafe** (it changes what the",
        "spec means, and `--fix` applies it only with `--unsafe-fixes`), as in ruff.",
        "Each rule has a fixture with passing and failing cases in `tests/lint/fixtures/CODE.ct`.",
        "",
        "## Library files",
        "",
        "A file with no `dc` block is a **library**: schemes, params, models, devices, links and",
        "switches written to be imported by several topology files (`import \"shared.ct\"`). It",
        "checks and lints clean as it is: no rule asks it for a topology, and CTL001 (unused-definition) is quiet",
        "in it, since its definitions are there for its importers. Only the commands that run a",
        "spec (`solve`, `sweep`, `simulate`, `export`, `graph`, and `ctdsl.load`) need a dc, and",
        "report CT410 for a library that defines schemes.",
        "",
        "| code | name | severity | fix | summary |",
        "|---|---|---|---|---|",
    ]
    for r in rules:
        summary = r.summary.replace("|", "\\|")
        out.append(f"| [{r.code}](#{_anchor(r)}) | {r.name} | {r.severity.value} | {r.fix or '-'} | {summary} |")
    for r in rules:
        out += [
            "",
            f"## {r.code} {r.name}",
            "",
            f"Severity: **{r.severity.value}**. {r.summary}",
            "",
            r.explanation,
            *(["", _FIX_SAYS[r.fix] + " " + r.fix_why] if r.fix else []),
            "",
            "Flagged:",
            "",
            "```",
            r.bad,
            "```",
            "",
            "Fixed:",
            "",
            "```",
            r.good,
            "```",
        ]
    return "\n".join(out) + "\n"


def main() -> None:  # pragma: no cover
    sys.stdout.write(render_rules_markdown())


if __name__ == "__main__":  # pragma: no cover
    main()
