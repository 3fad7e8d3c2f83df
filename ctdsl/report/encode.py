"""Spec text encoded for each sink, in one place per sink.

A spec's words (its opening comment, labels, names, display names, the file's
name) reach HTML, Markdown, LaTeX, the terminal, CSV and matplotlib. Each sink
has one encoder here, and each renderer calls it at the point where spec text
enters its output, so that the text is shown, never obeyed:

- `html_text`: `& < > " '` as entities, for text and attribute values alike
  (control characters shown, as for the terminal);
  `safe_href` keeps a link only when its scheme is http, https or mailto (or it
  has none), never `javascript:` or `data:`.
- `md_text`: Markdown in which spec text is never live: every `[` and `]`
  escaped (no link, image, reference definition `[x]: url`, shortcut reference
  `[x]`, footnote or task box can form), `<` and `&` as entities (no raw HTML,
  no autolink `<https://...>`, no entity), `{` and `}` escaped (no
  Python-Markdown attribute list `{: onclick=...}`), `$` as an entity (no
  GitHub math), and the first character escaped where it would open a block
  (a heading, a quote `>`, a list, a fence, a numbered item). Nor does it form
  emphasis, a code span or GitHub's strikethrough: `*` and `` ` `` are escaped, `_`
  unless it is intraword (`llama70b_wan`, which opens nothing in CommonMark or
  Python-Markdown), and `~` where it could open a strikethrough. Python-Markdown (what MkDocs uses) and
  CommonMark (markdown-it, GitHub) render it as the text it was
  (tests/test_hostile_markdown.py renders with both). A bare `https://...`
  stays text, which GitHub shows as a link to itself. `md_cell` is a table
  cell's (`|` escaped too), `md_code` an inline code span and `md_fence` a
  fenced code block that no text inside can close.
- `tex_text`: LaTeX text with every special character escaped (`\\ { } $ & # ^ _
  % ~ < > |`; `^` as `\\textasciicircum{}`, so no `^^` escape survives; a control
  character as `\\textbackslash{}x1b`); `tex_display` prints a display name as math only when
  `ctdsl.language.texname.safe_display` accepts it (the rule CT310 checks), as an
  atom a printer's `^{*}` may follow (`texname.atom`), and otherwise as escaped text.
- `term_text` / `rich_text`: control characters replaced by visible ones
  (`ctdsl.diagnostics.terminal.printable`); for rich, markup escaped as well, so
  a label `[/bold]` prints as itself.
- `csv_cell`: a text cell that a spreadsheet would read as a formula (it starts
  with `= + - @`, a tab or a CR) is prefixed with `'` (OWASP CSV injection);
  control characters are shown, as for the terminal (CSV goes to stdout).
- `mpl_text`: a text for matplotlib with `$` escaped, so a label is never parsed
  as mathtext (an invalid one would crash the drawing); control characters shown;
  cut to `PLOT_CHARS` characters with an ellipsis (`clip`), so that no text makes
  a figure's layout work for long (matplotlib lays a text out a glyph at a time).
"""

from __future__ import annotations

import math
import re
from html import escape as _html_escape

from ctdsl.diagnostics.terminal import printable
from ctdsl.language.texname import atom, safe_display

# ---- HTML -----------------------------------------------------------------------------------


def html_text(text: str) -> str:
    """Text or an attribute value for HTML: `& < > " '` as entities, control characters shown."""
    return _html_escape(printable(text), quote=True)


_SCHEME = re.compile(r"^\s*([A-Za-z][A-Za-z0-9+.-]*):")


def safe_href(url: str) -> str:
    """A link target for HTML or Markdown: `url` when its scheme is http, https or mailto (or relative), else '#'."""
    cleaned = re.sub(r"[\x00-\x20\x7f]", "", url)  # browsers drop these inside a scheme ("java\tscript:")
    m = _SCHEME.match(cleaned)
    if m and m.group(1).lower() not in ("http", "https", "mailto"):
        return "#"
    return url


# ---- Markdown -------------------------------------------------------------------------------

# escapes both CommonMark and Python-Markdown undo (backslash before one of Python-Markdown's
# ESCAPED_CHARS), and entities where Python-Markdown has no escape (`<`, `&`, `$`)
# (and `*`, `` ` ``, and `_` where it could open or close emphasis: see `_md_underscores`)
_MD_INLINE = {"\\": "\\\\", "[": "\\[", "]": "\\]", "{": "\\{", "}": "\\}", "<": "&lt;", "&": "&amp;", "$": "&#36;",
              "*": "\\*", "`": "\\`"}  # fmt: skip
_MD_INLINE_RE = re.compile(r"[\\\[\]{}<&$*`]|_+|~+(?=\S)")  # a `~` run before a non-space could open GitHub's strikethrough
_MD_ORDINAL = re.compile(r"^(\d{1,9})([.)])")
# what opens a block at the start of a line: a heading, a quote, a list, a fence, a table, a definition
_MD_BLOCK = {"#": "\\#", ">": "\\>", "-": "\\-", "+": "\\+", "*": "\\*", "`": "\\`", "~": "&#126;", "=": "&#61;", ":": "&#58;", "|": "&#124;"}


