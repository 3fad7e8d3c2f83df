"""Lint settings: the command line over `[tool.ctdsl.lint]` in pyproject.toml.

    [tool.ctdsl.lint]
    select = ["CTL"]            # codes or code prefixes to run (default: every rule)
    ignore = ["CTL009"]         # codes or prefixes not to run
    fail-on = "warning"         # exit 1 on findings at or above: error (default), warning, info
    exclude = ["tests/lint/fixtures/**", "scratch/*.ct"]   # paths never linted
    respect-gitignore = true    # directory walks skip what .gitignore ignores (default; never a tracked file)
    unsafe-fixes = false        # --fix applies safe fixes only (default), as ruff does

    [tool.ctdsl.lint.per-file-ignores]   # codes or prefixes not reported in the files a glob matches
    "examples/*.ct" = ["CTL001"]
    "legacy_*.ct" = ["CTL006", "CTL009"] # a pattern without '/' matches a file name in any folder
    "!specs/**" = ["CTL009"]             # a leading '!': every file the rest does not match

The file is found by searching upward from the first path given (or the current
directory) for a pyproject.toml that has a [tool.ctdsl] table; a key of
[tool.ctdsl] other than the `lint` table is a mistake, not ignored. Exclude
and per-file-ignores patterns are globs relative to that file's directory (as
ruff's are: `*` may cross a `/`, a pattern without `/` also matches a file's
name in any folder). A value given on the command
line replaces the configured one. Mistakes here are usage errors (exit 2).
"""

from __future__ import annotations

import fnmatch
import os
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path

from ctdsl.check.reading import Unreadable, read_source
from ctdsl.diagnostics import Severity
from ctdsl.lint.catalogue import all_rules

KEYS = ("select", "ignore", "per-file-ignores", "fail-on", "exclude", "respect-gitignore", "unsafe-fixes")
TABLES = ("lint",)  # the tables [tool.ctdsl] may hold
FAIL_ON = ("error", "warning", "info")


class ConfigError(Exception):
    """A bad setting: a usage error (exit 2)."""


@dataclass(frozen=True)
class LintConfig:
    select: tuple[str, ...] | None = None  # None: every rule
    ignore: tuple[str, ...] = ()
    fail_on: Severity = Severity.ERROR
    exclude: tuple[str, ...] = ()
    root: Path = field(default_factory=Path.cwd)  # exclude patterns are relative to this
    source: str | None = None  # the pyproject.toml read, if any
    respect_gitignore: bool = True  # directory walks skip what .gitignore files ignore (never a tracked file)
    unsafe_fixes: bool = False  # --fix applies unsafe fixes too
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()  # (glob, codes or prefixes)

    def enabled(self, code: str) -> bool:
        """Whether lint rule `code` runs. Checker diagnostics are always reported."""
        if self.select is not None and not any(code.startswith(s) for s in self.select):
            return False
        return not any(code.startswith(s) for s in self.ignore)

    def _candidates(self, path: Path) -> list[str]:
        """The path relative to the config's folder, each of its leading parts, and its name."""
        try:
            rel = Path(os.path.relpath(path.absolute(), self.root)).as_posix()
        except ValueError:  # pragma: no cover (another drive)
            rel = path.as_posix()
        parts = rel.split("/")
        return ["/".join(parts[: i + 1]) for i in range(len(parts))] + [path.name]

    def excluded(self, path: Path) -> bool:
        if not self.exclude:
            return False
        candidates = self._candidates(path)
        return any(fnmatch.fnmatchcase(c, pat.rstrip("/")) for pat in self.exclude for c in candidates)

    def ignored_in(self, file: str, code: str) -> bool:
        """Whether `per-file-ignores` drops finding `code` in `file` (a path as shown)."""
        if not self.per_file_ignores:
            return False
        candidates = self._candidates(Path(file))
        for pattern, codes in self.per_file_ignores:
            if not any(code.startswith(c) for c in codes):
                continue
            negate = pattern.startswith("!")
            glob = pattern[1:] if negate else pattern
            hit = any(fnmatch.fnmatchcase(c, glob.rstrip("/")) for c in candidates)
            if hit != negate:
                return True
        return False

    def override(self, select=None, ignore=None, fail_on=None, respect_gitignore=None, unsafe_fixes=None) -> "LintConfig":
        out = self
        if respect_gitignore is not None:
            out = replace(out, respect_gitignore=respect_gitignore)
        if unsafe_fixes is not None:
            out = replace(out, unsafe_fixes=unsafe_fixes)
        if select is not None:
            out = replace(out, select=tuple(select))
        if ignore is not None:
            out = replace(out, ignore=tuple(ignore))
        if fail_on is not None:
            out = replace(out, fail_on=Severity(fail_on))
        return out


def split_codes(values: Iterable[str] | None) -> list[str]:
    """`["CTL001,CTL002", "CTL009"]` -> the codes, upper-cased."""
    out: list[str] = []
    for v in values or []:
        out += [c.strip().upper() for c in str(v).replace(" ", ",").split(",") if c.strip()]
    return out


