"""An oracle per sink: does spec text arrive in an output active, rather than shown?

Each function reads one output as its consumer would and returns the leaks it finds
(a `Leak`: the sink, a stable rule name, an excerpt). None of them runs ctdsl's own
encoders: each reads the output with the consumer's rules, or a real implementation
of them.

- `markdown`: rendered by markdown-it-py (CommonMark, as GitHub and VS Code parse
  it) and Python-Markdown (what MkDocs uses, with the extensions MkDocs sites turn
  on). A link reference definition, raw HTML, a `javascript:` (or other
  non-web) link, an image whose source is not one of the report's own `data:`
  pictures, or a heading that holds spec text is a leak, and so is emphasis, strong
  emphasis, a code span or a strikethrough (GitHub's `~~`, on in markdown-it here)
  whose whole text is one of the payloads' (`{MARKER} em`, `{MARKER} strong`,
  `{MARKER} code`, `{MARKER} del`: ctdsl's own bold title around spec text holds
  the payload's delimiters too, so it is not one); so is anything the HTML rules
  below find in the rendered page.
- `html`: read with html.parser: no element or attribute named from spec text, no
  event handler attribute, no `javascript:` URL, no remote image, no <iframe>,
  <object>, <embed>, <base>, <form> or refresh; a <script> holding spec text, or
  a JSON data block that does not parse or could end its <script> early; for the
  explorer's page (`page=True`), exactly one Content-Security-Policy, `default-src
  'none'` first, before any script.
- `latex`: outside comments, no control sequence that reads or writes files, runs
  commands or redefines the input (`\\input`, `\\write` (as in `\\write18`), `\\catcode`, `\\def`,
  ... `DENY_CS`), no `^^` escape, no control character; braces balanced and
  environments closed in order. (Whether it compiles is a separate check,
  `latex_compiles`, run on a sample: pdflatex costs about a second.)
- `terminal`: no ESC, C0 control but tab and newline, DEL, C1 control or BiDi
  override/isolate.
- `cilog`: no line, as a runner splits and trims them (LF, CR LF or a lone CR),
  that starts with `::` (GitHub Actions' workflow commands), and no `##[` (GitHub's
  older form) or `##vso[` (Azure Pipelines) anywhere in a line; with `github=True`
  (lint's github format), a line that is one of ctdsl's own annotations (`::error
  file=...::message`, its properties escaped) is allowed whole.
- `csv`: no cell starting with `=`, `+`, `@`, a tab or a CR, nor with `-` unless
  the cell is a number (OWASP: a guarded cell starts with `'`).
- `json_output`: UTF-8, parses as JSON (NaN and Infinity are not JSON), no lone
  surrogate in any string; `sarif=True` also validates against SARIF 2.1.0's
  schema (tests/data).
- `fix`: after `lint --fix`, the file differs from the original only inside the
  spans the fixable findings name (by the parse tree's character offsets, not by
  any notion of a line), and a file with nothing fixable is unchanged.

What ctdsl itself writes into these outputs passes every rule here (the shipped
specs' outputs are checked in tests/fuzz/test_sinks.py), so a leak means spec text
got through.
"""

from __future__ import annotations

import csv
import difflib
import io
import json
import re
from dataclasses import dataclass
from functools import lru_cache
from html.parser import HTMLParser
from pathlib import Path

from fuzz.payloads import MARKER

ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Leak:
    sink: str  # markdown | html | latex | terminal | cilog | csv | json | fix
    rule: str  # a stable name: what arrived active
    excerpt: str = ""  # where, in the output (cut)

    @property
    def key(self) -> str:
        return f"{self.sink}: {self.rule}"


def _excerpt(text: str, start: int, end: int | None = None, around: int = 60) -> str:
    end = start + 1 if end is None else end
    return repr(text[max(0, start - around) : end + around])[:240]


def _unique(leaks: list[Leak]) -> list[Leak]:
    seen, out = set(), []
    for leak in leaks:
        if leak.key not in seen:
            seen.add(leak.key)
            out.append(leak)
    return out


# ---- terminal ---------------------------------------------------------------------------------------------------------

_TERM = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _term_rule(ch: str) -> str:
    if ch == "\x1b":
        return "escape sequence"
    if ch == "\r":
        return "carriage return"
    if "\x80" <= ch <= "\x9f":
        return "C1 control"
    if ch >= "\u202a":
        return "BiDi control"
    return "control character"


