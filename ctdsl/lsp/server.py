"""`ctdsl lsp`: the language server, on pygls over stdio.

Diagnostics are published on open, change and save (the checker's and lint's,
with their codes, ranges, related locations and a link to the rule's docs);
code actions offer the fixes whose help names an exact edit; hover, definition,
references, completion, document symbols and semantic tokens read the last
analysis (`ctdsl.lsp.analysis`).

Positions convert between ctdsl's spans (1-based, code points) and LSP's
(0-based, in the units agreed at initialisation: UTF-16 code units unless the
client offers UTF-8 or UTF-32 first) here, by `LineIndex`, which counts lines as
the parser does and as LSP does (LF, CR LF, a lone CR). Documents are synced
whole (`TextDocumentSyncKind.Full`): an incremental change would be applied by
pygls, which counts lines with Python's `str.splitlines()` (a form feed or
U+2028 ends a line there) and would desynchronise the server's text from the
editor's. Diagnostics carry the version of the text they are about, and each
code's `codeDescription` links its section of the docs (`DOCS_BASE`).
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import unquote, urlparse

from lsprotocol import types as T
from pygls.lsp.server import LanguageServer

from ctdsl.version import __version__
from ctdsl.diagnostics import Diagnostic, Severity, Span
from ctdsl.diagnostics.lines import LineIndex
from ctdsl.diagnostics.rules import describe, help_uri
from ctdsl.lint.formats import RULE_INFOS
from ctdsl.lsp.analysis import Analysis, analyse, definition, file_of, hover, outline, references
from ctdsl.lsp.complete import complete
from ctdsl.lsp.tokens import MODIFIERS, TYPES, semantic_tokens

SEVERITY = {Severity.ERROR: T.DiagnosticSeverity.Error, Severity.WARNING: T.DiagnosticSeverity.Warning, Severity.INFO: T.DiagnosticSeverity.Information}
SYMBOL_KIND = {
    "param": T.SymbolKind.Variable,
    "field": T.SymbolKind.Field,
    "stage": T.SymbolKind.Struct,
    "wan": T.SymbolKind.Event,
    "breakeven": T.SymbolKind.Function,
    "baseline": T.SymbolKind.Constant,
    "import": T.SymbolKind.Module,
}
ITEM_KIND = {
    "keyword": T.CompletionItemKind.Keyword,
    "field": T.CompletionItemKind.Field,
    "module": T.CompletionItemKind.Module,
    "reference": T.CompletionItemKind.Reference,
    "enum": T.CompletionItemKind.EnumMember,
    "unit": T.CompletionItemKind.Unit,
    "variable": T.CompletionItemKind.Variable,
    "stage": T.CompletionItemKind.Struct,
    "function": T.CompletionItemKind.Function,
}
LEGEND = T.SemanticTokensLegend(token_types=TYPES, token_modifiers=MODIFIERS)


def path_of(uri: str) -> str:
    return unquote(urlparse(uri).path)


def uri_of(path: str) -> str:
    return Path(path).absolute().as_uri()


def _docs(code: str) -> T.CodeDescription:
    """A link to the code's section of the docs (an absolute URI: DOCS_BASE)."""
    return T.CodeDescription(href=help_uri(describe(code, RULE_INFOS)))


class CtServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("ctdsl", __version__, text_document_sync_kind=T.TextDocumentSyncKind.Full)
        self.analyses: dict[str, Analysis] = {}  # uri -> the last analysis
        self.good: dict[str, Analysis] = {}  # uri -> the last analysis whose document parsed

    # ---- positions ----------------------------------------------------------------

    @property
    def encoding(self) -> str:
        """The units of a position's character: "utf-16" (LSP's default), "utf-8" or "utf-32"."""
        try:
            agreed = str(self.workspace.position_encoding or "utf-16")
        except Exception:  # noqa: BLE001 - before initialisation: the default
            return "utf-16"
        return agreed if agreed in ("utf-8", "utf-16", "utf-32") else "utf-16"

    def index_of(self, an: Analysis, file: str) -> LineIndex:
        if file == an.path:
            return an.index_of_text
        index = an.sources.index(file) if an.sources is not None else None
        return index if index is not None else LineIndex("")

    def position(self, an: Analysis, file: str, line: int, col: int) -> T.Position:
        units = self.index_of(an, file).units(line, col, self.encoding)
        return T.Position(max(line - 1, 0), units)

    def range(self, an: Analysis, span: Span | None) -> T.Range:
        if span is None:
            return T.Range(T.Position(0, 0), T.Position(0, 0))
        return T.Range(self.position(an, span.file, span.line, span.col), self.position(an, span.file, span.end_line, span.end_col))

    def location(self, an: Analysis, span: Span) -> T.Location:
        return T.Location(uri_of(file_of(span.file)), self.range(an, span))

    def cursor(self, an: Analysis, pos: T.Position) -> tuple[int, int]:
        """An LSP position as ctdsl's (line, col): the agreed units to code points."""
        return pos.line + 1, an.index_of_text.column(pos.line + 1, pos.character, self.encoding)

    # ---- diagnostics ---------------------------------------------------------------

    def lsp_diagnostic(self, an: Analysis, d: Diagnostic) -> T.Diagnostic:
        related = [T.DiagnosticRelatedInformation(self.location(an, l.span), l.text or "related") for l in d.secondary]
        message = d.message + "".join(f"\nnote: {n}" for n in d.notes) + (f"\nhelp: {d.help}" if d.help else "")
        return T.Diagnostic(
            range=self.range(an, d.span),
            message=message,
            severity=SEVERITY[d.severity],
            code=d.code,
            code_description=_docs(d.code),
            source="ctdsl",
            related_information=related or None,
        )

    def refresh(self, uri: str, text: str, version: int | None) -> Analysis | None:
        """Analyse the document's text (of `version`) and publish its diagnostics, with that version."""
        try:
            an = analyse(path_of(uri), text)
        except Exception as exc:  # noqa: BLE001 - a bug must not stop the server or go unseen
            message = f"internal error: {type(exc).__name__}: {exc}; please report it with the spec"
            diag = T.Diagnostic(range=T.Range(T.Position(0, 0), T.Position(0, 0)), message=message, source="ctdsl")
            self.text_document_publish_diagnostics(T.PublishDiagnosticsParams(uri=uri, diagnostics=[diag], version=version))
            return None
        self.analyses[uri] = an
        if an.index is not None:
            self.good[uri] = an
        diags = [self.lsp_diagnostic(an, d) for d in an.diagnostics]
        self.text_document_publish_diagnostics(T.PublishDiagnosticsParams(uri=uri, diagnostics=diags, version=version))
        return an

    def for_names(self, uri: str) -> Analysis | None:
        """The analysis to answer name questions from: the last one whose document parsed."""
        an = self.analyses.get(uri)
        return an if an is not None and an.index is not None else self.good.get(uri)


server = CtServer()


@server.feature(T.TEXT_DOCUMENT_DID_OPEN)
def _did_open(ls: CtServer, params: T.DidOpenTextDocumentParams) -> None:
    ls.refresh(params.text_document.uri, params.text_document.text, params.text_document.version)


@server.feature(T.TEXT_DOCUMENT_DID_CHANGE)
def _did_change(ls: CtServer, params: T.DidChangeTextDocumentParams) -> None:
    doc = ls.workspace.get_text_document(params.text_document.uri)
    ls.refresh(params.text_document.uri, doc.source, params.text_document.version)


@server.feature(T.TEXT_DOCUMENT_DID_SAVE)
def _did_save(ls: CtServer, params: T.DidSaveTextDocumentParams) -> None:
    doc = ls.workspace.get_text_document(params.text_document.uri)
    ls.refresh(params.text_document.uri, doc.source, doc.version)


@server.feature(T.TEXT_DOCUMENT_DID_CLOSE)
def _did_close(ls: CtServer, params: T.DidCloseTextDocumentParams) -> None:
    ls.analyses.pop(params.text_document.uri, None)
    ls.good.pop(params.text_document.uri, None)
    ls.text_document_publish_diagnostics(T.PublishDiagnosticsParams(uri=params.text_document.uri, diagnostics=[]))


@server.feature(T.TEXT_DOCUMENT_HOVER)
def _hover(ls: CtServer, params: T.HoverParams) -> T.Hover | None:
    an = ls.for_names(params.text_document.uri)
    if an is None:
        return None
    got = hover(an, *ls.cursor(an, params.position))
    if got is None:
        return None
    text, span = got
    return T.Hover(T.MarkupContent(kind=T.MarkupKind.Markdown, value=text), range=ls.range(an, span))


