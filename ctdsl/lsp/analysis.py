"""One open document, checked and linted, and what an editor asks of it.

`analyse(path, text)` runs exactly what `ctdsl lint` runs on the buffer (the
checker, then the rules, with suppressions), keeping the syntax trees and the
checked model. The standard library is parsed once per process (the loader
caches its trees), so a change re-parses and re-checks only the document and
its own imports. Hover, definition, references and document symbols read the
result; completion reads the text (it must work while the text does not parse).
Nothing here knows the protocol: `ctdsl.lsp.server` converts.

Hover is Markdown an editor renders: every text from a spec in it (a value as
written, a display name, a file's name, an import's path, a spec excerpt) goes
through the report's Markdown encoder (`ctdsl.report.encode`: `md_cell`,
`md_text`, `md_code`, `md_fence`), so that a spec cannot put a link, a remote
image or HTML into the editor.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import cached_property
from importlib import resources

from ctdsl import units as U
from ctdsl.check.loader import STD_PREFIX
from ctdsl.diagnostics import Diagnostic, Label, Severity, Sources, Span
from ctdsl.diagnostics.lines import LineIndex
from ctdsl.language.schema import KINDS, STAGES
from ctdsl.lint.config import ConfigError, LintConfig, resolve_config
from ctdsl.lint.fixes import Fix, fix_for
from ctdsl.lint.runner import lint_files
from ctdsl.lsp.index import Index, Occurrence, Symbol
from ctdsl.model import expr as E
from ctdsl.report.encode import md_cell, md_code, md_fence, md_text
from ctdsl.syntax import ast


@dataclass
class Analysis:
    path: str  # the document's path, absolute: its display name in diagnostics
    text: str
    diagnostics: list[Diagnostic]  # every finding about this document
    index: Index | None  # None when the document itself does not parse
    sources: Sources
    spec: object = None  # the checked Spec, when it checks

    @cached_property
    def index_of_text(self) -> LineIndex:
        """The document's lines, counted as the parser counts them."""
        return LineIndex(self.text)

    def fixes(self) -> list[tuple[Diagnostic, Fix]]:
        out = []
        for d in self.diagnostics:
            f = fix_for(d, self.index_of_text) if d.span is not None and d.span.file == self.path else None
            if f is not None:
                out.append((d, f))
        return out


_CONFIGS: dict[str, LintConfig] = {}


def _config(path: str) -> LintConfig:
    folder = os.path.dirname(path)
    if folder not in _CONFIGS:
        try:
            _CONFIGS[folder] = resolve_config(path)
        except ConfigError:
            _CONFIGS[folder] = LintConfig()  # a broken pyproject: lint with the defaults; `ctdsl lint` says why
    return _CONFIGS[folder]


def analyse(path: str, text: str) -> Analysis:
    report = lint_files([path], _config(path), {path: text}, keep=True)
    loaded, spec = report.roots.get(path, (None, None))
    ok = loaded is not None and loaded.files and loaded.files[0].path == path
    imports = [st for st in loaded.files[0].statements if isinstance(st, ast.Import)] if ok else []
    diags = []
    for d in report.all():
        if d.span is None or d.span.file == path:
            diags.append(d)
        elif not d.span.file.startswith(STD_PREFIX) and d.severity is Severity.ERROR:
            diags.append(_at_import(d, path, imports))
    index = Index(loaded.files) if ok else None
    sources = loaded.sources if loaded is not None else Sources()
    return Analysis(path, text, diags, index, sources, spec)


def _at_import(d: Diagnostic, path: str, imports: list[ast.Import]) -> Diagnostic:
    """An error in an imported file, shown at the import that reads it (else at the first
    import, else line 1), with the place itself as a related location."""
    target = os.path.abspath(file_of(d.span.file))
    here = os.path.dirname(path)
    stmt = next((i for i in imports if i.path and os.path.abspath(os.path.join(here, i.path)) == target), None)
    stmt = stmt or (imports[0] if imports else None)
    span = stmt.span if stmt is not None else Span(path, 1, 1, 1, 2)
    where = f"{d.span.file}:{d.span.line}:{d.span.col}"
    return Diagnostic(
        d.code,
        f"in imported file {where}: {d.message}",
        span,
        d.severity,
        "the imported file has an error",
        (Label(d.span, d.label or "here"),) + d.secondary,
        d.notes,
        d.help,
    )


def file_of(display: str) -> str:
    """The file on disk behind a display path: a library module's is inside the package."""
    if display.startswith(STD_PREFIX):
        return str(resources.files("ctdsl") / "stdlib" / display[len(STD_PREFIX) :])
    return os.path.abspath(display)


