"""`ctdsl lsp`: the language server over stdio (needs `pip install 'ctdsl[lsp]'`)."""

from __future__ import annotations

import typer

from ctdsl.cli.app import app
from ctdsl.extras import require


@app.command()
def lsp(
    stdio: bool = typer.Option(True, "--stdio", help="Talk over stdin and stdout (the only transport; editors pass it)."),
) -> None:
    """Run the language server for .ct files over stdin and stdout.

    Editors start it: diagnostics as you type (the checker's and lint's), hover,
    go to definition, references, completion, symbols, semantic tokens and quick
    fixes. Set-up for VS Code, Neovim and others: docs/editors.md. It needs
    the lsp extra: pip install 'ctdsl\\[lsp]'.

    \b
    Examples:
      ctdsl lsp --stdio
      nvim spec.ct   # with the lspconfig entry of docs/editors.md
    """
    require("pygls", "ctdsl lsp")
    require("lsprotocol", "ctdsl lsp")
    from ctdsl.lsp.server import serve

    serve()


__all__ = ["lsp"]
