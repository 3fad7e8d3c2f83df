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
from ctdsl.check.reading import TooLarge, Unreadable, file_kind, os_problem, read_source, shown, stat_source
from ctdsl.diagnostics import Diagnostic, DiagnosticSink, Label, Sources, Span, did_you_mean
from ctdsl.syntax import ast
from ctdsl.syntax.parser import parse_text

STD_PREFIX = "<std>/"


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


# Bytes of all the files one spec reads (the root and every import): a fan-out of
# imports each near MAX_FILE_BYTES would otherwise make the parser work for minutes.
# Import statements followed in one load: each costs a path resolution (and a
# missing one a diagnostic). Both belong in ctdsl/limits.py, which lists them in
# docs/language.md; until they move there these are the values.
MAX_LOAD_BYTES = limits.MAX_LOAD_BYTES
MAX_IMPORT_STATEMENTS = limits.MAX_IMPORT_STATEMENTS
_NEAR_NAME_HINTS = 20  # missing imports per load that get a "did you mean" (each lists a folder)


class _Loader:
    """One load: the files seen, the bytes read, and the limits already reported."""

    def __init__(self, out: Loaded, sink: DiagnosticSink, size: int):
        self.out = out
        self.sink = sink
        self.seen: dict[str, str] = {}  # real path or std name -> display path
        self.bytes = size  # read so far, the root included
        self.reported: set[str] = set()  # each bound is reported once, at the first import past it
        self.statements = 0  # import statements followed

    def visit(self, display: str, real: Path | None, src: str, chain: list[tuple[str, Span | None]]) -> None:
        key = str(real) if real is not None else display
        self.seen[key] = display
        self.out.sources.add(display, src)
        spec = _parsed_std(display, src) if real is None and display.startswith(STD_PREFIX) else None
        if spec is None:
            spec = parse_text(src, display, self.sink)
        if spec is None:
            self.out.parse_failed = True
            return
        self.out.files.append(spec)
        for stmt in spec.statements:
            if isinstance(stmt, ast.Import):
                self.follow(stmt, real, chain)

    def once(self, what: str, stmt: ast.Import, message: str, help_: str) -> None:
        if what not in self.reported:
            self.reported.add(what)
            self.sink.error("CT505", message, stmt.span, label="not read", help=help_)

    def follow(self, stmt: ast.Import, importer_real: Path | None, chain) -> None:
        size = 0
        self.statements += 1
        if self.statements > MAX_IMPORT_STATEMENTS:
            self.once(
                "statements",
                stmt,
                f"a spec and its imports may have at most {MAX_IMPORT_STATEMENTS} import statements",
                "import each file once",
            )
            return
        if stmt.module is not None:
            target = _resolve_std(stmt, self.sink)
            if target is None:
                return
            display, real, src = STD_PREFIX + target + ".ct", None, _std_text(target)
            key = display
        else:
            resolved = _resolve_file(stmt, importer_real, self.sink, self.statements <= _NEAR_NAME_HINTS)
            if resolved is None:
                return
            real, size = resolved
            display, key, src = display_path(real), str(real), None
        on_chain = [c for c in chain if c[0] == key]
        if on_chain:
            names = " -> ".join([self.seen.get(k, k) for k, _ in chain[chain.index(on_chain[0]) :]] + [display])
            self.sink.error(
                "CT503",
                f"import cycle: {names}",
                stmt.span,
                label="this import closes the cycle",
                help="move what both files need into a third file that imports neither",
            )
            return
        if key in self.seen:
            return
        if len(chain) >= limits.MAX_IMPORT_DEPTH:
            self.sink.error(
                "CT505",
                f"imports nest deeper than {limits.MAX_IMPORT_DEPTH} files",
                stmt.span,
                help="flatten the chain of imports",
            )
            return
        if len(self.seen) >= limits.MAX_IMPORTS:
            self.once("count", stmt, f"a spec may read at most {limits.MAX_IMPORTS} files", "import fewer, larger files")
            return
        if size > limits.MAX_FILE_BYTES:
            self.sink.error("CT601", f"imported file {shown(display)} is larger than {limits.MAX_FILE_BYTES // 1024} KiB", stmt.span, label="not read")
            return
        if self.bytes + size > MAX_LOAD_BYTES:
            self.once(
                "bytes",
                stmt,
                f"the files of one spec may add up to at most {MAX_LOAD_BYTES // 1024} KiB",
                "a spec and its imports are a few pages of definitions: import less",
            )
            return
        if src is None:
            try:
                src = read_source(real)  # type: ignore[arg-type]
            except TooLarge as exc:
                self.sink.error("CT601", f"imported file {exc}", stmt.span, label="not read")
                return
            except Unreadable as exc:
                self.sink.error("CT501", str(exc), stmt.span, label="cannot be read")
                return
            self.bytes += len(src.encode("utf-8", "surrogatepass"))
        if stmt.module is not None:
            self.out.std.add(display)
        self.visit(display, real, src, chain + [(key, stmt.span)])


