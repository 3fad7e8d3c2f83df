"""The TextMate grammar (editors/vscode/syntaxes/ct.tmLanguage.json), tokenized as VS
Code does: vscode-textmate with vscode-oniguruma from npm, driven by
editors/vscode/test/tokenize.js.

Over every spec and example: each scope the grammar names is used somewhere
(every token class is covered); no text but whitespace is left with only the
file's scope; and every character is in the same class as the Pygments lexer
(ctdsl/highlight.py, an independent implementation written from the same
grammar) puts it in. The npm packages are installed by .ci/setup.d/node.sh; the
test skips, saying why, where node or the packages are absent.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from pygments.token import Token

from ctdsl.highlight import CtLexer
from backstop import HANG

ROOT = Path(__file__).resolve().parents[1]
GRAMMAR = ROOT / "editors" / "vscode" / "syntaxes" / "ct.tmLanguage.json"
SCRIPT = ROOT / "editors" / "vscode" / "test" / "tokenize.js"
SPECS = sorted([*ROOT.glob("specs/**/*.ct"), *ROOT.glob("examples/**/*.ct"), *ROOT.glob("ctdsl/stdlib/*.ct")])


def _node_modules() -> Path | None:
    candidates = [os.environ.get("CTDSL_NODE_MODULES"), str(Path.home() / ".cache" / "ctdsl-node"), str(SCRIPT.parent)]
    for c in candidates:
        if c and (Path(c) / "node_modules" / "vscode-textmate").is_dir() and (Path(c) / "node_modules" / "vscode-oniguruma").is_dir():
            return Path(c) / "node_modules"
    return None


SETUP = "bash .ci/setup.d/node.sh"  # installs the npm packages (README.md, docs/editors.md)


def why_not() -> str | None:
    """Why the grammar cannot be tokenized here, naming what to run; None when it can."""
    if shutil.which("node") is None:
        return f"node is not installed (the TextMate grammar is tokenized with vscode-textmate): apt-get install nodejs npm, then {SETUP}"
    if _node_modules() is None:
        return f"vscode-textmate and vscode-oniguruma are not installed: run {SETUP}"
    return None


@pytest.fixture(scope="module")
def tokens() -> dict[str, list]:
    reason = why_not()
    if reason:
        pytest.skip(reason)
    node, modules = shutil.which("node"), _node_modules()
    env = dict(os.environ, NODE_PATH=str(modules))
    r = subprocess.run([node, str(SCRIPT), str(GRAMMAR), *map(str, SPECS)], capture_output=True, text=True, env=env, timeout=HANG)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def _scope_names(node) -> set[str]:
    out: set[str] = set()
    if isinstance(node, dict):
        for k, v in node.items():
            if k == "name" and isinstance(v, str):
                out.add(v)
            else:
                out |= _scope_names(v)
    elif isinstance(node, list):
        for v in node:
            out |= _scope_names(v)
    return out


def test_every_token_class_of_the_grammar_is_covered(tokens):
    grammar = json.loads(GRAMMAR.read_text(encoding="utf-8"))
    declared = _scope_names(grammar["repository"])
    used = {s for toks in tokens.values() for _, _, _, scopes in toks for s in scopes}
    assert declared - used == set()


def test_no_spec_text_is_left_unscoped(tokens):
    bare = []
    for file, toks in tokens.items():
        lines = Path(file).read_text(encoding="utf-8").split("\n")
        for n, start, end, scopes in toks:
            text = lines[n][start:end]
            if scopes == ["source.ct"] and text.strip():
                bare.append(f"{Path(file).name}:{n + 1}:{start + 1}: {text!r}")
    assert bare == []


# the class of a character, from a TextMate scope (most specific first) or a Pygments token
TM_CLASS = [
    ("comment", "comment"),
    ("punctuation.definition.comment", "comment"),
    ("string", "string"),
    ("keyword.other.unit", "unit"),
    ("constant.numeric", "number"),
    ("constant.language", "constant"),
    ("storage.type", "keyword"),
    ("keyword.control", "keyword"),
    ("keyword.other", "keyword"),
    ("keyword.operator", "operator"),
    ("support.function", "builtin"),
    ("entity.name.type", "class"),
    ("entity.other.inherited-class", "class"),
    ("entity.name.namespace", "namespace"),
    ("entity.name.section", "section"),
    ("variable.other.definition", "definition"),
    ("variable.other.property", "property"),
    ("variable.other", "name"),
    ("punctuation", "punctuation"),
]
PYGMENTS_CLASS = [
    (Token.Comment, "comment"),
    (Token.Literal.String, "string"),
    (Token.Keyword.Type, "unit"),
    (Token.Literal.Number, "number"),
    (Token.Keyword.Constant, "constant"),
    (Token.Keyword, "keyword"),
    (Token.Operator, "operator"),
    (Token.Name.Builtin, "builtin"),
    (Token.Name.Class, "class"),
    (Token.Name.Namespace, "namespace"),
    (Token.Name.Label, "section"),
    (Token.Name.Variable, "definition"),
    (Token.Name.Attribute, "property"),
    (Token.Name, "name"),
    (Token.Punctuation, "punctuation"),
]


def _tm_class(scopes: list[str]) -> str | None:
    for scope in reversed(scopes):
        for prefix, cls in TM_CLASS:
            if scope.startswith(prefix + ".") or scope == prefix:
                return cls
    return None


def _pygments_classes(text: str) -> list[str | None]:
    out: list[str | None] = []
    for tok, value in CtLexer().get_tokens(text):
        cls = next((c for t, c in PYGMENTS_CLASS if tok in t), None)
        out += [cls] * len(value)
    return out


def test_the_grammar_agrees_with_the_pygments_lexer(tokens):
    disagree = []
    for file, toks in tokens.items():
        text = Path(file).read_text(encoding="utf-8")
        lines = text.split("\n")
        starts = [0]
        for line in lines:
            starts.append(starts[-1] + len(line) + 1)
        pyg = _pygments_classes(text)
        for n, start, end, scopes in toks:
            for i in range(start, end):
                if lines[n][i].isspace():
                    continue
                tm, pc = _tm_class(scopes), pyg[starts[n] + i]
                if tm != pc:
                    disagree.append(f"{Path(file).name}:{n + 1}:{i + 1} {lines[n][i]!r}: TextMate {tm}, Pygments {pc}")
    assert disagree[:20] == []


def test_the_grammar_names_every_distribution():
    from ctdsl.check.distributions import KINDS

    grammar = json.loads(GRAMMAR.read_text(encoding="utf-8"))
    match = grammar["repository"]["distribution"]["match"]
    assert set(match.split("(", 2)[2].split(")")[0].split("|")) == set(KINDS)



def test_a_skip_names_the_setup_script_and_the_docs_say_it(monkeypatch):
    """Without node, or without the npm packages, the reason names the command; README and docs/editors.md too."""
    import sys

    here = sys.modules[__name__]
    monkeypatch.setattr(here, "_node_modules", lambda: None)
    assert SETUP in why_not()
    monkeypatch.setattr(shutil, "which", lambda name: None)
    assert SETUP in why_not()
    for doc in (ROOT / "README.md", ROOT / "docs" / "editors.md"):
        assert SETUP in doc.read_text(encoding="utf-8"), doc
    assert (ROOT / SETUP.split()[-1]).is_file()
