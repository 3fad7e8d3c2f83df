"""The `ctdsl` command: a thin layer over `ctdsl.api`.

Each group of commands lives in its own module and registers on the one Typer
app; modules import their heavy dependencies (sympy, numpy) inside the commands,
so `ctdsl check` and `ctdsl lint` start fast.
"""

from ctdsl.cli.app import app, main  # noqa: F401
from ctdsl.cli import spec_cmds  # noqa: F401,E402  (registers check, graph)
from ctdsl.cli import solve_cmds  # noqa: F401,E402  (registers solve, export)
from ctdsl.cli import lint_cmd  # noqa: F401,E402
from ctdsl.cli import sweep_cmds  # noqa: F401,E402
from ctdsl.cli import simulate_cmd  # noqa: F401,E402

__all__ = ["app", "main"]