def load(root: str | Path, sink: DiagnosticSink, text: str | None = None, within: Path | None = None) -> Loaded:
    """Parse `root` and its imports. Raises Unreadable if the root cannot be read.

    The root is read under the path policy (`reading.confine`): inside its own
    folder, or inside `within` (the folder lint walked to find it); a symbolic
    link out of it is not followed. A root over the size limit is not an
    Unreadable: it is diagnostic CT601 (a finding), with parse_failed set.
    """
    root_path = Path(root)
    shown_root = str(root)
    out = Loaded(root=shown_root)
    if text is None:
        try:
            text = read_source(root_path, within)
        except TooLarge as exc:
            sink.error("CT601", str(exc), Span(shown_root, 1, 1, 1, 2), help="a spec is a page of definitions; split it with imports")
            out.parse_failed = True
            return out
    # Text given for a path that does not exist (an editor buffer, stdin) still
    # imports relative to where that path would be.
    try:
        root_real = root_path.resolve()
    except (OSError, ValueError, RuntimeError) as exc:
        raise Unreadable(f"cannot read {shown(root_path)}: {os_problem(exc)}", root_path) from None
    loader = _Loader(out, sink, len(text.encode("utf-8", "surrogatepass")))
    loader.visit(shown_root, root_real, text, [(str(root_real), None)])
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


def _outside(stmt: ast.Import, text: str, how: str, help_: str) -> Diagnostic:
    return Diagnostic(
        "CT502",
        f"import '{shown(text)}' {how} the directory of the importing file",
        stmt.span,
        label="imports are confined to the importing file's directory tree",
        help=help_,
    )


def _resolve_file(stmt: ast.Import, importer_real: Path | None, sink: DiagnosticSink, hint: bool = True) -> tuple[Path, int] | None:
    """The real path of an imported file and its size, or None after a diagnostic.

    The path is resolved (symbolic links followed) before the containment check, so
    a link cannot lead out of the importing file's tree; nothing is opened here.
    """
    text = stmt.path or ""
    if importer_real is None:
        sink.error("CT502", "a library file cannot import other files", stmt.span)
        return None
    base = importer_real.parent
    if not text.endswith(".ct"):
        sink.error("CT501", f"cannot import '{shown(text)}': spec files end in .ct", stmt.span, help=f'write import "{shown(text)}.ct"')
        return None
    if "\0" in text:
        sink.error("CT501", f"cannot import '{shown(text)}': the path contains a NUL byte", stmt.span, label="not a path")
        return None
    candidate = Path(text)
    if candidate.is_absolute() or ".." in candidate.parts:
        sink.add(_outside(stmt, text, "leaves", "move the shared file next to (or below) the file that imports it"))
        return None
    try:
        target = (base / candidate).resolve()
        inside = target.is_relative_to(base)
        st = os.stat(target) if inside else None
    except FileNotFoundError:
        _not_found(stmt, text, base, candidate, sink, hint)
        return None
    except (OSError, ValueError, RuntimeError) as exc:
        sink.error("CT501", f"cannot import '{shown(text)}': {os_problem(exc)}", stmt.span, label="cannot be read")
        return None
    if st is None:
        sink.add(_outside(stmt, text, "resolves outside", "a symbolic link may not lead out of the spec's directory tree"))
        return None
    kind = file_kind(st.st_mode)
    if kind is not None:
        sink.error("CT501", f"cannot import '{shown(text)}': it is {kind}, not a spec file", stmt.span, label=kind.split(" (")[0])
        return None
    return target, st.st_size


def _not_found(stmt: ast.Import, text: str, base: Path, candidate: Path, sink: DiagnosticSink, hint: bool) -> None:
    # suggest a file of a close name in the folder the import names (the first 1,000 entries)
    folder = (base / candidate).parent
    near: list[str] = []
    try:
        if hint and folder.resolve().is_relative_to(base):
            with os.scandir(folder) as entries:
                for i, e in enumerate(entries):
                    if i >= 1000:
                        break
                    if e.name.endswith(".ct"):
                        near.append(e.name)
    except (OSError, ValueError, RuntimeError):
        near = []
    near_name = did_you_mean(candidate.name, sorted(near)[:200]) if near else None
    if near_name is not None and candidate.parent != Path("."):
        near_name = near_name.replace("'", f"'{candidate.parent.as_posix()}/", 1)
    sink.error("CT501", f"imported file '{shown(text)}' does not exist", stmt.span, label="not found", help=near_name)


__all__ = ["Loaded", "Unreadable", "TooLarge", "load", "std_modules", "read_source", "stat_source", "file_kind", "os_problem", "shown", "Label"]
