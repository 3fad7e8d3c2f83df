"""Reading a spec and everything it imports.

`import "path.ct"` is relative to the importing file and may not leave that
file's directory tree (no `..`, no absolute paths, no symlinks out). `import
std.links` reads a preset file shipped inside the package. Each file is read once
however often it is imported; cycles, missing files and depth are diagnosed.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path

from ctdsl import limits
from ctdsl.diagnostics import Diagnostic, DiagnosticSink, Label, Sources, Span, did_you_mean
from ctdsl.syntax import ast
from ctdsl.syntax.parser import parse_text

STD_PREFIX = "<std>/"


class Unreadable(Exception):
    """The root file itself cannot be read: a usage error (exit 2), not a finding.

    `diagnostic()` gives it as diagnostic CT001 for callers that list problems; an
    imported file that cannot be read is CT501 instead, at the import.
    """

    code = "CT001"

    def __init__(self, message: str, path: str | Path | None = None):
        super().__init__(message)
        self.path = str(path) if path is not None else None

    def diagnostic(self) -> Diagnostic:
        return Diagnostic(
            self.code,
            str(self),
            None,
            help="give the path of a UTF-8 text file, e.g. specs/llama70b_wan.ct",
        )


@dataclass
class Loaded:
    root: str
    files: list[ast.SpecFile] = field(default_factory=list)  # root first, then imports in order
    sources: Sources = field(default_factory=Sources)
    std: set[str] = field(default_factory=set)  # display paths of library files
    parse_failed: bool = False


def std_modules() -> list[str]:
    folder = resources.files("ctdsl") / "stdlib"
    return sorted(p.name[:-3] for p in folder.iterdir() if p.name.endswith(".ct"))


def _std_text(name: str) -> str | None:
    f = resources.files("ctdsl") / "stdlib" / f"{name}.ct"
    return f.read_text(encoding="utf-8") if f.is_file() else None


@lru_cache(maxsize=None)
def _parsed_std(display: str, text: str) -> ast.SpecFile | None:
    """Library files are parsed once per process: their syntax trees are immutable."""
    sink = DiagnosticSink()
    spec = parse_text(text, display, sink)
    return spec if not sink.items else None


def display_path(path: Path) -> str:
    try:
        rel = os.path.relpath(path, Path.cwd())
    except ValueError:  # pragma: no cover (another drive on Windows)
        return str(path)
    return str(path) if rel.startswith("..") else rel


def read_source(path: Path) -> str:
    """Read a spec file or raise Unreadable with a message fit for a user."""
    try:
        if path.is_dir():
            raise Unreadable(f"{path} is a directory, not a spec file", path)
        size = path.stat().st_size
        if size > limits.MAX_FILE_BYTES:
            return "\0" * (limits.MAX_FILE_BYTES + 1)  # let the parser report CT601
        data = path.read_bytes()
    except FileNotFoundError:
        raise Unreadable(f"no such file: {path}", path) from None
    except PermissionError:
        raise Unreadable(f"permission denied: {path}", path) from None
    except OSError as exc:
        raise Unreadable(f"cannot read {path}: {exc.strerror or exc}", path) from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise Unreadable(f"{path} is not UTF-8 text (byte {exc.start})", path) from None


def load(root: str | Path, sink: DiagnosticSink, text: str | None = None) -> Loaded:
    """Parse `root` and its imports. Raises Unreadable if the root cannot be read."""
    root_path = Path(root)
    root_text = text if text is not None else read_source(root_path)
    shown_root = str(root)
    out = Loaded(root=shown_root)
    seen: dict[str, str] = {}  # real path or std name -> display path

    def visit(display: str, real: Path | None, src: str, chain: list[tuple[str, Span | None]]) -> None:
        if len(seen) >= limits.MAX_IMPORTS:
            return
        key = str(real) if real is not None else display
        seen[key] = display
        out.sources.add(display, src)
        spec = _parsed_std(display, src) if real is None and display.startswith(STD_PREFIX) else None
        if spec is None:
            spec = parse_text(src, display, sink)
        if spec is None:
            out.parse_failed = True
            return
        out.files.append(spec)
        for stmt in spec.statements:
            if isinstance(stmt, ast.Import):
                follow(stmt, display, real, chain)

    def follow(stmt: ast.Import, importer: str, importer_real: Path | None, chain) -> None:
        if len(chain) >= limits.MAX_IMPORT_DEPTH:
            sink.error(
                "CT505",
                f"imports nest deeper than {limits.MAX_IMPORT_DEPTH} files",
                stmt.span,
                help="flatten the chain of imports",
            )
            return
        if len(seen) >= limits.MAX_IMPORTS:
            sink.error("CT505", f"a spec may read at most {limits.MAX_IMPORTS} files", stmt.span)
            return
        if stmt.module is not None:
            target = _resolve_std(stmt, sink)
            if target is None:
                return
            display, real, src = STD_PREFIX + target + ".ct", None, _std_text(target)
            key = display
        else:
            resolved = _resolve_file(stmt, importer_real, sink)
            if resolved is None:
                return
            real = resolved
            display = display_path(real)
            key = str(real)
            src = None
        on_chain = [c for c in chain if c[0] == key]
        if on_chain:
            names = " -> ".join([seen.get(k, k) for k, _ in chain[chain.index(on_chain[0]):]] + [display])
            sink.error(
                "CT503",
                f"import cycle: {names}",
                stmt.span,
                label="this import closes the cycle",
                help="move what both files need into a third file that imports neither",
            )
            return
        if key in seen:
            return
        if src is None:
            try:
                src = read_source(real)  # type: ignore[arg-type]
            except Unreadable as exc:
                sink.error("CT501", str(exc), stmt.span, label="cannot be read")
                return
        if stmt.module is not None:
            out.std.add(display)
        visit(display, real, src, chain + [(key, stmt.span)])

    # Text given for a path that does not exist (an editor buffer, stdin) still
    # imports relative to where that path would be.
    root_real = root_path.resolve()
    visit(shown_root, root_real, root_text, [(str(root_real) if root_real else shown_root, None)])
    return out


def _resolve_std(stmt: ast.Import, sink: DiagnosticSink) -> str | None:
    parts = stmt.module or ()
    dotted = ".".join(parts)
    if parts[0] != "std" or len(parts) != 2:
        sink.error(
            "CT504",
            f"unknown library module '{dotted}'",
            stmt.span,
            help=f'library modules are std.NAME ({", ".join("std." + m for m in std_modules())}); '
            f'import a file with a quoted path: import "{parts[-1]}.ct"',
        )
        return None
    name = parts[1]
    if name not in std_modules():
        hint = did_you_mean(name, std_modules())
        sink.error(
            "CT504",
            f"unknown library module 'std.{name}'",
            stmt.span,
            help=(hint.replace("'", "'std.", 1) if hint else None)
            or f"the library has {', '.join('std.' + m for m in std_modules())}",
        )
        return None
    return name


def _resolve_file(stmt: ast.Import, importer_real: Path | None, sink: DiagnosticSink) -> Path | None:
    text = stmt.path or ""
    if importer_real is None:
        sink.error("CT502", "a library file cannot import other files", stmt.span)
        return None
    base = importer_real.parent
    if not text.endswith(".ct"):
        sink.error("CT501", f"cannot import '{text}': spec files end in .ct", stmt.span, help=f'write import "{text}.ct"')
        return None
    candidate = Path(text)
    if candidate.is_absolute() or ".." in candidate.parts:
        sink.error(
            "CT502",
            f"import '{text}' leaves the directory of the importing file",
            stmt.span,
            label="imports are confined to the importing file's directory tree",
            help="move the shared file next to (or below) the file that imports it",
        )
        return None
    target = (base / candidate).resolve()
    if not target.is_relative_to(base):
        sink.error(
            "CT502",
            f"import '{text}' resolves outside the directory of the importing file",
            stmt.span,
            help="a symbolic link may not lead out of the spec's directory tree",
        )
        return None
    if target.is_dir():
        sink.error("CT501", f"cannot import '{text}': it is a directory, not a spec file", stmt.span, label="a directory")
        return None
    if not target.is_file():
        # suggest a file of a close name in the folder the import names
        folder = (base / candidate).parent
        near = sorted(p.name for p in folder.glob("*.ct")) if folder.is_dir() and folder.is_relative_to(base) else []
        hint = did_you_mean(candidate.name, near[:200])
        if hint is not None and candidate.parent != Path("."):
            hint = hint.replace("'", f"'{candidate.parent.as_posix()}/", 1)
        sink.error("CT501", f"imported file '{text}' does not exist", stmt.span, label="not found", help=hint)
        return None
    return target


__all__ = ["Loaded", "Unreadable", "load", "std_modules", "read_source", "Label"]