@server.feature(T.TEXT_DOCUMENT_DEFINITION)
def _definition(ls: CtServer, params: T.DefinitionParams) -> T.Location | None:
    an = ls.for_names(params.text_document.uri)
    span = definition(an, *ls.cursor(an, params.position)) if an is not None else None
    return ls.location(an, span) if span is not None else None


@server.feature(T.TEXT_DOCUMENT_REFERENCES)
def _references(ls: CtServer, params: T.ReferenceParams) -> list[T.Location]:
    an = ls.for_names(params.text_document.uri)
    if an is None:
        return []
    spans = references(an, *ls.cursor(an, params.position), include_declaration=params.context.include_declaration)
    return [ls.location(an, s) for s in spans]


@server.feature(T.TEXT_DOCUMENT_COMPLETION, T.CompletionOptions(trigger_characters=[" ", "=", ":", "."]))
def _completion(ls: CtServer, params: T.CompletionParams) -> T.CompletionList:
    doc = ls.workspace.get_text_document(params.text_document.uri)
    an = ls.for_names(params.text_document.uri)
    scratch = Analysis(path_of(params.text_document.uri), doc.source, [], None, an.sources if an else None)  # type: ignore[arg-type]
    line, col = ls.cursor(scratch, params.position)
    items = complete(doc.source, line, col, an.index if an is not None else None)
    return T.CompletionList(
        is_incomplete=False,
        items=[T.CompletionItem(label=i.label, kind=ITEM_KIND.get(i.kind), detail=i.detail or None) for i in items],
    )


def _symbol(ls: CtServer, an: Analysis, row) -> T.DocumentSymbol:
    name, kind, span, name_span, children = row
    return T.DocumentSymbol(
        name=name,
        kind=SYMBOL_KIND.get(kind, T.SymbolKind.Class),
        detail=kind,
        range=ls.range(an, span),
        selection_range=ls.range(an, name_span),
        children=[_symbol(ls, an, c) for c in children] or None,
    )


@server.feature(T.TEXT_DOCUMENT_DOCUMENT_SYMBOL)
def _symbols(ls: CtServer, params: T.DocumentSymbolParams) -> list[T.DocumentSymbol]:
    an = ls.for_names(params.text_document.uri)
    return [_symbol(ls, an, row) for row in outline(an)] if an is not None else []


@server.feature(T.TEXT_DOCUMENT_SEMANTIC_TOKENS_FULL, LEGEND)
def _tokens(ls: CtServer, params: T.SemanticTokensParams) -> T.SemanticTokens:
    doc = ls.workspace.get_text_document(params.text_document.uri)
    an = ls.analyses.get(params.text_document.uri)
    index = an.index if an is not None and an.text == doc.source else None
    return T.SemanticTokens(data=semantic_tokens(doc.source, index, path_of(params.text_document.uri), ls.encoding))


@server.feature(T.TEXT_DOCUMENT_CODE_ACTION, T.CodeActionOptions(code_action_kinds=[T.CodeActionKind.QuickFix]))
def _code_actions(ls: CtServer, params: T.CodeActionParams) -> list[T.CodeAction]:
    an = ls.analyses.get(params.text_document.uri)
    if an is None:
        return []
    out = []
    want = params.range
    for d, fix in an.fixes():
        r = ls.range(an, d.span)
        if (r.end.line, r.end.character) < (want.start.line, want.start.character) or (want.end.line, want.end.character) < (r.start.line, r.start.character):
            continue
        edits = [
            T.TextEdit(ls.range(an, Span(an.path, e.line, e.col, e.end_line, e.end_col)), e.text) for e in fix.edits
        ]
        out.append(
            T.CodeAction(
                title=f"{fix.title} ({d.code})" + ("" if fix.safe else ", unsafe: it changes what the spec means"),
                kind=T.CodeActionKind.QuickFix,
                diagnostics=[ls.lsp_diagnostic(an, d)],
                edit=T.WorkspaceEdit(changes={params.text_document.uri: edits}),
                is_preferred=fix.safe,  # an unsafe fix is offered, never applied as the preferred one
            )
        )
    return out


def serve() -> None:
    """Serve over stdin and stdout until the client exits."""
    server.start_io()


__all__ = ["CtServer", "server", "serve"]
