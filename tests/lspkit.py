"""A real LSP client for `ctdsl lsp`: pygls's LanguageClient over the server's stdio.

`Session` starts the server in a subprocess (the console script's entry point,
`ctdsl.cli:main`, under this Python), initialises it, and gives blocking helpers
around the asynchronous client: open and change a document, wait for its next
diagnostics, hover, complete, go to definition. Every wait has a time-out, so a
broken server fails the test instead of hanging it. Used by tests/test_lsp.py
and bench/bench_lsp.py.
"""

from __future__ import annotations

import asyncio
import re
import sys
import time
from pathlib import Path

from lsprotocol import types as T
from pygls.lsp.client import LanguageClient
from backstop import HANG

SERVER = [sys.executable, "-c", "import sys; from ctdsl.cli import main; sys.argv = ['ctdsl', 'lsp']; main()"]
WAIT = HANG  # seconds: a backstop for a server that never answers (tests/backstop.py); a healthy one answers in well under one


def _lsp_lines(text: str) -> list[str]:
    """The lines of `text` with their ends, as LSP counts them: at LF, CR LF and a lone CR."""
    return re.findall(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$", text)


def _offset(text: str, line: int, char: int, encoding: str) -> int:
    """The index into `text` of LSP position (line, char), char in `encoding` units."""
    lines = _lsp_lines(text)
    start = sum(len(x) for x in lines[:line])
    body = lines[line].rstrip("\r\n") if line < len(lines) else ""
    units = 0
    for i, c in enumerate(body):
        if units >= char:
            return start + i
        units += len(c.encode("utf-8")) if encoding == "utf-8" else (1 if encoding == "utf-32" else len(c.encode("utf-16-le")) // 2)
    return start + len(body)


class Session:
    def __init__(self, encodings: tuple[str, ...] = ()) -> None:
        self.loop = asyncio.new_event_loop()
        self.client = LanguageClient("ctdsl-tests", "1")
        self.published: asyncio.Queue = asyncio.Queue()
        self.received_at: list[float] = []
        self.versions: dict[str, int] = {}
        self.texts: dict[str, str] = {}  # uri -> the document's text, as an editor holds it
        self.last: dict[str, T.PublishDiagnosticsParams] = {}  # uri -> the last diagnostics published

        @self.client.feature(T.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def _diagnostics(params: T.PublishDiagnosticsParams) -> None:
            self.received_at.append(time.perf_counter())  # for bench/bench_lsp.py: no test reads it
            self.last[params.uri] = params
            self.published.put_nowait(params)

        self.run(self.client.start_io(*SERVER))
        caps = T.ClientCapabilities(
            text_document=T.TextDocumentClientCapabilities(hover=T.HoverClientCapabilities(content_format=[T.MarkupKind.Markdown])),
            general=T.GeneralClientCapabilities(position_encodings=list(encodings)) if encodings else None,
        )
        self.initialize = self.run(self.client.initialize_async(T.InitializeParams(capabilities=caps)))
        self.client.initialized(T.InitializedParams())

    def run(self, coro):
        return self.loop.run_until_complete(asyncio.wait_for(coro, WAIT))

    # ---- documents ------------------------------------------------------------------

    def open(self, path: Path, text: str | None = None) -> str:
        uri = path.absolute().as_uri()
        self.versions[uri] = 1
        text = path.read_text(encoding="utf-8") if text is None else text
        self.texts[uri] = text
        self.client.text_document_did_open(T.DidOpenTextDocumentParams(text_document=T.TextDocumentItem(uri=uri, language_id="ct", version=1, text=text)))
        return uri

    def change(self, uri: str, text: str) -> None:
        """Replace the whole text (a full-document change event)."""
        self.versions[uri] += 1
        self.texts[uri] = text
        self.client.text_document_did_change(
            T.DidChangeTextDocumentParams(
                T.VersionedTextDocumentIdentifier(uri=uri, version=self.versions[uri]),
                [T.TextDocumentContentChangeWholeDocument(text=text)],
            )
        )

    @property
    def encoding(self) -> str:
        return str(self.initialize.capabilities.position_encoding or "utf-16")

    def edit(self, uri: str, line: int, start: int, end: int, text: str) -> None:
        """Replace characters start..end of 0-based `line`, as an editor would: incrementally if
        the server takes incremental changes, else (ctdsl's server syncs whole documents) the
        edit made here and the whole text sent."""
        self.versions[uri] += 1
        old = self.texts[uri]
        a, b = _offset(old, line, start, self.encoding), _offset(old, line, end, self.encoding)
        self.texts[uri] = old[:a] + text + old[b:]
        sync = self.initialize.capabilities.text_document_sync
        kind = sync.change if isinstance(sync, T.TextDocumentSyncOptions) else sync
        if kind == T.TextDocumentSyncKind.Incremental:
            rng = T.Range(T.Position(line, start), T.Position(line, end))
            change = T.TextDocumentContentChangePartial(range=rng, text=text)
        else:
            change = T.TextDocumentContentChangeWholeDocument(text=self.texts[uri])
        self.client.text_document_did_change(
            T.DidChangeTextDocumentParams(T.VersionedTextDocumentIdentifier(uri=uri, version=self.versions[uri]), [change])
        )

    def diagnostics(self, uri: str) -> list[T.Diagnostic]:
        """The next diagnostics published for `uri`."""

        async def wait():
            while True:
                p = await self.published.get()
                if p.uri == uri:
                    return list(p.diagnostics)

        return self.run(wait())

    # ---- requests -------------------------------------------------------------------

    def hover(self, uri: str, line: int, char: int) -> str | None:
        h = self.run(self.client.text_document_hover_async(T.HoverParams(text_document=T.TextDocumentIdentifier(uri), position=T.Position(line, char))))
        return h.contents.value if h is not None else None

    def complete(self, uri: str, line: int, char: int) -> list[T.CompletionItem]:
        r = self.run(self.client.text_document_completion_async(T.CompletionParams(text_document=T.TextDocumentIdentifier(uri), position=T.Position(line, char))))
        return list(r.items if isinstance(r, T.CompletionList) else r or [])

    def definition(self, uri: str, line: int, char: int):
        return self.run(self.client.text_document_definition_async(T.DefinitionParams(text_document=T.TextDocumentIdentifier(uri), position=T.Position(line, char))))

    def references(self, uri: str, line: int, char: int) -> list[T.Location]:
        params = T.ReferenceParams(
            text_document=T.TextDocumentIdentifier(uri), position=T.Position(line, char), context=T.ReferenceContext(include_declaration=True)
        )
        return list(self.run(self.client.text_document_references_async(params)) or [])

    def symbols(self, uri: str):
        return self.run(self.client.text_document_document_symbol_async(T.DocumentSymbolParams(text_document=T.TextDocumentIdentifier(uri))))

    def tokens(self, uri: str) -> list[int]:
        r = self.run(self.client.text_document_semantic_tokens_full_async(T.SemanticTokensParams(text_document=T.TextDocumentIdentifier(uri))))
        return list(r.data)

    def code_actions(self, uri: str, rng: T.Range, diags: list[T.Diagnostic]) -> list[T.CodeAction]:
        params = T.CodeActionParams(text_document=T.TextDocumentIdentifier(uri), range=rng, context=T.CodeActionContext(diagnostics=diags))
        return list(self.run(self.client.text_document_code_action_async(params)) or [])

    def close(self) -> None:
        try:
            self.run(self.client.shutdown_async(None))
            self.client.exit(None)
            self.run(self.client.stop())
        finally:
            self.loop.close()