def _text_at(sources: Sources, span: Span) -> str:
    lines = [sources.line(span.file, n) or "" for n in range(span.line, span.end_line + 1)]
    if not lines:
        return ""
    if len(lines) == 1:
        return lines[0][span.col - 1 : span.end_col - 1]
    lines[0] = lines[0][span.col - 1 :]
    lines[-1] = lines[-1][: span.end_col - 1]
    return "\n".join(lines)


def _where(span: Span) -> str:
    """Where a span is, as Markdown text (a file's name is the spec's to choose)."""
    return md_text(f"{span.file}:{span.line}")


# ---- hover -----------------------------------------------------------------------


def _param_hover(an: Analysis, s: Symbol) -> str:
    node: ast.Param = s.node  # type: ignore[assignment]
    out = [md_fence(_text_at(an.sources, node.span), "ct")]
    p = an.spec.params.get(s.name) if an.spec is not None else None
    if p is not None:
        scale = float(p.unit_scale) or 1.0
        unit = f" {p.unit}" if p.unit else ""
        out.append(f"**param** {md_code(s.name)} = {p.default / scale:g}{' ' + md_text(p.unit) if p.unit else ''}")
        out.append(f"unit: {md_text(p.unit) if p.unit else 'none (a pure number)'}")
        if p.lo is not None and p.hi is not None:
            sweep = f", {p.spacing.value}" if p.spacing is not None else ""
            sweep += f", {p.count} points" if p.count else ""
            out.append(md_text(f"range: {p.lo / scale:g}{unit} .. {p.hi / scale:g}{unit}{sweep}"))
        if p.display:
            out.append(f"display: {md_code(p.display)}")
    out.append(f"defined at {_where(s.span)}")
    return "\n\n".join(out)


def _resolved_fields(an: Analysis, block: ast.Block) -> list[tuple[str, str, str]]:
    """(key, value as written, where it comes from) for a block and its bases, nearest first."""
    assert an.index is not None
    rows: list[tuple[str, str, str]] = []
    seen_keys: set[str] = set()
    seen_blocks: set[str] = set()
    b: ast.Block | None = block
    while b is not None and b.name.text not in seen_blocks:
        seen_blocks.add(b.name.text)
        origin = "this block" if b is block else f"{md_code(b.name.text)} ({_where(b.name.span)})"
        for item in b.items:
            key = item.key.text if isinstance(item, ast.Field) else item.name.text
            if key in seen_keys:
                continue
            seen_keys.add(key)
            value = _text_at(an.sources, item.value.span) if isinstance(item, ast.Field) else "{ ... }"
            rows.append((key, value, origin))
        b = an.index.block_named(b.base.text) if b.base is not None else None
    return rows


def _evaluated(an: Analysis, name: str, kind: str, key: str) -> str:
    d = an.spec.definition(name) if an.spec is not None else None
    expr = getattr(d, key, None) if d is not None else None
    if not isinstance(expr, E.Expr):
        return ""
    try:
        value = E.evaluate(expr, an.spec.defaults())
    except (E.EvalError, TypeError, ZeroDivisionError, OverflowError):
        return ""
    fs = KINDS.get(kind, {}).get(key)
    return U.format_quantity(value, fs.dim) if fs is not None and fs.dim is not None else f"{value:g}"


def _block_hover(an: Analysis, s: Symbol) -> str:
    node: ast.Block = s.node  # type: ignore[assignment]
    head = f"{node.kind} {node.name.text}" + (f" : {node.base.text}" if node.base else "")
    out = [f"**{md_text(head)}**", f"defined at {_where(s.span)}"]
    rows = _resolved_fields(an, node)
    if rows:
        table = ["| field | value | from |", "|---|---|---|"]
        for key, value, origin in rows:
            written = value.replace("\n", " ")
            ev = _evaluated(an, s.name, node.kind, key)
            shown = md_cell(written)
            if ev and ev.replace(" ", "") != written.replace(" ", ""):
                shown += f" (= {md_cell(ev)})"
            table.append(f"| {md_code(key)} | {shown} | {origin.replace('|', '&#124;')} |")
        out.append("\n".join(table))
    if s.span.file.startswith(STD_PREFIX):
        out.append(f"preset from the standard library ({_where(node.span)}):\n\n{md_fence(_text_at(an.sources, node.span), 'ct')}")
    return "\n\n".join(out)


