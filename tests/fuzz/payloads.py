"""Payloads for the sinks spec text reaches, and where in a real spec they are planted.

A payload is text that an output would obey rather than show if it arrived
unencoded: Markdown that defines a link, HTML that runs a script, TeX that reads a
file, a terminal escape, a CI runner's command, a spreadsheet formula, bytes that
are not UTF-8, a line end that only some readers count, or an expression whose
value costs the machine a lot. Each one the oracles can recognise carries MARKER,
so that an element, a heading or a script that came from a spec is told from one
ctdsl wrote (tests/fuzz/sinks.py).

`plant(rng, text, corpus)` puts one to four payloads where a spec's text reaches an
output: the opening comment (the report's introduction), comments on code lines
(lint's excerpts), scheme labels, param display names, the spec's own file name, an
imported file's name, the names of params and schemes, and the values of fields and
params (cost bombs, a sweep's count, `--set`). A string of the language holds no `"`
and no newline, a file name no `/` and no NUL: each payload goes only where the
grammar and the file system let it.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field

MARKER = "ctdslpwn"
M = MARKER

# ---- payloads by sink (each a single line: no "\n"; the opening comment takes lists of lines) ---------------------

MARKDOWN = [
    f"[{M}]: javascript:alert(1)",
    f"> [{M}]: javascript:alert(1)",
    f"- [{M}]: http://evil.example/{M}.png",
    f"* [{M}]: javascript:alert(1)",
    f"+ [{M}]: javascript:alert(1)",
    f"1. [{M}]: javascript:alert(1)",
    f"   [{M}]: javascript:alert(1)",
    f"see [{M}] and ![{M}] and [x][{M}] and [{M}][]",
    f"![{M}](http://evil.example/{M}.png)",
    f"![{M}][{M}]",
    f"<img src=http://evil.example/{M}.png>",
    f"<javascript:alert('{M}')>",
    f"<http://evil.example/{M}>",
    f"<{M}@evil.example>",
    f"\\<b>{M}\\</b>",
    f"\\[{M}\\](javascript:alert(1))",
    f"&lt;b&gt;{M} &#106;avascript:alert(1)",
    f"# {M} heading",
    f"## {M} heading",
    f"| {M} | x |",
    f"a | b | {M}",
    f"{M} \\| x",
    f"`{M}` ``x`",
    f"<!-- {M}",
    f"[x](<javascript:alert('{M}')>)",
    f"[x]( javascript:alert('{M}'))",
    f"[x](JaVaScRiPt:alert('{M}'))",
    f"[x](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
    f"{M} {{: onclick=alert(1) }}",
    f"*[{M}]: an abbreviation",
    f"[^{M}]: a footnote [^{M}]",
    f"```{M}",
    f"~~~",
    f"    [{M}]: javascript:alert(1)",
    f"trailing backslash \\",
    f"**{M} strong** and *{M} em* and `{M} code`",
    f"__{M} strong__ and _{M} em_ and ~~{M} del~~ and ``{M} code``",
]
# the opening comment: blocks of lines ("" is a blank comment line, a paragraph break)
MARKDOWN_BLOCKS = [
    [f"> [{M}]: javascript:alert(1)", "", f"see [{M}] for more"],
    [f"[{M}]: http://evil.example/{M}.png", "", f"![{M}]"],
    [f"- [{M}]: javascript:alert(1)", "", f"[{M}]"],
    [f"{M} heading", "==="],
    [f"{M} heading", "---"],
    [f"| {M} | b |", "|---|---|", "| 1 | 2 |"],
    ["```", f"{M}", "```"],
    [f"<div markdown=1>{M}", "", "</div>"],
    [f"<details open ontoggle=alert('{M}')>", "", "x"],
    [f"Term {M}", f": definition {M}"],
]

HTML = [
    f"</script><script>alert('{M}')</script>",
    f"<img src=x onerror=alert('{M}')>",
    f"' onmouseover='alert(1)' {M}='",
    f"x onfocus=alert('{M}') autofocus",
    f"<svg onload=alert('{M}')>",
    f"<iframe src=javascript:alert('{M}')></iframe>",
    f"<base href=http://evil.example/{M}/>",
    f"<meta http-equiv=refresh content=0;url=http://evil.example/{M}>",
    f"<!--{M}",
    f"-->{M}<!--",
    f"<![CDATA[{M}]]>",
    f"<style>*{{display:none}}</style>{M}",
    f"javascript:alert('{M}')",
    f"<{M} x=1>",
    f"<a href=javascript:alert('{M}')>x</a>",
    f"</title><script>alert('{M}')</script>",
    f"</textarea><script>alert('{M}')</script>",
    f"<!--<script>{M}",
    f"\u2028</script>{M}",
    f"&lt;script&gt;{M}",
]
# where a double quote may go (comments, file names): attribute breaking
HTML_QUOTED = [
    f'"><img src=x onerror=alert(\'{M}\')>',
    f'" onmouseover="alert(\'{M}\')" x="',
    f'"></script><script>alert("{M}")</script>',
]

LATEX = [
    f"\\input{{{M}}}",
    f"\\immediate\\write18{{touch {M}}}",
    f"^^5cinput{{{M}}}",
    "b^",
    "x_",
    "\\catcode`\\^^@=11",
    f"\\def\\{M}{{}}",
    f"}}\\input{{{M}}}{{",
    "{",
    "}",
    f"\\csname {M}\\endcsname",
    f"$\\input{{{M}}}$",
    f"% {M}",
    "\\\\",
    f"\\end{{align}}\\input{{{M}}}",
    "\\verb|x|",
    "~",
    "^^M",
    f"\\openout1={M}",
    f"\\newcommand{{\\{M}}}{{}}",
    f"\\usepackage{{{M}}}",
    "b_{\\mathrm{WAN}}^",
    f"\\mathrm{{\\input{{{M}}}}}",
    "\\text{\\write18{id}}",
    "\\let\\a\\b",
    "\\expandafter",
    "#1",
    "&",
    f"\\href{{javascript:alert(1)}}{{{M}}}",
    f"\\special{{{M}}}",
    f"\\directlua{{os.execute('{M}')}}",
    "a^^",
    "^",
    "\\^",
    "x^{y",
]

TERMINAL = [
    f"\x1b[31m{M}\x1b[0m",
    f"\x1b]8;;http://evil.example/{M}\x1b\\click\x1b]8;;\x1b\\",
    "\x1b]52;c;Y3RkbHNwd24=\x07",
    "\x1b[2J\x1b[H",
    "\x1b[6n",
    f"\x9b31m{M}",
    f"\x9d0;{M}\x9c",
    f"{M}\rOK",
    f"{M}\u202egnp.exe",
    f"\u2066{M}\u2069",
    f"\u202a{M}\u202c",
    f"ctd\u200bslpwn\u200d",
    f"\ufeff{M}",
    f"{M}\b\b\b\b",
    "\x07",
    "\x1bP+q\x1b\\",
    f"{M}\x00x",
    "\x7f",
    f"\x1b[8m{M}",
    f"\x1b]0;{M}\x07",
]

CI = [
    f"::error file=x.ct,line=1::{M}",
    f"::stop-commands::{M}",
    f"::add-mask::{M}",
    f"##[error]{M}",
    f"##vso[task.setvariable variable={M}]1",
    f"::set-output name={M}::1",
    f"x\r::warning::{M}",
    f"%0A::error::{M}",
    f"  ::notice::{M}",
    f"x\u2028::error::{M}",
    f"x\x0c::error::{M}",
    f"x\x85::error::{M}",
    f"x\x0b##[warning]{M}",
    f"x ##vso[task.complete result=Failed]{M}",
    f"::group::{M}",
    f"::debug::{M}",
]

CSV = [
    "=HYPERLINK('http://evil.example')",
    "+cmd|' /C calc'!A0",
    "-2+3+cmd|' /C calc'!A0",
    "@SUM(1+1)*cmd|' /C calc'!A0",
    "\t=1+1",
    "\r=1+1",
    f"={M}",
    "=1+1",
    "-1+1",
]

JSON = [
    f"{M}\x00x",
    "\x00",
    "\\ud800",
    "\ud800",
    f"{M}\\u0000",
    "\u2028\u2029",
    "\ufffe\uffff",
    "\U0010ffff",
    '\\"},{"x":1',
]

# line ends that one reader counts and another does not (item 2 of issue 25: lint --fix)
LINE_ENDS = ["\x0c", "\x0b", "\u2028", "\u2029", "\x85", "\r", "\x1c", "\x1d", "\x1e"]

# costly values: power towers, huge numbers, deep nesting (placed as a field's or a param's value)
COST = [
    "2 ^ (((((10^64)^64)^64)^64)^64)",
    "2 ^ ((((10^64)^64)^64)^64)",
    "10^10^10^10",
    "9^9^9^9",
    "2^2^2^2^2^2",
    "(((((2^64)^64)^64)^64)^64)^64",
    "(10^64)^(10^64)",
    "1e300^1e300",
    "64^64^64^64^64",
    "(2^64)^(2^64)^(2^64)",
    "10^-10^10",
    "(-10)^(10^64)",
    "0.5^(10^64)^64",
    "ceil(" * 150 + "1.5" + ")" * 150,
    "(" * 190 + "2^64" + ")" * 190,
    "(" * 5000 + "1" + ")" * 5000,
    "-" * 3000 + "1",
    "min(" + ", ".join(["10^64^64"] * 300) + ")",
    "+".join(["(10^64)^64"] * 500),
    "*".join(["(2^64)"] * 400),
    "9" * 64,
    "9" * 5000,
    "1" + "0" * 64 + "e300",
    "log2(" * 100 + "2^64^64" + ")" * 100,
    "sqrt(" * 180 + "10^64^64" + ")" * 180,
]
SWEEP_COUNTS = ["100000000", "100001", "99999999999999999999", "4294967297", "1000000"]

# names: words that mean something to a reader downstream (JavaScript objects, sympy, TeX) or are all underscores
NAMES = [
    "__proto__", "constructor", "toString", "hasOwnProperty", "valueOf", "prototype", f"{M}__x", f"_{M}_", "x__",
    "_", "__", f"{M}_" * 10, "I", "E", "S", "N", "Q", "O", "oo", "pi", "gamma", "lambda", "beta", "zeta", "Infinity",
    "NaN", "undefined", "null", "nan", "inf", "exp", "log", "sqrt", "ceil", "min", "max", "sum", "a" * 128, "a" * 129,
]

# file names: what a file system allows (no "/", no NUL), each ending in .ct; "\udcff" is the byte 0xff
FILENAMES = [
    f"::stop-commands::{M}.ct",
    f"::error title={M}::x.ct",
    f"##[error]{M}.ct",
    f"##vso[task.setvariable variable={M}]x.ct",
    f"<img src=x onerror=alert('{M}')>.ct",
    f"[x](javascript:alert('{M}')).ct",
    f"[{M}]: javascript:alert(1).ct",
    f"\x1b[31m{M}.ct",
    f"\x1b]8;;http:\x1b\\{M}.ct",
    f"{M}\u202egnp.ct",
    f"x\n{M}\\input{{x}}.ct",
    f"x\r::error::{M}.ct",
    f"x\n::error::{M}.ct",
    f"={M}+1.ct",
    f"@{M}.ct",
    f"x\udcff{M}.ct",
    f"x%0A::error::{M}.ct",
    f'"><script>{M}<\\script>.ct',
    f"x`id`$(id){M}.ct",
    f"x\u2028::error::{M}.ct",
    f"}}\\input{{{M}}}{{.ct",
    f"x^^5c{M}.ct",
    f"x&amp;{M}.ct",
    f"a b {M}.ct",
    f"x\x85::warning::{M}.ct",
    f"{M}_" * 20 + ".ct",
    f"x\x0c{M}.ct",
    f"\u200b{M}.ct",
    f"'{M}'.ct",
    f"x\t{M}.ct",
]
# names an import may give ("" and "/" are left out: the STRING terminal holds no '"', a name no '/')
IMPORT_NAMES = [n for n in FILENAMES if '"' not in n and "\n" not in n]


# ---- planting -------------------------------------------------------------------------------------------------------


@dataclass
class Planted:
    text: str
    filename: str = "fuzz.ct"
    files: list[tuple[str, str]] = field(default_factory=list)  # (name, text) written beside the input
    sets: list[str] = field(default_factory=list)
    places: list[str] = field(default_factory=list)  # what was planted where, for the report


def _string_safe(p: str) -> str:
    """A payload as the inside of a string of the language (no '"', no newline)."""
    return p.replace('"', "'").replace("\n", " ")


def _comment_safe(p: str) -> str:
    return p.replace("\n", " ")


def _pick(rng: random.Random, *families: list[str]) -> str:
    return rng.choice(rng.choice(families))


def _all_strings(rng: random.Random) -> str:
    """A payload for any sink (one family, then one payload of it)."""
    return _pick(rng, MARKDOWN, HTML, LATEX, TERMINAL, CI, CSV, JSON, LINE_ENDS)


def _opening_comment(rng: random.Random, p: Planted) -> None:
    roll = rng.random()
    if roll < 0.45:
        lines = list(rng.choice(MARKDOWN_BLOCKS))
    elif roll < 0.6:
        lines = [_comment_safe(rng.choice(HTML + HTML_QUOTED))]
    else:
        lines = [_comment_safe(_all_strings(rng)) for _ in range(rng.randint(1, 3))]
        if rng.random() < 0.5:
            lines.insert(1, "")
    block = "\n".join("#" if not ln else f"# {ln}" for ln in lines)
    existing = p.text.split("\n")
    # at the very top (a new first paragraph), or after the file's own first comment line
    if existing and existing[0].startswith("#") and rng.random() < 0.5:
        p.text = existing[0] + "\n" + block + "\n" + "\n".join(existing[1:])
    else:
        p.text = block + "\n" + p.text
    p.places.append("opening comment")


_CODE_LINE = re.compile(r"^\s*(?:param|link|device|dc|scheme|model|switch|pluggable|replica|wan|breakeven|baseline)\b")


def _trailing_comment(rng: random.Random, p: Planted) -> None:
    lines = p.text.split("\n")
    slots = [i for i, ln in enumerate(lines) if _CODE_LINE.match(ln) and "#" not in ln and '"' not in ln]
    if not slots:
        return
    for i in rng.sample(slots, min(len(slots), rng.randint(1, 3))):
        payload = _comment_safe(rng.choice([_all_strings(rng), rng.choice(HTML_QUOTED)]))
        lines[i] = lines[i] + "  # " + payload
    p.text = "\n".join(lines)
    p.places.append("comment")


_LABEL = re.compile(r'(\blabel\s*=\s*)"[^"\n]*"')
_SCHEME_OPEN = re.compile(r"^(\s*scheme\s+\w+(?:\s*:\s*\w+)?\s*\{)", re.M)


def _label(rng: random.Random, p: Planted) -> None:
    payload = _string_safe(_pick(rng, MARKDOWN, HTML, LATEX, TERMINAL, CI, CSV, JSON))
    labels = list(_LABEL.finditer(p.text))
    if labels:
        m = rng.choice(labels)
        p.text = p.text[: m.start()] + m.group(1) + '"' + payload + '"' + p.text[m.end() :]
    else:
        opens = list(_SCHEME_OPEN.finditer(p.text))
        if not opens:
            return
        m = rng.choice(opens)
        p.text = p.text[: m.end()] + f' label = "{payload}";' + p.text[m.end() :]
    p.places.append("label")


_PARAM_LINE = re.compile(r'^(\s*param\s+\w+\s*=[^#"\n]*?)(\s*"[^"\n]*")?(\s*(?:#.*)?)$', re.M)


def _display_name(rng: random.Random, p: Planted) -> None:
    params = list(_PARAM_LINE.finditer(p.text))
    if not params:
        return
    m = rng.choice(params)
    payload = _string_safe(rng.choice(LATEX) if rng.random() < 0.6 else _all_strings(rng))
    p.text = p.text[: m.start()] + m.group(1) + f' "{payload}"' + m.group(3) + p.text[m.end() :]
    p.places.append("display name")


def _filename(rng: random.Random, p: Planted) -> None:
    p.filename = rng.choice(FILENAMES)
    p.places.append("file name")


def _import(rng: random.Random, p: Planted) -> None:
    name = rng.choice(IMPORT_NAMES)
    body = rng.choice([f"param {M}_imported = 1\n", f"param {M}_imported = 1 # {_comment_safe(_all_strings(rng))}\n",
                       "param = \n", "link x : nolink {}\n"])
    p.files.append((name, body))
    p.text = f'import "{name}"\n' + p.text
    p.places.append("import")


_PARAM_NAME = re.compile(r"^\s*param\s+(\w+)", re.M)
_SCHEME_NAME = re.compile(r"^\s*scheme\s+(\w+)", re.M)


def _rename(rng: random.Random, p: Planted) -> None:
    names = _PARAM_NAME.findall(p.text) + _SCHEME_NAME.findall(p.text)
    if not names:
        return
    old, new = rng.choice(names), rng.choice(NAMES)
    p.text = re.sub(rf"\b{re.escape(old)}\b", new, p.text)
    p.places.append("name")


def _line_ends_and_fixes(rng: random.Random, p: Planted) -> None:
    """A line end only some readers count, in a comment above fixable findings (issue 25 item 2's shape)."""
    lines = p.text.split("\n")
    end = rng.choice(LINE_ENDS)
    i = rng.randrange(len(lines))
    if "#" in lines[i] or '"' in lines[i] or rng.random() < 0.3:
        lines.insert(i, f"# a comment{end}with a line end in it")
    else:
        lines[i] = lines[i] + f"  # x{end}y"
    if rng.random() < 0.2 and end in "\x0c\x0b":  # also as whitespace between tokens, where the grammar allows
        lines.insert(i, f"{end}param {M}_ws = 1")
    shape = rng.random()
    if shape < 0.6:  # two links on consecutive lines at the same column: the second is 8x off (CTL006, fixable)
        lines += [f"link {M}_a : eth100g {{ bandwidth = 400 GB/s }}", f"link {M}_b : eth100g {{ bandwidth = 100 GB/s }}"]
    elif shape < 0.8:  # an unused suppression (CTL011, fixable) below the line end
        lines += [f"param {M}_s = 1  # ctdsl: ignore[CTL006]"]
    else:
        lines += [f"link {M}_c : eth100g {{", "  bandwidth = 100 GB/s", "}"]
    if not re.search(r"^\s*import\s+std\.links\b", p.text, re.M):
        lines.insert(0, "import std.links")
    p.text = "\n".join(lines)
    p.places.append("line end")


_VALUE = re.compile(r"^(\s*(?:param\s+\w+|[A-Za-z_]\w*)\s*=\s*)([^#\n{}\"]*?)(\s*(?:\bin\b.*)?(?:#.*)?)$", re.M)
_COUNT = re.compile(r"(\b(?:lin|log)\s+)(\d+)")


def _cost(rng: random.Random, p: Planted) -> None:
    roll = rng.random()
    if roll < 0.2:
        counts = list(_COUNT.finditer(p.text))
        if counts:
            m = rng.choice(counts)
            p.text = p.text[: m.start()] + m.group(1) + rng.choice(SWEEP_COUNTS) + p.text[m.end() :]
            p.places.append("sweep count")
            return
    if roll < 0.35:
        refs = _PARAM_NAME.findall(p.text)
        if refs:
            p.sets.append(f"{rng.choice(refs)}={rng.choice(COST)}")
            p.places.append("--set")
            return
    slots = list(_VALUE.finditer(p.text))
    if not slots:
        return
    m = rng.choice(slots)
    p.text = p.text[: m.start()] + m.group(1) + rng.choice(COST) + m.group(3) + p.text[m.end() :]
    p.places.append("cost")


PLANTERS = [
    (_opening_comment, 3), (_trailing_comment, 2), (_label, 3), (_display_name, 2), (_filename, 2), (_import, 1),
    (_rename, 1), (_line_ends_and_fixes, 2), (_cost, 2),
]


def plant(rng: random.Random, text: str) -> Planted:
    """One to four payloads planted in `text` (a real spec), each where spec text reaches an output."""
    p = Planted(text)
    planters = [f for f, w in PLANTERS for _ in range(w)]
    for _ in range(rng.choice([1, 1, 2, 2, 3, 4])):
        rng.choice(planters)(rng, p)
    return p