def terminal(text: str) -> list[Leak]:
    return _unique([Leak("terminal", _term_rule(m.group()), _excerpt(text, m.start())) for m in _TERM.finditer(text)])


# ---- CI logs ----------------------------------------------------------------------------------------------------------

_LINE_END = re.compile(r"\r\n|\r|\n")
_ANNOTATION = re.compile(r"^::(error|warning|notice)(?: ([^:]*))?::")
_NUMBERED = {"line", "col", "endLine", "endColumn"}


def _own_annotation(line: str) -> bool:
    """One of lint's own annotations: `::warning file=F,line=N,...,title=T::message`, its properties whole (a `:` or
    `,` in a value, unescaped, would end the properties early and let the text after it choose the file or message)."""
    m = _ANNOTATION.match(line)
    if not m:
        return False
    if m.group(2) is None:
        return True
    props = dict(p.partition("=")[::2] for p in m.group(2).split(","))
    return (set(props) <= _NUMBERED | {"file", "title"} and all(props[k].isdigit() for k in _NUMBERED & set(props))
            and props.get("file") != "")  # a whole-file finding names its file and no line


def cilog(text: str, github: bool = False) -> list[Leak]:
    leaks = []
    for line in _LINE_END.split(text):
        s = line.strip()  # the runners trim a line before they look for a command
        if github and _own_annotation(s):
            continue  # GitHub reads the line as that annotation (it looks for the older ##[ form only in a line that
            # is not one), and Azure's ##vso[ means nothing there: the github format is for GitHub's runner
        if s.startswith("::"):
            leaks.append(Leak("cilog", "workflow command (::)", repr(s[:160])))
        if "##[" in line:  # anywhere in the line (actions/runner ActionCommand.TryParse: IndexOf)
            leaks.append(Leak("cilog", "log command (##[)", repr(s[:160])))
        if "##vso[" in line:
            leaks.append(Leak("cilog", "logging command (##vso[)", repr(s[:160])))
    return _unique(leaks)


# ---- HTML -------------------------------------------------------------------------------------------------------------

DENY_TAGS = {"iframe", "object", "embed", "base", "form", "frame", "frameset", "applet", "portal", "link"}
URL_ATTRS = {"href", "src", "action", "formaction", "xlink:href", "background", "poster", "data", "srcset", "ping"}
_WEB = re.compile(r"^(?:https?:|mailto:|#|[^:]*$)", re.I)  # a web link, an anchor, or relative (no scheme)


def _bad_url(url: str) -> bool:
    cleaned = re.sub(r"[\x00-\x20\x7f]", "", url)  # browsers drop these inside a scheme ("java\tscript:")
    return not (_WEB.match(cleaned) or cleaned.lower().startswith("data:image/"))


INLINE_MARKUP = ("em", "strong", "code", "del", "s")
# the text inside the delimiters of the inline-markup payloads (payloads.MARKDOWN): rendered as that element, spec text was obeyed
INLINE_PAYLOADS = {f"{MARKER} em", f"{MARKER} strong", f"{MARKER} code", f"{MARKER} del"}