def _key_hover(an: Analysis, occ: Occurrence) -> str | None:
    assert an.index is not None
    owner = occ.owner or occ.block
    b = an.index.block_named(owner) if owner else None
    if b is None:
        return None
    fs = KINDS.get(b.kind, {}).get(occ.name) or next((st[occ.name] for st in STAGES.values() if occ.name in st), None)
    out = [f"**{b.kind}.{occ.name}**" + (f": {fs.doc}" if fs is not None else "")]
    if fs is not None and fs.dim is not None:
        out.append(f"dimension: {fs.dim.symbol() if not fs.dim.dimensionless else 'a pure number'}")
    if fs is not None and fs.example:
        out.append(f"e.g. `{occ.name} = {fs.example}`")
    where = an.index.field_span(owner, occ.name)
    if where is not None and where != occ.span:
        holder = an.index.block_at(where)
        out.append(f"inherited from {md_code(holder.name.text if holder else '?')} ({_where(where)})")
    return "\n\n".join(out)


def hover(an: Analysis, line: int, col: int) -> tuple[str, Span] | None:
    """Markdown for the name under (line, col), and the span it is about."""
    if an.index is None:
        return None
    occ = an.index.at(an.path, line, col)
    if occ is None:
        return None
    if occ.role in ("key", "stage"):
        text = _key_hover(an, occ)
        return (text, occ.span) if text else None
    if occ.role == "kind":
        fields = ", ".join(f"`{k}`" for k in KINDS.get(occ.name, {}))
        return f"**{occ.name}** block; fields: {fields}", occ.span
    if occ.role == "import":
        return f"imports {md_code(occ.block or '')} ({md_text(file_of(_import_display(an, occ) or ''))})", occ.span
    s = an.index.symbols.get(occ.name)
    if s is None:
        return None
    return (_param_hover(an, s) if s.kind == "param" else _block_hover(an, s)), occ.span


def _import_display(an: Analysis, occ: Occurrence) -> str | None:
    target = occ.block or ""
    if target.startswith("std."):
        return f"{STD_PREFIX}{target[4:]}.ct"
    return os.path.normpath(os.path.join(os.path.dirname(an.path), target)) if target else None


# ---- definition, references, symbols ------------------------------------------------------


def definition(an: Analysis, line: int, col: int) -> Span | None:
    if an.index is None:
        return None
    occ = an.index.at(an.path, line, col)
    if occ is None:
        return None
    if occ.role == "import":
        display = _import_display(an, occ)
        return Span(display, 1, 1, 1, 1) if display else None
    return an.index.definition_of(occ)


def references(an: Analysis, line: int, col: int, include_declaration: bool = True) -> list[Span]:
    if an.index is None:
        return []
    occ = an.index.at(an.path, line, col)
    if occ is None or occ.role not in ("def", "ref", "base") or occ.name not in an.index.symbols:
        return []
    spans = an.index.references(occ.name)
    if not include_declaration:
        spans = [s for s in spans if s != an.index.symbols[occ.name].span]
    return sorted(spans)


def outline(an: Analysis) -> list[tuple[str, str, Span, Span, list]]:
    """(name, kind, whole span, name span, children) for the document's statements."""
    if an.index is None:
        return []
    out = []
    for st in an.index.files[0].statements:
        if isinstance(st, ast.Param):
            out.append((st.name.text, "param", st.span, st.name.span, []))
        elif isinstance(st, ast.Block):
            out.append((st.name.text, st.kind, st.span, st.name.span, _children(st.items)))
        elif isinstance(st, ast.Wan):
            out.append((f"{st.a.text} {'<->' if st.both else '->'} {st.b.text}", "wan", st.span, st.a.span, []))
        elif isinstance(st, ast.Breakeven):
            out.append((f"{st.x.text} vs {st.y.text} over {st.over.text}", "breakeven", st.span, st.x.span, []))
        elif isinstance(st, ast.Baseline):
            out.append((st.scheme.text, "baseline", st.span, st.scheme.span, []))
        elif isinstance(st, ast.Import):
            out.append((".".join(st.module) if st.module else st.path or "", "import", st.span, st.span, []))
    return out


def _children(items) -> list:
    out = []
    for item in items:
        if isinstance(item, ast.Field):
            out.append((item.key.text, "field", item.span, item.key.span, []))
        elif isinstance(item, ast.Stage):
            out.append((item.name.text, "stage", item.span, item.name.span, _children(item.items)))
    return out


__all__ = ["Analysis", "analyse", "definition", "file_of", "hover", "outline", "references"]
