"""`ctdsl init` and `ctdsl docs`: starting from an installed package.

`init` writes the flagship study (or an example, with the files it imports) into
a folder, so that `pip install ctdsl && ctdsl init && ctdsl solve
specs/llama70b_wan.ct` works with no checkout. `docs CODE` prints the full text
of a checker code or a lint rule from the docs that ship inside the package.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Optional

import typer

from ctdsl.cli.app import Exit, app, fail_usage
from ctdsl.diagnostics import did_you_mean
from ctdsl.diagnostics.terminal import printable
from ctdsl.files import atomic_open


@app.command()
def init(
    directory: str = typer.Argument(".", help="Folder to write into (made if missing).", metavar="DIR"),
    example: Optional[str] = typer.Option(None, "--example", help="Write this example instead of the flagship study.", metavar="NAME"),
    examples: bool = typer.Option(False, "--examples", "-e", help="Write every spec and example: DIR/specs/ and DIR/examples/, the files --help and the docs use."),
    list_: bool = typer.Option(False, "--list", help="List the examples and exit."),
    force: bool = typer.Option(False, "--force", help="Overwrite files that exist."),
) -> None:
    """Write a starter spec: the flagship study as DIR/specs/llama70b_wan.ct, or the examples.

    With -e, every shipped spec and example (and the files they import) goes into
    DIR/specs/ and DIR/examples/: the files each command's --help examples name.

    \b
    Examples:
      ctdsl init && ctdsl solve specs/llama70b_wan.ct
      ctdsl init -e && ctdsl solve examples/07_pluggable.ct
      ctdsl init --list
      ctdsl init study --example 07_pluggable && ctdsl solve study/07_pluggable.ct
    """
    from ctdsl import shipped

    found = shipped.examples()
    if list_:
        for name, path in found.items():
            typer.echo(f"{name}  {_first_line(path)}")
        raise typer.Exit(Exit.OK)
    out = Path(directory)
    if examples and example is not None:
        raise fail_usage("give --examples (every example) or --example NAME (one), not both")
    if examples:
        files = [(p, out / kind / p.relative_to(shipped.folder(kind)))
                 for kind in ("specs", "examples") for p in shipped.files(kind)]  # fmt: skip
    elif example is None:
        src = shipped.flagship()
        files = [(src, out / "specs" / src.name)]
    else:
        src = found.get(example.removesuffix(".ct"))
        if src is None:
            hint = did_you_mean(example, found) or "ctdsl init --list shows them"
            raise fail_usage(f"no example named {example!r}; {hint}")
        root = src.parent.resolve()
        files = [(p, out / p.relative_to(root)) for p in _with_imports(src)]
    clash = [dst for _, dst in files if os.path.lexists(dst)]  # a link counts, even one that points nowhere
    if clash and not force:
        raise fail_usage(f"{clash[0]} exists; give --force to overwrite it")
    for src_path, dst in files:
        try:
            dst.parent.mkdir(parents=True, exist_ok=True)
            with atomic_open(str(dst), "wb") as fh:  # byte for byte, line ends included
                fh.write(src_path.read_bytes())
        except OSError as exc:
            raise fail_usage(f"cannot write {dst}: {exc.strerror or exc}")
        typer.echo(f"wrote {printable(str(dst))}", err=True)
    first = out / "specs" / shipped.flagship().name if examples else files[0][1]
    typer.echo(f"next: ctdsl solve {printable(str(first))}", err=True)


def _with_imports(path: Path) -> list[Path]:
    """An example and the files it imports beside it (`import "common/cluster.ct"`), as the loader reads them."""
    from ctdsl.api import check

    loaded = check(path).loaded
    root = path.parent.resolve()
    out = []
    for f in loaded.files if loaded is not None else []:
        if f.path in loaded.std:
            continue
        p = Path(f.path).resolve()
        if root in p.parents:
            out.append(p)
    return out or [path.resolve()]


def _first_line(path: Path) -> str:
    """An example's opening comment, its first line."""
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("#"):
            return line.lstrip("# ").strip()
    return ""


@app.command()
def docs(code: str = typer.Argument(..., help="A checker code (CT105) or a lint rule (CTL003).", metavar="CODE")) -> None:
    """Print the full text of a diagnostic code or a lint rule, with its examples.

    \b
    Examples:
      ctdsl docs CT105
      ctdsl docs CTL003
    """
    from ctdsl import shipped
    from ctdsl.codes import CODES
    from ctdsl.lint.catalogue import all_rules

    known = set(CODES) | {r.code for r in all_rules()}
    key = code.strip().upper()
    if key not in known:
        hint = did_you_mean(key, sorted(known)) or "codes are listed by ctdsl lint --explain and in docs/diagnostics.md"
        raise fail_usage(f"unknown code {code!r}; {hint}")
    text = shipped.doc_section(key)
    if text is None:
        raise fail_usage(f"the documentation of {key} is not installed with this copy of ctdsl")
    typer.echo(printable(text), nl=False)
