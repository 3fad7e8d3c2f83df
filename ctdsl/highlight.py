"""A Pygments lexer for .ct specs: ```ct blocks in Sphinx, MkDocs and Jupyter.

Registered through the `pygments.lexers` entry point (pyproject.toml), so that
`pygmentize -l ct`, Sphinx's `.. code-block:: ct` and Markdown's ```ct find it
once ctdsl is installed. The token classes follow grammar/ctdsl.lark:

- `#` comments: Comment.Single; "strings": String.Double;
- the kinds of block (`model`, `link`, ...): Keyword.Declaration, the name after
  it Name.Class, and the base after `:` Name.Class too;
- statement words (`import`, `param`, `wan`, `breakeven`, `baseline`, `target`, `for`, `search`, `vs`,
  `over`, `on`, `in`, `lin`, `log`, `scenario`, `observe`, `of`, `source`, `fit`): Keyword;
  `true`/`false`: Keyword.Constant;
- `std.NAME` after import: Name.Namespace; the name after `param`: Name.Variable;
- numbers: Number (Number.Float with a point or exponent, Number.Integer
  otherwise); the unit right after a number (`12.5 GB/s`): Keyword.Type;
- `wan A <-> B = LINK`: Keyword, Name, Operator, Name, Operator, Name.Class;
- `key =` in a block: Name.Attribute; a stage `port {`: Name.Label;
- the distribution after `~` (`uniform`, `triangular`, `normal`, `lognormal`, `samples`): Name.Builtin;
- other names: Name; `<->`, `->`, `..`, `=`, `~` (a distribution), and arithmetic: Operator;
  braces, brackets, parentheses, `,`, `;`, `:`: Punctuation.

Nothing in the lexer evaluates anything: it is regular expressions over text.
"""

from __future__ import annotations

from pygments.lexer import RegexLexer, bygroups, words
from pygments.token import Comment, Keyword, Name, Number, Operator, Punctuation, String, Whitespace

KINDS = ("model", "device", "link", "pluggable", "switch", "dc", "replica", "variant", "scheme", "simulation")
STATEMENT_WORDS = ("import", "param", "wan", "breakeven", "baseline", "target", "search", "vs", "over", "on", "in", "for", "scenario", "observe", "of", "source", "fit")
# the kinds of distribution a param's `~` names (ctdsl.check.distributions.KINDS; tests/test_highlight.py keeps them equal)
DISTRIBUTIONS = ("uniform", "triangular", "normal", "lognormal", "samples")
UNIT = r"(?!(?:lin|log|in|vs|over|source)(?![A-Za-z]))[A-Za-z%\u00b5][A-Za-z0-9]*(?:/[A-Za-z][A-Za-z0-9]*)*"
NUMBER = r"(?:\d[\d_]*(?:\.\d+)?(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?)"
NAME = r"[A-Za-z_][A-Za-z0-9_]*"


class CtLexer(RegexLexer):
    name = "ct"
    aliases = ["ct", "ctdsl"]
    filenames = ["*.ct"]
    mimetypes = ["text/x-ctdsl"]
    url = "https://pypi.org/project/ctdsl/"

    tokens = {
        "root": [
            (r"\n", Whitespace),
            (r"[ \t\f\r]+", Whitespace),
            (r"#[^\n]*", Comment.Single),
            (r'"[^"\n]*"', String.Double),
            (r"(import)([ \t]+)(std(?:\.[A-Za-z_][A-Za-z0-9_]*)+)", bygroups(Keyword.Namespace, Whitespace, Name.Namespace)),
            (r"(import)\b", Keyword.Namespace),
            (rf"(param)([ \t]+)({NAME})", bygroups(Keyword, Whitespace, Name.Variable)),
            (
                rf"({'|'.join(KINDS)})([ \t]+)({NAME})(?:([ \t]*)(:)([ \t]*)({NAME}))?",
                bygroups(Keyword.Declaration, Whitespace, Name.Class, Whitespace, Punctuation, Whitespace, Name.Class),
            ),
            (
                rf"(wan)([ \t]+)({NAME})([ \t]*)(<->|->)([ \t]*)({NAME})([ \t]*)(=)([ \t]*)({NAME})",
                bygroups(Keyword, Whitespace, Name, Whitespace, Operator, Whitespace, Name, Whitespace, Operator, Whitespace, Name.Class),
            ),
            (rf"(~)([ \t]*)({'|'.join(DISTRIBUTIONS)})\b", bygroups(Operator, Whitespace, Name.Builtin)),
            (rf"({NAME})([ \t]*)(?==)", bygroups(Name.Attribute, Whitespace)),
            (rf"({NAME})([ \t]*)(\{{)", bygroups(Name.Label, Whitespace, Punctuation)),
            # a number then its unit; `(?![eE][+-]?\d)`: `7.24e9` is one number, never 7.24 and a unit `e`
            (rf"(\d[\d_]*(?:\.\d+)?[eE][+-]?\d+|\d[\d_]*\.\d+(?![eE][+-]?\d)|\.\d+(?:[eE][+-]?\d+)?)([ \t]*)({UNIT})", bygroups(Number.Float, Whitespace, Keyword.Type)),
            (r"\d[\d_]*(?:\.\d+)?[eE][+-]?\d+|\d[\d_]*\.\d+|\.\d+(?:[eE][+-]?\d+)?", Number.Float),
            (rf"(\d[\d_]*(?![eE][+-]?\d))([ \t]*)({UNIT})", bygroups(Number.Integer, Whitespace, Keyword.Type)),
            (r"\d[\d_]*", Number.Integer),
            (words(STATEMENT_WORDS + ("lin", "log"), suffix=r"\b"), Keyword),
            (words(("true", "false"), suffix=r"\b"), Keyword.Constant),
            (NAME, Name),
            (r"<->|->|\.\.|[-+*/^=~]", Operator),
            (r"[{}\[\](),;:.]", Punctuation),
        ],
    }


__all__ = ["CtLexer", "DISTRIBUTIONS", "KINDS", "STATEMENT_WORDS"]