class _Scan(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.leaks: list[Leak] = []
        self.scripts: list[tuple[dict, list[str]]] = []
        self.csp: list[tuple[str, int]] = []  # (content, how many scripts came before it)
        self.headings: list[list[str]] = []
        self.inline: list[tuple[str, list[str]]] = []  # open <em>, <strong>, <code>, <del>, <s> and their text
        self.tags: set[str] = set()

    def _leak(self, rule: str, what: str) -> None:
        self.leaks.append(Leak("html", rule, repr(what[:160])))

    def handle_starttag(self, tag, attrs):
        a = {k: (v or "") for k, v in attrs}
        self.tags.add(tag)
        if MARKER in tag:
            self._leak("element from spec text", f"<{tag}>")
        if tag in DENY_TAGS:
            self._leak(f"<{tag}> element", f"<{tag} {a}>")
        for k, v in attrs:
            v = v or ""
            if MARKER in k:
                self._leak("attribute from spec text", f"<{tag} {k}={v}>")
            if k.startswith("on"):
                self._leak("event handler attribute", f"<{tag} {k}={v}>")
            if k in URL_ATTRS and v and _bad_url(v):
                self._leak("javascript: or other non-web URL", f"<{tag} {k}={v}>")
            if k in ("src", "srcset") and v and not v.lower().startswith("data:image/"):
                self._leak("remote image or source", f"<{tag} {k}={v}>")
            if k == "style" and MARKER in v:
                self._leak("style from spec text", f"<{tag} {k}={v}>")
        if tag == "meta":
            equiv = a.get("http-equiv", "").lower()
            if equiv == "refresh":
                self._leak("meta refresh", str(a))
            elif equiv == "content-security-policy":
                self.csp.append((a.get("content", ""), len(self.scripts)))
        if tag == "script":
            self.scripts.append((a, []))
        if tag in ("h1", "h2", "h3", "h4", "h5", "h6"):
            self.headings.append([])
        if tag in INLINE_MARKUP:
            self.inline.append((tag, []))

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)

    def handle_endtag(self, tag):
        if tag in ("h1", "h2", "h3", "h4", "h5", "h6") and self.headings and self.headings[-1] is not None:
            text = "".join(self.headings[-1])
            if f"{MARKER} heading" in text:  # the payloads' heading (a name may hold MARKER in a heading of ctdsl's)
                self._leak("heading from spec text", text)
            self.headings[-1] = None  # closed
        if tag in INLINE_MARKUP and self.inline and self.inline[-1][0] == tag:
            text = "".join(self.inline.pop()[1]).strip()
            if text in INLINE_PAYLOADS:  # markup the payload asked for, made from spec text
                self._leak(f"<{tag}> from spec text", text)

    def handle_data(self, data):
        if self.lasttag == "script" and self.scripts and self.cdata_elem == "script":
            self.scripts[-1][1].append(data)
        if self.headings and self.headings[-1] is not None:
            self.headings[-1].append(data)
        for _, parts in self.inline:
            parts.append(data)


def _scripts(scan: _Scan) -> None:
    for attrs, parts in scan.scripts:
        text = "".join(parts)
        if attrs.get("type", "").lower() == "application/json":
            low = text.lower()
            if "</script" in low or "<!--" in low or "<script" in low:
                scan._leak("JSON data could end its script", text[:160])
            try:
                json.loads(text)
            except ValueError:
                scan._leak("JSON data block broken", text[:160])
        elif MARKER in text:
            scan._leak("script from spec text", text[:160])


def _scan(text: str) -> _Scan:
    scan = _Scan()
    scan.feed(text)
    scan.close()
    _scripts(scan)
    return scan


def html(text: str, page: bool = False) -> list[Leak]:
    """Leaks in an HTML document; `page`: the explorer's page, whose Content-Security-Policy must be intact."""
    scan = _scan(text)
    if page:
        if len(scan.csp) != 1:
            scan._leak("Content-Security-Policy not intact", f"{len(scan.csp)} policies")
        else:
            content, before = scan.csp[0]
            if not content.startswith("default-src 'none'") or MARKER in content or before:
                scan._leak("Content-Security-Policy not intact", content)
    return _unique(scan.leaks)


# ---- Markdown ---------------------------------------------------------------------------------------------------------

# MkDocs sites commonly turn these on (and Material for MkDocs documents them): attr_list puts attributes on
# elements, md_in_html reads Markdown inside HTML, abbr/footnotes/def_list define things
PY_MD_EXTENSIONS = ["tables", "fenced_code", "attr_list", "footnotes", "abbr", "def_list", "md_in_html", "toc",
                    "admonition"]
# the elements Markdown's syntax makes (CommonMark, tables, and the extensions above): any other came as raw HTML
MARKDOWN_TAGS = {
    "p", "h1", "h2", "h3", "h4", "h5", "h6", "a", "img", "em", "strong", "code", "pre", "blockquote", "ul", "ol", "li",
    "hr", "br", "table", "thead", "tbody", "tr", "th", "td", "div", "dl", "dt", "dd", "abbr", "sup", "span", "p",
}
_DATA_URI = re.compile(r"data:image/(png|svg\+xml|jpeg);base64,[A-Za-z0-9+/=]{16,}")