def _md_underscores(m: re.Match) -> str:
    """A run of `_` as it is when a letter or digit stands on both sides of it (as in `llama70b_wan`), else escaped.

    Such a run is intraword: CommonMark (spec 0.31, rules 2 and 6 of "Emphasis and strong emphasis") lets `_`
    open or close emphasis only where the run is not both left- and right-flanking (or the character outside
    it is punctuation), and Python-Markdown's underscore patterns need a non-word character outside; so
    intraword `_` is text in both, and names keep their bytes. Anywhere else each `_` is escaped (`\\_`)."""
    s, i, j = m.string, m.start(), m.end()
    if i > 0 and j < len(s) and s[i - 1].isalnum() and s[j].isalnum():
        return m.group()
    return "\\_" * (j - i)


def _md_inline(text: str) -> str:
    text = printable(text).replace("\n", " ")
    return _MD_INLINE_RE.sub(_md_one, text)


def _md_one(m: re.Match) -> str:
    ch = m.group()[0]
    if ch == "_":
        return _md_underscores(m)
    if ch == "~":  # only a run before a non-space can open (GFM's flanking rule), so no other needs it
        return "&#126;" * len(m.group())  # an entity: Python-Markdown keeps a backslash before `~`
    return _MD_INLINE[m.group()]


def md_text(text: str) -> str:
    """Spec text for Markdown, where a block or a line may start: never live markup.

    No link, image, reference definition, autolink, raw HTML, entity, attribute
    list or math can form from it, and it opens no block (its first character is
    escaped when it would); it renders as the text it was.
    """
    out = _md_inline(text).lstrip(" \t")
    m = _MD_ORDINAL.match(out)
    if m:
        return f"{m.group(1)}\\{m.group(2)}{out[m.end():]}"
    if out[:1] in _MD_BLOCK:
        return _MD_BLOCK[out[0]] + out[1:]
    return out


def md_item(text: str) -> str:
    """A Markdown list item's text: `md_text` (a leading `1.` is text, not a nested ordered list)."""
    return md_text(text)


def md_cell(text: str) -> str:
    """A Markdown table cell: spec text never live (as `md_text`), with `|` escaped."""
    return _md_inline(text).replace("|", "\\|")


def md_code(text: str) -> str:
    """`text` as an inline code span no backtick in it can close (nothing in a code span is live)."""
    text = printable(text).replace("\n", " ")
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    ticks = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or (text.startswith(" ") and text.endswith(" ") and text.strip()) else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def md_fence(text: str, lang: str = "") -> str:
    """`text` as a fenced code block whose fence is longer than any run of backticks in it,
    so that no line of it closes the block (CommonMark, and Python-Markdown's fenced_code,
    which closes only at the same fence)."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{lang}\n{text}\n{fence}"


# ---- LaTeX ----------------------------------------------------------------------------------

_TEX = {
    "\\": r"\textbackslash{}",
    "{": r"\{",
    "}": r"\}",
    "$": r"\$",
    "&": r"\&",
    "#": r"\#",
    "_": r"\_",
    "%": r"\%",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "<": r"\textless{}",
    ">": r"\textgreater{}",
    "|": r"\textbar{}",
}
# The characters beyond ASCII that pdflatex typesets in text mode with the LaTeX kernel's UTF-8 support and the
# encodings a document has by default (OT1, TS1): found by compiling each of U+00A0..U+024F, U+0370..U+03FF and
# U+2000..U+22FF in a \paragraph with TeX Live 2022's pdflatex (utf8enc.dfu declares more, but those need a font
# encoding such as T1, or are math). Any other character (U+2028, a BiDi control, Greek, an emoji) stops the compile
# ("Unicode character ... not set up for use with LaTeX"), so it is written as its code instead: \textbackslash{}u2028.
_TEX_UNICODE = (
    "\u00a0-\u00aa\u00ac-\u00ba\u00bc-\u00cf\u00d1-\u00dd\u00df-\u00ef\u00f1-\u00fd\u00ff-\u0103\u0106-\u010f"
    "\u0112-\u0117\u011a-\u0125\u0128-\u012d\u0130-\u0137\u0139-\u013e\u0141-\u0148\u014c-\u0165\u0168-\u0171"
    "\u0174-\u017e\u0192\u01c4-\u01d4\u01e2\u01e3\u01e6-\u01e9\u01f0\u01f4\u01f5\u0218-\u021b\u0232\u0233\u0237"
    "\u2010-\u2016\u2018\u2019\u201c\u201d\u2020-\u2022\u2026\u2030\u2031\u203b\u203d\u2044\u204e\u2052\u2103"
    "\u2116\u2117\u211e\u2120\u2122\u2126\u2127\u212e\u2190-\u2193"
)
_TEX_RE = re.compile(r"[\\{}$&#_%~^<>|]|[^\x20-\x7e" + _TEX_UNICODE + "]")


def _tex_one(m: re.Match) -> str:
    ch = m.group()
    if ch in _TEX:
        return _TEX[ch]
    if ord(ch) < 0xA0:
        return f"\\textbackslash{{}}x{ord(ch):02x}"
    return f"\\textbackslash u\\{{{ord(ch):04x}\\}}"  # `\textbackslash u`: no spec text writes it (its \ has {})


def tex_text(text: str) -> str:
    """Spec text for LaTeX text mode (also inside \\text{...}): every special character escaped, and every character
    pdflatex has no glyph for by default (a control character, U+2028, Greek, an emoji) written as its code."""
    return _TEX_RE.sub(_tex_one, text)


# MathJax (a notebook's text/latex): text goes in \text{...} as runs of plain characters, and every other
# character as a math-mode command between runs, because MathJax reads \text{...} verbatim unless its
# textmacros extension is loaded (then `\_` inside shows as `\_`); `\_` in math mode is right in both
_PLAIN = re.compile(r"[A-Za-z0-9 ,.:;!?'()\[\]+=*/@\-\u00a0-\uffff]+")
_MATH_CHAR = {"\\": r"\backslash ", "{": r"\{", "}": r"\}", "$": r"\$", "&": r"\&", "#": r"\#", "_": r"\_",
              "%": r"\%", "~": r"\sim ", "^": r"\hat{}", "<": "<", ">": ">", "|": "|", '"': "''"}  # fmt: skip
_UNTEX = {v: k for k, v in _TEX.items()}
_CODE_RE = re.compile(r"\\textbackslash u\\\{([0-9a-f]{4,6})\\\}")  # tex_text's code of a character
_UNTEX_RE = re.compile("|".join(re.escape(v) for v in sorted(_UNTEX, key=len, reverse=True)))


def mathjax_text(text: str, command: str = "text") -> str:
    """Spec text for MathJax's math mode: plain runs in \text{...} (or \textbf), the rest as math commands."""
    out, i = [], 0
    for m in _PLAIN.finditer(text):
        out += [_MATH_CHAR.get(c, r"\text{?}") for c in text[i : m.start()]]
        out.append(f"\\{command}{{{m.group()}}}")
        i = m.end()
    out += [_MATH_CHAR.get(c, r"\text{?}") for c in text[i:]]
    return "".join(out)


