"""The optional extras: which third-party modules each brings, and the one message for a missing one.

A plain `pip install ctdsl` installs what every command needs (pyproject.toml's
`dependencies`). A few features need more, each from an extra named in
pyproject.toml's `optional-dependencies` and in the docs page of the feature:

    data          pyarrow, pandas, xarray, h5netcdf, h5py   Parquet and Arrow sweeps, to_pandas(), to_xarray(), to_netcdf()
    dask          dask, distributed                   --scheduler and Study.simulate(client=...)
    lsp           pygls, lsprotocol                   ctdsl lsp
    uncertainty   SALib                               Sobol indices in ctdsl uncertainty

A module of an extra is imported inside the function that needs it, through
`require`, never at the top of a module a command loads. When it is missing,
`require` raises `MissingExtra`, an ImportError with the code CT890 and the
`pip install 'ctdsl[EXTRA]'` that brings it; the command line prints it as a
diagnostic and exits 2 (`ctdsl.cli.app.handle_exception`).
tests/test_dependencies.py checks that every import of the package is declared,
here or in `dependencies`.
"""

from __future__ import annotations

import importlib
from types import ModuleType

CODE = "CT890"

# module (as imported) -> (extra, distribution)
EXTRAS: dict[str, tuple[str, str]] = {
    "pyarrow": ("data", "pyarrow"),
    "pandas": ("data", "pandas"),
    "xarray": ("data", "xarray"),
    "h5netcdf": ("data", "h5netcdf"),
    "h5py": ("data", "h5py"),
    "dask": ("dask", "dask"),
    "distributed": ("dask", "distributed"),
    "pygls": ("lsp", "pygls"),
    "lsprotocol": ("lsp", "lsprotocol"),
    "SALib": ("uncertainty", "SALib"),
}


class MissingExtra(ImportError):
    """A feature's optional module is not installed; the message says which extra brings it."""

    code = CODE

    def __init__(self, module: str, purpose: str, hint: str = ""):
        extra, dist = EXTRAS[module.split(".")[0]]
        self.extra = extra
        self.help = f"pip install 'ctdsl[{extra}]'" + (f" ({hint})" if hint else "")
        super().__init__(f"{purpose} needs {dist}, which is not installed", name=module)

    def __str__(self) -> str:
        return f"{self.args[0]}: {self.help}"


def require(module: str, purpose: str, hint: str = "") -> ModuleType:
    """`import module`, or MissingExtra naming the extra that brings it.

    `purpose` says what needs it ("--format parquet"), `hint` what else would do
    ("or use --format npz"). A module of an extra that is there but cannot import
    another module of an extra (xarray without pandas) names the one missing.
    """
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        missing = (exc.name or module).split(".")[0]
        if missing not in EXTRAS:
            raise  # not a module of an extra: a broken install, reported as it is
        raise MissingExtra(missing, purpose, hint) from exc
