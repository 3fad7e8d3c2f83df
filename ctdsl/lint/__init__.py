"""`ctdsl lint`: what looks physically wrong in specs that parse and check.

    from ctdsl.lint import LintConfig, lint_paths
    report = lint_paths(["specs/"], LintConfig())
    for d in report.diagnostics: ...

The checker runs first (its errors are findings too, with their CT codes); the
rules (`ctdsl.lint.rules`, codes CTL001..., gathered in `ctdsl.lint.catalogue`)
then read the checked spec. Reports render with `ctdsl.lint.formats`. Nothing
in this package imports sympy or numpy, so that lint stays fast in pre-commit.
"""

from ctdsl.lint.config import ConfigError, LintConfig, resolve_config
from ctdsl.lint.catalogue import RULES, all_rules, lookup
from ctdsl.lint.registry import Rule
from ctdsl.lint.runner import LintReport, UsageError, lint_files, lint_paths

__all__ = [
    "ConfigError",
    "LintConfig",
    "LintReport",
    "RULES",
    "Rule",
    "UsageError",
    "all_rules",
    "lint_files",
    "lint_paths",
    "lookup",
    "resolve_config",
]
