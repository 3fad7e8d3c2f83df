"""The `ctdsl` command: a thin layer over `ctdsl.api`.

Each group of commands lives in its own module and registers on the one Typer
app; modules import their heavy dependencies (sympy, numpy) inside the commands,
so `ctdsl check` and `ctdsl lint` start fast.
"""

from ctdsl.cli import (
    explore_cmd,  # noqa: F401,E402
    lint_cmd,  # noqa: F401,E402
    lsp_cmd,  # noqa: F401,E402
    simulate_cmd,  # noqa: F401,E402
    solve_cmds,  # noqa: F401,E402  (registers solve, export)
    spec_cmds,  # noqa: F401,E402  (registers check, graph)
    start_cmds,  # noqa: F401,E402  (registers init, docs)
    sweep_cmds,  # noqa: F401,E402
    report_cmd,  # noqa: F401,E402  (after sweep: the order of --help)
    uncertainty_cmd,  # noqa: F401,E402
    search_cmd,  # noqa: F401,E402
    validate_cmd,  # noqa: F401,E402
)
from ctdsl.cli.app import app, main  # noqa: F401

__all__ = ["app", "main"]