def validate_codes(codes: list[str], where: str) -> list[str]:
    """Each code must be a lint code or a prefix of one."""
    known = [r.code for r in all_rules()]
    for c in codes:
        if any(k.startswith(c) for k in known):
            continue
        if c.startswith("CT") and not c.startswith("CTL"):
            raise ConfigError(f"{where}: {c} is a checker code; checker errors are always reported and cannot be selected or ignored")
        raise ConfigError(f"{where}: unknown lint code '{c}' (codes are {known[0]}..{known[-1]}; see ctdsl lint --explain CODE)")
    return codes


def find_pyproject(start: Path) -> Path | None:
    here = start.absolute()
    try:
        is_dir = here.is_dir()
    except (OSError, ValueError):  # a name too long, a NUL: the runner reports the path itself
        is_dir = False
    if not is_dir:
        here = here.parent
    for folder in [here, *here.parents]:
        candidate = folder / "pyproject.toml"
        if candidate.is_file():
            try:
                data = tomllib.loads(read_source(candidate))  # a regular file of at most 256 KiB
            except (tomllib.TOMLDecodeError, Unreadable):
                data = None
            if data is None or "ctdsl" in data.get("tool", {}):
                return candidate  # a broken file, or one whose [tool.ctdsl] is wrong, is reported by load_config
    return None


def load_config(path: Path) -> LintConfig:
    shown = os.path.relpath(path) if not os.path.relpath(path).startswith("..") else str(path)
    try:
        data = tomllib.loads(read_source(path))  # a regular file of at most 256 KiB
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{shown}: not valid TOML: {exc}") from None
    except Unreadable as exc:
        raise ConfigError(f"{shown}: cannot read: {exc}") from None
    top = data.get("tool", {}).get("ctdsl", {})
    if not isinstance(top, dict):
        raise ConfigError(f"{shown}: [tool.ctdsl] must be a table")
    for key in top:
        if key not in TABLES:
            hint = f" (did you mean [tool.ctdsl.lint] {key} = ...?)" if key in KEYS else ""
            raise ConfigError(f"{shown}: [tool.ctdsl]: unknown key '{key}'{hint}; lint's settings go under [tool.ctdsl.lint]")
    table = top.get("lint", {})
    where = f"{shown}: [tool.ctdsl.lint]"
    if not isinstance(table, dict):
        raise ConfigError(f"{where} must be a table")
    for key in table:
        if key not in KEYS:
            hint = f" (did you mean '{key.replace('_', '-')}'?)" if key.replace("_", "-") in KEYS else ""
            raise ConfigError(f"{where}: unknown key '{key}'{hint}; the keys are {', '.join(KEYS)}")

    def strings(key: str) -> list[str] | None:
        if key not in table:
            return None
        v = table[key]
        if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
            raise ConfigError(f"{where}: {key} must be a list of strings, e.g. {key} = [\"CTL001\"]")
        return v

    select = strings("select")
    ignore = strings("ignore")
    exclude = strings("exclude")
    fail_on = table.get("fail-on")
    respect = table.get("respect-gitignore")
    unsafe = table.get("unsafe-fixes")
    for key, value in (("respect-gitignore", respect), ("unsafe-fixes", unsafe)):
        if value is not None and not isinstance(value, bool):
            raise ConfigError(f"{where}: {key} must be true or false, not {value!r}")
    per_file = _per_file_ignores(table.get("per-file-ignores"), where)
    if fail_on is not None and fail_on not in FAIL_ON:
        raise ConfigError(f"{where}: fail-on must be one of {', '.join(FAIL_ON)}, not {fail_on!r}")
    cfg = LintConfig(root=path.parent.absolute(), source=shown)
    if select is not None:
        cfg = replace(cfg, select=tuple(validate_codes(split_codes(select), f"{where} select")))
    if ignore is not None:
        cfg = replace(cfg, ignore=tuple(validate_codes(split_codes(ignore), f"{where} ignore")))
    if exclude is not None:
        cfg = replace(cfg, exclude=tuple(exclude))
    if fail_on is not None:
        cfg = replace(cfg, fail_on=Severity(fail_on))
    if respect is not None:
        cfg = replace(cfg, respect_gitignore=respect)
    if unsafe is not None:
        cfg = replace(cfg, unsafe_fixes=unsafe)
    if per_file:
        cfg = replace(cfg, per_file_ignores=per_file)
    return cfg


def _per_file_ignores(value, where: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """`per-file-ignores`: a table of glob -> codes, checked as --ignore's codes are."""
    if value is None:
        return ()
    example = '"examples/*.ct" = ["CTL001"]'
    if not isinstance(value, dict):
        raise ConfigError(f"{where}: per-file-ignores must be a table of glob = [codes], e.g. {example}")
    out = []
    for pattern, codes in value.items():
        if not isinstance(codes, list) or not all(isinstance(c, str) for c in codes):
            raise ConfigError(f"{where}: per-file-ignores: {pattern!r} must be a list of codes, e.g. {example}")
        if not pattern.lstrip("!"):
            raise ConfigError(f"{where}: per-file-ignores: an empty pattern matches nothing")
        out.append((pattern, tuple(validate_codes(split_codes(codes), f"{where} per-file-ignores {pattern!r}"))))
    return tuple(out)


def resolve_config(first_path: str | None) -> LintConfig:
    found = find_pyproject(Path(first_path) if first_path else Path.cwd())
    return load_config(found) if found is not None else LintConfig()


__all__ = ["LintConfig", "ConfigError", "resolve_config", "load_config", "find_pyproject", "split_codes", "validate_codes"]
