"""Running lint: find the spec files, check each, run the rules, apply suppressions.

Each file given (or found under a directory given) is a root: it is loaded and
checked (`ctdsl.check`), exactly as `ctdsl check` does. The checker's diagnostics are
reported as they are, with their CT codes. A root that does not check gets only
those; a root that checks is handed to every enabled rule. Findings from all roots
are merged: a file imported by two roots is reported once.

Nothing here imports sympy or numpy: lint must stay fast.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

from ctdsl.check.checker import Checker
from ctdsl.check.loader import Unreadable, display_path, file_kind, load, os_problem, shown
from ctdsl.diagnostics import Diagnostic, DiagnosticSink, Report, Severity, Sources, Span, did_you_mean, sort_diagnostics
from ctdsl.lint.catalogue import INTERNAL_ERROR, RULES, UNUSED_SUPPRESSION, all_rules
from ctdsl.lint.config import LintConfig
from ctdsl.lint.context import Context
from ctdsl.lint.gitignore import GitIgnore
from ctdsl.lint.registry import Rule
from ctdsl.lint.suppressions import Suppression, find_suppressions

_SKIP_DIRS = {"__pycache__", "node_modules", "venv", "build", "dist"}


class UsageError(Exception):
    """A path that does not exist, or settings that make no sense: exit 2."""


@dataclass
class LintReport(Report):
    """A report of `ctdsl lint`: `files` are the roots linted, as shown."""

    tool: str = "ctdsl lint"
    roots: dict = field(default_factory=dict)  # root -> its Loaded and Spec, when asked for (keep=True)
    notes: list[str] = field(default_factory=list)  # said on stderr: how the walk went (an index it could not read)

    def fails(self, fail_on: Severity) -> bool:
        return any(d.severity.rank >= fail_on.rank for d in self.diagnostics)


# ---- finding files ----------------------------------------------------------------------


def _refused(path: Path, why: str) -> tuple[str, Diagnostic]:
    where = shown(shown_path(path))
    return where, Diagnostic(
        "CT001",
        f"{where} not read: {why}",
        None,
        help="lint reads only regular files inside the directories it is given; name a file outside them to lint it",
    )


def _walked_file(p: Path, root_real: str) -> str | None:
    """Why a *.ct found under a linted directory is not read, or None to lint it.

    A symbolic link is resolved and must stay inside the directory (its target is
    never opened, and never named, when it leads outside); only regular files are read.
    """
    try:
        str(p).encode("utf-8")
    except UnicodeEncodeError:
        return "the file name is not valid UTF-8"
    try:
        st = os.lstat(p)
        if stat.S_ISLNK(st.st_mode):
            real = os.path.realpath(p)
            if os.path.commonpath([real, root_real]) != root_real:
                return "a symbolic link that leads outside the linted directory"
            st = os.stat(p)
    except (OSError, ValueError) as exc:
        return os_problem(exc)
    kind = file_kind(st.st_mode)
    return f"it is {kind}, not a spec file" if kind is not None else None


def _walk(top: Path, config: LintConfig, add, refused: list[tuple[str, Diagnostic]], git: GitIgnore | None) -> None:
    """Add every *.ct under `top` that may be read, and CT001 for each that may not."""
    # os.walk does not enter symbolic links to directories (followlinks=False): no
    # cycles, and no way out of `top` through a linked directory.
    root_real = os.path.realpath(top)

    def skipped(p: Path, is_dir: bool) -> bool:
        return config.excluded(p) or (git is not None and git.ignored(p, is_dir, top))

    def unreadable_dir(exc: OSError) -> None:
        refused.append(_refused(Path(exc.filename or top), os_problem(exc)))

    for folder, dirs, files in os.walk(top, onerror=unreadable_dir):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in _SKIP_DIRS and not skipped(Path(folder) / d, True))
        for name in sorted(files):
            if not name.endswith(".ct"):
                continue
            p = Path(folder) / name
            if skipped(p, False):
                continue
            why = _walked_file(p, root_real)
            if why is None:
                add(p, top)
            else:
                refused.append(_refused(p, why))


def discover(
    paths: Iterable[str], config: LintConfig, notes: list[str] | None = None
) -> tuple[list[tuple[Path, Path | None]], list[str], list[tuple[str, Diagnostic]]]:
    """The spec files to lint (sorted within each directory), each with the folder walked to
    find it (None for a file named on the command line), the paths that do not exist, and
    CT001 for each file found under a directory that is not read.

    One path policy holds for both (`ctdsl.check.reading.confine`): a file found in a walk
    is read only inside the folder walked, a file named on the command line only inside its
    own folder; a symbolic link that leads out is refused either way.
    """
    out: list[tuple[Path, Path | None]] = []
    missing: list[str] = []
    refused: list[tuple[str, Diagnostic]] = []
    seen: set[str] = set()
    git = GitIgnore() if config.respect_gitignore else None  # one for every walk: each repository's index read once

    def add(p: Path, within: Path | None = None) -> None:
        key = os.path.abspath(p)
        if key not in seen and not config.excluded(p):
            seen.add(key)
            out.append((p, within))

    for raw in paths:
        p = Path(raw)
        try:
            raw.encode("utf-8")
            st = os.stat(p)
        except FileNotFoundError:
            if os.path.islink(p):
                add(p)  # a dangling link named on the command line: the loader says so
            else:
                missing.append(raw)
            continue
        except UnicodeEncodeError:
            refused.append(_refused(p, "the file name is not valid UTF-8"))
            continue
        except (OSError, ValueError) as exc:  # a NUL, a name too long, a link loop, permission
            refused.append(_refused(p, os_problem(exc)))
            continue
        if stat.S_ISDIR(st.st_mode):
            _walk(p, config, add, refused, git)
        else:
            add(p)  # a file named on the command line: read inside its own folder (the loader checks)
    if git is not None and notes is not None:
        for repo in sorted(git.unknown):
            notes.append(f"cannot read git's index in {shown(shown_path(Path(repo)))}: .gitignore files there skipped nothing")
    return out, missing, refused


def shown_path(p: Path) -> str:
    """The path as diagnostics show it: relative to the current directory when inside it."""
    return display_path(Path(os.path.abspath(p)))


# ---- one root -------------------------------------------------------------------------------


@dataclass
class _RootResult:
    path: str
    diagnostics: list[Diagnostic]
    sources: Sources
    linted_files: set[str]  # user files whose rules ran (the root and its imports), if it checked
    ok: bool
    loaded: object = None  # the Loaded (syntax trees) and the checked Spec, for an editor
    spec: object = None


def lint_one(path: str, rules: list[Rule], text: str | None = None, within: Path | None = None) -> _RootResult:
    """Check one root and run `rules` on it. Raises Unreadable if the file cannot be read
    (or, under the path policy, may not be: `within` is the folder walked to find it)."""
    sink = DiagnosticSink()
    loaded = load(path, sink, text=text, within=within)
    spec = None if loaded.parse_failed else Checker(loaded, sink, {}).run()
    diags = sort_diagnostics(sink.items)
    if spec is None or sink.has_errors:
        return _RootResult(path, diags, loaded.sources, set(), False, loaded, None)
    files = {f.path for f in loaded.files}
    ctx = Context(spec, loaded.files, loaded.sources, loaded.std)
    for r in rules:
        if r.check is None:
            continue
        try:
            for hit in r.check(ctx):
                diags.append(
                    Diagnostic(r.code, hit.message, hit.span, r.severity, hit.label, hit.secondary, hit.notes, hit.help)
                )
        except Exception as exc:  # noqa: BLE001 - a bug in a rule must not become a traceback
            diags.append(
                Diagnostic(
                    INTERNAL_ERROR,
                    f"lint rule {r.code} ({r.name}) failed on this spec: {type(exc).__name__}: {exc}",
                    Span(path, 1, 1, 1, 2),
                    Severity.ERROR,
                    help="this is a bug in ctdsl: please report it with the spec; --ignore "
                    f"{r.code} skips the rule meanwhile",
                )
            )
    user_files = {f for f in files if not ctx.is_std(f)}
    return _RootResult(path, diags, loaded.sources, user_files, True, loaded, spec)


# ---- suppressions ---------------------------------------------------------------------------


def _apply_suppressions(
    diags: list[Diagnostic],
    table: dict[tuple[str, int], list[Suppression]],
) -> tuple[list[Diagnostic], int]:
    kept: list[Diagnostic] = []
    dropped = 0
    for d in diags:
        sups = table.get((d.span.file, d.span.line), []) if d.span is not None and d.code in RULES else []
        hit = [s for s in sups if d.code in {c.upper() for c in s.codes}]
        if hit:
            for s in hit:
                s.used.add(d.code)
            dropped += 1
        else:
            kept.append(d)
    return kept, dropped


def _unused_suppressions(sups: list[Suppression], config: LintConfig) -> list[Diagnostic]:
    rule = RULES[UNUSED_SUPPRESSION]
    out: list[Diagnostic] = []

    def diag(message: str, span: Span, label: str, help_: str) -> Diagnostic:
        return Diagnostic(rule.code, message, span, rule.severity, label, help=help_)

    for s in sups:
        if not s.codes:
            out.append(
                diag(
                    "suppression names no code",
                    s.span,
                    "suppresses nothing",
                    "name the rules it silences: # ctdsl: ignore[CTL003]",
                )
            )
            continue
        for written, span in s.codes.items():
            code = written.upper()
            if code in RULES and RULES[code].check is not None:
                if config.enabled(code) and code not in s.used:
                    out.append(
                        diag(
                            f"unused suppression: no {code} ({RULES[code].name}) finding on this line",
                            span,
                            "suppresses nothing",
                            "remove it; a stale suppression would hide the next finding here",
                        )
                    )
            elif code.startswith("CT") and not code.startswith("CTL"):
                out.append(
                    diag(
                        f"suppression names checker code {code}, which cannot be suppressed",
                        span,
                        "a checker error",
                        "fix the spec: a spec with checker errors cannot be solved",
                    )
                )
            elif code not in RULES:
                out.append(
                    diag(
                        f"suppression names unknown code '{written}'",
                        span,
                        "not a lint code",
                        did_you_mean(code, [r.code for r in all_rules()] + [r.name for r in all_rules()])
                        or "lint codes are listed by ctdsl lint --explain CODE and in docs/lint-rules.md",
                    )
                )
    return out


# ---- many roots -------------------------------------------------------------------------------


def _merge_sources(into: Sources, src: Sources, files: Iterable[str]) -> None:
    for f in files:
        if into.text(f) is None:
            text = src.text(f)
            if text is not None:
                into.add(f, text)


def _span_files(d: Diagnostic) -> set[str]:
    out = {d.span.file} if d.span is not None else set()
    out |= {l.span.file for l in d.secondary}
    return out


def lint_paths(paths: Iterable[str], config: LintConfig, texts: dict[str, str] | None = None) -> LintReport:
    """Lint every spec file in `paths` (files, or directories walked for *.ct).

    Raises UsageError if a path does not exist. `texts` gives the text of a path
    instead of reading it (an editor buffer).
    """
    notes: list[str] = []
    files, missing, refused = discover(paths, config, notes)
    if missing:
        raise UsageError("; ".join(f"no such file or directory: {shown(m)}" for m in missing))
    within = {shown_path(p): top for p, top in files if top is not None}
    report = lint_files([shown_path(p) for p, _ in files], config, texts, within=within)
    for where, d in refused:
        report.unreadable.append(d)
        report.origin.setdefault(d, where)
    report.notes += notes
    return report


def _one(args: tuple[str, tuple[str, ...], str | None, Path | None], keep_trees: bool = False) -> _RootResult | Diagnostic:
    """Lint one root, keeping only the source text its report needs (and its trees if asked)."""
    root, codes, text, within = args
    try:
        res = lint_one(root, [RULES[c] for c in codes], text=text, within=within)
    except Unreadable as exc:
        return exc.diagnostic()
    keep = Sources()
    _merge_sources(keep, res.sources, set().union(*(_span_files(d) for d in res.diagnostics), {root}, res.linted_files))
    res.sources = keep
    if not keep_trees:
        res.loaded = res.spec = None
    return res


def _lint_roots(
    roots: list[str], codes: tuple[str, ...], texts: dict[str, str], keep: bool, within: dict[str, Path]
) -> list[_RootResult | Diagnostic]:
    return [_one((r, codes, texts.get(r), within.get(r)), keep) for r in roots]


def lint_files(
    roots: list[str],
    config: LintConfig,
    texts: dict[str, str] | None = None,
    keep: bool = False,
    within: dict[str, Path] | None = None,
) -> LintReport:
    """Lint `roots`; with `keep`, `report.roots` holds each root's (Loaded, Spec or None).
    `within` gives the folder walked for a root found in a directory (the path policy)."""
    codes = tuple(r.code for r in all_rules() if config.enabled(r.code))
    report = LintReport(files=list(roots))
    all_diags: list[Diagnostic] = []
    linted: set[str] = set()
    checked_roots: set[str] = set()
    for root, res in zip(roots, _lint_roots(roots, codes, texts or {}, keep, within or {})):
        if isinstance(res, Diagnostic):  # the root cannot be read: CT001
            report.unreadable.append(res)
            report.origin.setdefault(res, root)
            continue
        if keep:
            report.roots[root] = (res.loaded, res.spec)
        for d in res.diagnostics:
            if d.span is None:
                report.origin.setdefault(d, root)
        all_diags += res.diagnostics
        _merge_sources(report.sources, res.sources, set().union(*(_span_files(d) for d in res.diagnostics), {root}, res.linted_files))
        if res.ok:
            linted |= res.linted_files
            checked_roots.add(root)
    diags = sort_diagnostics(all_diags)
    if config.per_file_ignores:  # [tool.ctdsl.lint.per-file-ignores]: lint codes only, never a checker error
        diags = [d for d in diags if not (d.span is not None and d.code in RULES and config.ignored_in(d.span.file, d.code))]
    # suppressions in every user file whose rules ran
    sups: list[Suppression] = []
    for f in sorted(linted):
        text = report.sources.text(f)
        if text is not None:
            sups += find_suppressions(f, text)
    table: dict[tuple[str, int], list[Suppression]] = {}
    for s in sups:
        table.setdefault((s.file, s.line), []).append(s)
    diags, report.suppressed = _apply_suppressions(diags, table)
    if config.enabled(UNUSED_SUPPRESSION):
        diags += _unused_suppressions([s for s in sups if s.file in checked_roots], config)
    report.diagnostics = sorted(sort_diagnostics(diags), key=lambda d: (*d.sort_key(), d.message))
    return report


__all__ = ["LintReport", "UsageError", "discover", "lint_paths", "lint_files", "lint_one", "shown_path"]
