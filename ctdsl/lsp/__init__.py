"""The language server (`ctdsl lsp`): diagnostics, hover, definition, references,
completion, symbols, semantic tokens and quick fixes for .ct files.

`ctdsl.lsp.analysis`, `ctdsl.lsp.index`, `ctdsl.lsp.complete` and
`ctdsl.lsp.tokens` are plain Python over the checker and lint; only
`ctdsl.lsp.server` needs pygls and lsprotocol (`pip install 'ctdsl[lsp]'`).
"""