def _markdown_it(src: str) -> tuple[list[Leak], str]:
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark").enable(["table", "strikethrough"])  # GitHub's tables and ~~strikethrough~~
    env: dict = {}
    tokens = md.parse(src, env)
    leaks = []
    if env.get("references"):
        refs = {k: v.get("href") for k, v in env["references"].items()}
        leaks.append(Leak("markdown", "link reference definition", repr(refs)[:240]))

    def walk(toks):
        for t in toks:
            if t.type in ("html_block", "html_inline"):
                leaks.append(Leak("markdown", "raw HTML", repr(t.content[:160])))
            if t.type == "link_open" and _bad_url(str(t.attrGet("href") or "")):
                leaks.append(Leak("markdown", "javascript: or other non-web link", repr(t.attrGet("href"))))
            if t.type == "image" and not str(t.attrGet("src") or "").lower().startswith("data:image/"):
                leaks.append(Leak("markdown", "remote image", repr(t.attrGet("src"))))
            if t.children:
                walk(t.children)

    walk(tokens)
    return leaks, md.renderer.render(tokens, md.options, env)


def _python_markdown(src: str) -> tuple[list[Leak], str]:
    import markdown as pymd

    md = pymd.Markdown(extensions=PY_MD_EXTENSIONS)
    out = md.convert(src)
    leaks = []
    if md.references:
        leaks.append(Leak("markdown", "link reference definition", repr(dict(md.references))[:240]))
    return leaks, out


def markdown(text: str) -> list[Leak]:
    src = _DATA_URI.sub(lambda m: f"data:image/{m.group(1)};base64,AAAA", text)  # base64 holds no markup
    leaks = []
    for render in (_markdown_it, _python_markdown):
        found, rendered = render(src)
        leaks += found
        scan = _scan(rendered)
        leaks += [Leak("markdown", f"rendered: {leak.rule}", leak.excerpt) for leak in scan.leaks]
        raw = sorted(scan.tags - MARKDOWN_TAGS)
        if raw:  # an element Markdown's own syntax (with those extensions) never makes: raw HTML went through
            leaks.append(Leak("markdown", "raw HTML", f"{render.__name__[1:]}: <{'>, <'.join(raw)}>"))
    return _unique(leaks)


# ---- LaTeX ------------------------------------------------------------------------------------------------------------

DENY_CS = {
    "input", "include", "InputIfFileExists", "IfFileExists", "openin", "openout", "read", "readline", "write",
    "immediate", "catcode", "def", "edef", "gdef", "xdef", "let", "futurelet", "csname", "endcsname",
    "expandafter", "newcommand", "renewcommand", "providecommand", "DeclareRobustCommand", "usepackage",
    "RequirePackage", "documentclass", "special", "directlua", "luaexec", "scantokens", "everyjob", "everypar",
    "endinput", "uppercase", "lowercase", "ShellEscape", "includegraphics", "verbatiminput", "lstinputlisting",
    "href", "url", "typeout", "message", "errmessage", "batchmode", "nonstopmode", "scrollmode", "pdfprimitive",
    "pdfobj", "pdfannot", "pdfliteral", "verb", "makeatletter", "string", "detokenize", "lccode", "uccode",
    "mathcode", "endlinechar", "newlinechar", "escapechar",
}
_CS = re.compile(r"\\([A-Za-z@]+|.)", re.S)
_ENV = re.compile(r"\\(begin|end)\s*\{([^{}]*)\}")


def latex(text: str) -> list[Leak]:
    leaks: list[Leak] = []
    depth, envs, i, n = 0, [], 0, len(text)
    while i < n:
        c = text[i]
        if c == "%":  # a comment, to the end of the line (TeX's line: a CR ends it too)
            j = min([k for k in (text.find("\n", i), text.find("\r", i)) if k >= 0] or [n])
            i = j
            continue
        if c == "\\":
            m = _CS.match(text, i)
            word = m.group(1) if m else ""
            if word in DENY_CS:
                leaks.append(Leak("latex", f"\\{word}", _excerpt(text, i, m.end())))
            env = _ENV.match(text, i)
            if env:
                if env.group(1) == "begin":
                    envs.append(env.group(2))
                elif not envs or envs.pop() != env.group(2):
                    leaks.append(Leak("latex", "environment closed out of order", _excerpt(text, i, env.end())))
            i = m.end() if m else i + 1
            continue
        if c == "^" and text.startswith("^^", i):
            leaks.append(Leak("latex", "^^ escape", _excerpt(text, i, i + 4)))
        elif c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth < 0:
                leaks.append(Leak("latex", "unbalanced braces", _excerpt(text, i)))
                depth = 0
        elif c < " " and c not in "\t\n" or "\x7f" <= c <= "\x9f":
            leaks.append(Leak("latex", "control character", _excerpt(text, i)))
        i += 1
    if depth:
        leaks.append(Leak("latex", "unbalanced braces", f"{depth} left open at the end"))
    if envs:
        leaks.append(Leak("latex", "environment closed out of order", f"open at the end: {envs}"))
    return _unique(leaks)