def tex_text_to_mathjax(tex: str) -> str:
    """LaTeX math whose \text{...} hold tex_text's escapes, with each such \text made MathJax-safe."""

    def one(m: re.Match) -> str:
        body = m.group(1)
        if "\\" not in body:
            return m.group(0)
        body = _CODE_RE.sub(lambda e: chr(int(e.group(1), 16)), body)  # MathJax shows what pdflatex cannot
        return mathjax_text(_UNTEX_RE.sub(lambda e: _UNTEX[e.group()], body))

    return re.sub(r"\\text\{((?:[^{}\\]|\\[{}]|\\[A-Za-z]+\{\}|\\.)*)\}", one, tex)


def tex_display(display: str) -> str:
    """A display name for math mode that a script may follow: as it is when it is safe LaTeX (in
    braces when it ends with a superscript, `texname.atom`), else as escaped upright text."""
    return atom(display) if safe_display(display) else r"\text{" + tex_text(display) + "}"


# ---- terminal -------------------------------------------------------------------------------


def term_text(text: str) -> str:
    """Spec text for a terminal: control characters (ESC above all) shown, not sent."""
    return printable(text)


def rich_text(text: str) -> str:
    """Spec text for rich's console.print: control characters shown and markup escaped."""
    from rich.markup import escape

    return escape(printable(text))


# ---- CSV ------------------------------------------------------------------------------------

_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")  # DejaVu has no control pictures
_FORMULA = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(value):
    """A CSV cell: a text a spreadsheet would run as a formula gets a leading `'`, control characters shown; numbers pass."""
    if not isinstance(value, str):
        return value
    if value.startswith(_FORMULA):
        value = "'" + value
    return printable(value)


# ---- matplotlib -----------------------------------------------------------------------------


PLOT_CHARS = 100  # characters of one text in a figure (the longest in specs/ and examples/ is 59)
TICK_CHARS = 40  # characters of a tick label (a scheme's or a stage's name; the longest in examples/ is 14)


def clip(text: str, limit: int) -> str:
    """`text` cut to `limit` characters, the last one an ellipsis when it was longer."""
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"


def mpl_text(text: str, limit: int = PLOT_CHARS) -> str:
    """Spec text for a matplotlib label: literal, never mathtext (`$` escaped), control characters as `\\x1b`, clipped."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", clip(text, limit)).replace("$", r"\$")


__all__ = [
    "PLOT_CHARS",
    "TICK_CHARS",
    "clip",
    "csv_cell",
    "html_text",
    "md_cell",
    "md_code",
    "md_fence",
    "md_item",
    "md_text",
    "mpl_text",
    "rich_text",
    "safe_href",
    "term_text",
    "tex_display",
    "tex_text",
]


def json_number(x):
    """A number for JSON: a float, or null where it is missing or not finite (JSON has no inf or nan)."""
    if x is None:
        return None
    x = float(x)
    return x if math.isfinite(x) else None
