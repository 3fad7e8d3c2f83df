"""CTL011: suppression comments that suppress nothing. The runner applies it
(`ctdsl.lint.runner`); this is its documentation."""

from __future__ import annotations

from ctdsl.diagnostics import Severity
from ctdsl.lint.registry import rule

UNUSED_SUPPRESSION_DOC = """
A suppression comment silences the findings of the named rules on its own line:
`# ctdsl: ignore[CTL003]`, or several codes, `# ctdsl: ignore[CTL003, CTL007]`.
Once the problem is fixed, or the line moves, a comment left behind suppresses
nothing, and would hide the next real finding there. A suppression is reported
when none of its codes (of rules that ran) had a finding on its line, or when
it names a code that does not exist. Checker errors (CT codes) cannot be
suppressed: a spec that does not check cannot be solved. The rule looks only at
files linted as roots (given on the command line or found in a directory), and
only at those that checked.
"""

unused_suppression = rule(
    "CTL011",
    "unused-suppression",
    Severity.WARNING,
    "A `# ctdsl: ignore[...]` comment that suppresses nothing, or names an unknown code.",
    bad="""
    link ib { bandwidth = 50 GB/s; latency = 10 us }   # ctdsl: ignore[CTL006]
    """,
    good="""
    link ib { bandwidth = 50 GB/s; latency = 10 us }
    """,
    doc=UNUSED_SUPPRESSION_DOC,
    fix="safe",
    fix_why=(
        "An unused code is removed from its `# ctdsl: ignore[...]` comment, and the whole comment "
        "when it named only that code. Nothing it suppressed is reported anew: it suppressed nothing."
    ),
)(None)