def latex_compiles(text: str, workdir: Path) -> list[Leak]:
    """Compile `text` (export latex's output) in a document with pdflatex -no-shell-escape; a leak if it fails, or if
    a file named after MARKER, which only an injected \\input could read, was read."""
    import subprocess

    from backstop import HANG

    doc = ("\\documentclass{article}\n\\usepackage{amsmath}\n\\usepackage{booktabs}\n\\usepackage{siunitx}\n"
           "\\DeclareSIUnit\\flop{FLOP}\n\\begin{document}\n" + text + "\n\\end{document}\n")
    workdir.mkdir(parents=True, exist_ok=True)
    (workdir / f"{MARKER}.tex").write_text(f"\\typeout{{{MARKER.upper()}-READ}}\n", encoding="utf-8")
    (workdir / "doc.tex").write_text(doc, encoding="utf-8", errors="surrogateescape")
    try:
        p = subprocess.run(["pdflatex", "-no-shell-escape", "-interaction=nonstopmode", "-halt-on-error", "doc.tex"],
                           cwd=workdir, capture_output=True, timeout=HANG)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return [Leak("latex", "pdflatex did not run", repr(exc)[:160])]
    log = p.stdout.decode("utf-8", "replace")
    leaks = []
    if f"{MARKER.upper()}-READ" in log:
        leaks.append(Leak("latex", "pdflatex read a file named by spec text", ""))
    if p.returncode != 0:
        err = next((ln for ln in log.splitlines() if ln.startswith("!")), log[-200:])
        leaks.append(Leak("latex", "does not compile", err[:160]))
    return leaks


# ---- CSV --------------------------------------------------------------------------------------------------------------


def _number(cell: str) -> bool:
    try:
        float(cell)
    except ValueError:
        return False
    return True


def csv_cells(text: str) -> list[Leak]:
    leaks = []
    for row in csv.reader(io.StringIO(text, newline="")):
        for cell in row:
            if cell[:1] in ("=", "+", "@", "\t", "\r") or (cell[:1] == "-" and cell != "-" and not _number(cell)):
                leaks.append(Leak("csv", "formula cell", repr(cell[:160])))
    return _unique(leaks)


# ---- JSON and SARIF ---------------------------------------------------------------------------------------------------

_SURROGATE = re.compile("[\ud800-\udfff]")


def _refuse(name: str):
    raise ValueError(f"{name} is not JSON")


@lru_cache(maxsize=1)
def _sarif_validator():
    import jsonschema

    schema = json.loads((ROOT / "tests" / "data" / "sarif-2.1.0-rtm.5.json").read_text(encoding="utf-8"))
    return jsonschema.Draft7Validator(schema)


def json_output(data: bytes, sarif: bool = False) -> list[Leak]:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return [Leak("json", "not UTF-8", repr(data[max(0, exc.start - 60) : exc.end + 60]))]
    try:
        obj = json.loads(text, parse_constant=_refuse)
    except ValueError as exc:
        return [Leak("json", "not JSON", f"{exc}"[:160])]
    leaks = []
    stack = [obj]
    while stack:
        x = stack.pop()
        if isinstance(x, dict):
            stack += list(x.keys()) + list(x.values())
        elif isinstance(x, list):
            stack += x
        elif isinstance(x, str) and _SURROGATE.search(x):
            leaks.append(Leak("json", "lone surrogate", repr(x[:160])))
    if sarif:
        err = next(iter(_sarif_validator().iter_errors(obj)), None)
        if err is not None:
            leaks.append(Leak("json", "not valid SARIF 2.1.0", f"{err.message[:120]} at {list(err.absolute_path)[:6]}"))
    return _unique(leaks)


