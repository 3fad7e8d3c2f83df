"""Spec text encoded for each sink, in one place per sink.

A spec's words (its opening comment, labels, names, display names, the file's
name) reach HTML, Markdown, LaTeX, the terminal, CSV and matplotlib. Each sink
has one encoder here, and each renderer calls it at the point where spec text
enters its output, so that the text is shown, never obeyed:

- `html_text`: `& < > " '` as entities, for text and attribute values alike
  (control characters shown, as for the terminal);
  `safe_href` keeps a link only when its scheme is http, https or mailto (or it
  has none), never `javascript:` or `data:`.
- `md_text`: Markdown with what opens live markup escaped (`\\`, `<`, `&`, `](`,
  `][`, a leading `[`, and `|` in a table cell), so that `<script>`,
  `<img onerror=...>` and `[x](javascript:...)` are inert; backticks, `_`, `*`
  and other brackets are left (a code span and emphasis run nothing, and the
  examples' comments use code spans and brackets).
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

_MD = {"\\": "\\\\", "<": "&lt;", "&": "&amp;", "](": "\\](", "][": "\\]["}
_MD_RE = re.compile(r"[\\<&]|\]\(|\]\[")


def md_text(text: str) -> str:
    """Spec text for Markdown: never live markup (no tags, autolinks, links, images or entities).

    A tag or an autolink needs `<`, an entity `&`, a link or an image `](` or `][`
    (or a definition `[x]: url` at the start of a block, hence a leading `[` is
    escaped too); other text stays as it is, so that `E[max]` and `a -> b` read
    (and are written) as before.
    """
    out = _MD_RE.sub(lambda m: _MD[m.group()], printable(text)).replace("\n", " ")
    return "\\" + out if out.startswith("[") else out


_MD_ORDINAL = re.compile(r"^(\d+)([.)])")


def md_item(text: str) -> str:
    """A Markdown list item's text: `md_text`, a leading `1.` or `1)` escaped (text, not a nested ordered list)."""
    return _MD_ORDINAL.sub(r"\1\\\2", md_text(text))


def md_cell(text: str) -> str:
    """A Markdown table cell: `md_text`, with `|` escaped."""
    return md_text(text).replace("|", "\\|")


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
_TEX_RE = re.compile(r"[\\{}$&#_%~^<>|]|[\x00-\x1f\x7f-\x9f]")


def _tex_one(m: re.Match) -> str:
    ch = m.group()
    return _TEX.get(ch) or f"\\textbackslash{{}}x{ord(ch):02x}"


def tex_text(text: str) -> str:
    """Spec text for LaTeX text mode (also inside \\text{...}): every special character escaped."""
    return _TEX_RE.sub(_tex_one, text)


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