# ---- lint --fix -------------------------------------------------------------------------------------------------------

_HELP_WRITE = re.compile(r"^help: write ([A-Za-z_][A-Za-z0-9_.]*) = ", re.M)
_OWNER = re.compile(r"^(\w+) '(\w+)'")
_STRING_OR_COMMENT = re.compile(r'"[^"\n]*"|#[^\n]*')


def _fixable(sarif: dict) -> tuple[list[tuple[str | None, str]], bool]:
    """(owner, key) of each finding whose help writes a field, and whether an unused suppression was found."""
    fields, suppressions = [], False
    for run in sarif.get("runs", []):
        for r in run.get("results", []):
            text = (r.get("message") or {}).get("text", "")
            m = _HELP_WRITE.search(text)
            if m:
                owner = _OWNER.match(text)
                fields.append((f"{owner.group(1)} {owner.group(2)}" if owner else None, m.group(1).split(".")[-1]))
            if r.get("ruleId") == "CTL011":
                suppressions = True
    return fields, suppressions


def _allowed_spans(text: str, fields: list[tuple[str | None, str]], suppressions: bool) -> list[tuple[int, int]]:
    """Character spans of `text` a fix may change: the fields named, and the comments holding a suppression."""
    from lark import Token, Tree

    from ctdsl.syntax.parser import lark_parser

    spans = []
    if suppressions:
        # the comment and the blanks before it (a fix removing an unused suppression takes those too)
        spans += [(len(text[: m.start()].rstrip(" \t")), m.end()) for m in _STRING_OR_COMMENT.finditer(text)
                  if m.group().startswith("#") and "ignore[" in m.group()]
    if not fields:
        return spans
    tree = lark_parser().parse(text, start="start")

    def visit(node, owner):
        if not isinstance(node, Tree):
            return
        if node.data == "block":
            kind = node.children[0]
            kind = str(kind.children[0]) if isinstance(kind, Tree) and kind.children else str(kind)
            owner = f"{kind} {node.children[1]}"
        if node.data == "field":
            key = node.children[0]
            key = str(key.children[0]) if isinstance(key, Tree) and key.children else str(key)
            if any(k == key and (o is None or o == owner) for o, k in fields):
                spans.append((node.meta.start_pos, node.meta.end_pos))
        for child in node.children:
            if not isinstance(child, Token):
                visit(child, owner)

    visit(tree, None)
    return spans


def _changes(before: str, after: str) -> list[tuple[int, int, str]]:
    """The spans of `before` that differ in `after` (an insertion is an empty span) and what replaced each, by line
    then by character."""
    a, b = before.split("\n"), after.split("\n")
    starts, pos = [], 0
    for line in a:
        starts.append(pos)
        pos += len(line) + 1
    out = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        base = starts[i1] if i1 < len(starts) else len(before)
        old, new = "\n".join(a[i1:i2]), "\n".join(b[j1:j2])
        for t, x1, x2, y1, y2 in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
            if t != "equal":
                out.append((base + x1, base + x2, new[y1:y2]))
    return out


def fix(before: str, after: str, sarif_text: str) -> list[Leak]:
    """Leaks of `lint --fix`: a change outside the spans its fixable findings name (SARIF of the same file)."""
    if before == after:
        return []
    try:
        sarif = json.loads(sarif_text)
    except ValueError:
        sarif = {}
    fields, suppressions = _fixable(sarif)
    if not fields and not suppressions:
        return [Leak("fix", "changed a file with nothing fixable", "")]
    try:
        spans = _allowed_spans(before, fields, suppressions)
    except Exception as exc:  # noqa: BLE001 - the file checked clean: a parse failure here is the oracle's to report
        return [Leak("fix", "fixed file the parser cannot read", repr(exc)[:160])]
    for x1, x2, new in _changes(before, after):
        if not any(s <= x1 and x2 <= e for s, e in spans):
            start = before.rfind("\n", 0, x1) + 1
            end = before.find("\n", x2)
            line = before[start : end if end >= 0 else len(before)]
            return [Leak("fix", "changed text outside the flagged spans",
                         f"LF-line {before.count(chr(10), 0, x1) + 1} {line!r}: {before[x1:x2]!r} -> {new!r}"[:300])]
    return []
