"""Syntax errors: Lark's exceptions turned into diagnostics, here and nowhere else.

Three kinds of failure reach `syntax_diagnostic`:

- an unexpected character (CT003; CT006 for a string left open on its line);
- the end of the file where more was needed (CT004; when a '{' is still open,
  the diagnostic points at it too);
- an unexpected token (CT002), with the cases worth naming: a missing ';' or
  newline between two fields (CT005, including a word after a number that Lark
  read as the number's unit), and a unit after a name or a bracket rather than
  after a number.

What the parser expected is read from its interactive state (the tokens it
would really accept there), not from LALR's merged `expected` set, and is said
in words ("a name", "'}'", "an operator").
"""

from __future__ import annotations

from lark import Token
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken

from ctdsl.diagnostics import Diagnostic, Label, Span
from ctdsl.syntax.positions import span_of
from ctdsl.units import UnitError, parse_unit

RESERVED = {
    "model", "device", "link", "pluggable", "switch", "dc", "variant", "scheme", "simulation",
    "wan", "param", "baseline", "breakeven", "import", "in", "vs", "over", "lin", "log",
    "target", "for", "scenario", "observe", "of", "source", "fit",
}

_TOKEN_WORDS = {
    "_NL": "a newline",
    "SEMICOLON": "';'",
    "LBRACE": "'{'",
    "RBRACE": "'}'",
    "LPAR": "'('",
    "RPAR": "')'",
    "LSQB": "'['",
    "RSQB": "']'",
    "COMMA": "','",
    "EQUAL": "'='",
    "COLON": "':'",
    "DOT": "'.'",
    "__ANON_0": "'..'",
    "NAME": "a name",
    "NUMBER": "a number",
    "UNIT": "a unit",
    "STRING": "a string",
    "INT": "a whole number",
    "ARROW": "'<->' or '->'",
    "SPACING": "'lin' or 'log'",
    "PLUS": "'+'",
    "MINUS": "'-'",
    "STAR": "'*'",
    "SLASH": "'/'",
    "CARET": "'^'",
    "$END": "the end of the file",
}



def _describe(token_type: str) -> str:
    if token_type in _TOKEN_WORDS:
        return _TOKEN_WORDS[token_type]
    if token_type.isupper() and token_type.lower() in RESERVED:
        return f"'{token_type.lower()}'"
    return token_type.lower()


_OPERATORS = {"PLUS", "MINUS", "STAR", "SLASH", "CARET"}


def _expected_words(expected) -> str:
    kinds = set(expected)
    if "NAME" in kinds:  # a name may be any word, reserved ones included
        kinds = {k for k in kinds if k.lower() not in RESERVED}
    if "_NL" in kinds:
        kinds.discard("$END")
    words = set()
    if len(kinds & _OPERATORS) > 1:
        kinds -= _OPERATORS
        words.add("an operator")
    words |= {_describe(t) for t in kinds}
    ordered = sorted(words)
    if len(ordered) > 6:
        ordered = ordered[:6] + ["..."]
    return ", ".join(ordered)


def _acceptable(err: UnexpectedInput) -> set[str]:
    """The tokens the parser would take here: exact, unlike LALR's merged `expected`."""
    interactive = getattr(err, "interactive_parser", None)
    if interactive is not None:
        accepted = set(interactive.accepts())
        if accepted:
            return accepted
    return set(getattr(err, "expected", None) or ())


BLOCK_WORDS = ("model", "device", "link", "pluggable", "switch", "dc", "scheme", "simulation", "variant", "param", "wan", "import", "breakeven", "baseline", "target", "scenario", "observe", "fit")


def _unclosed_brace(text: str, upto: int) -> tuple[int, int] | None:
    """Line and column of the last '{' not closed before offset `upto`."""
    stack: list[tuple[int, int]] = []
    line, col, in_comment, in_string = 1, 1, False, False
    for ch in text[:upto]:
        if ch == "\n":
            line, col, in_comment, in_string = line + 1, 1, False, False
            continue
        if not in_comment and not in_string:
            if ch == "#":
                in_comment = True
            elif ch == '"':
                in_string = True
            elif ch == "{":
                stack.append((line, col))
            elif ch == "}" and stack:
                stack.pop()
        elif in_string and ch == '"':
            in_string = False
        col += 1
    return stack[-1] if stack else None


def _end_of_last(err: UnexpectedInput) -> tuple[int, int] | None:
    """Line and column just after the last thing the parser took before `err`."""
    interactive = getattr(err, "interactive_parser", None)
    stack = getattr(getattr(interactive, "parser_state", None), "value_stack", None) or []
    if not stack:
        return None
    last = stack[-1]
    if isinstance(last, Token):
        if last.end_line is None or last.end_column is None:
            return None
        return last.end_line, last.end_column
    meta = getattr(last, "meta", None)
    if meta is None or getattr(meta, "empty", True):
        return None
    return meta.end_line, meta.end_column


def _is_unit(word: str) -> bool:
    try:
        parse_unit(word)
    except UnitError:
        return False
    return True


def _after_a_value(err: UnexpectedInput) -> bool:
    """Whether the parser had just read a name, a call or a bracketed expression."""
    interactive = getattr(err, "interactive_parser", None)
    stack = getattr(getattr(interactive, "parser_state", None), "value_stack", None) or []
    if not stack:
        return False
    last = stack[-1]
    if isinstance(last, Token):
        return last.type in ("NAME", "RPAR")
    return getattr(last, "data", None) in ("ref", "call")


def syntax_diagnostic(err: UnexpectedInput, file: str, text: str) -> Diagnostic:
    """Turn one of Lark's exceptions into a diagnostic with a clear message."""
    if isinstance(err, UnexpectedCharacters):
        return _unexpected_character(err, file, text)
    if isinstance(err, UnexpectedEOF) or (isinstance(err, UnexpectedToken) and err.token.type == "$END"):
        return _unexpected_end(err, file, text)
    assert isinstance(err, UnexpectedToken)
    return _unexpected_token(err, file, text)


def _unexpected_character(err: UnexpectedCharacters, file: str, text: str) -> Diagnostic:
    ch = text[err.pos_in_stream] if err.pos_in_stream < len(text) else "?"
    span = Span(file, err.line, err.column, err.line, err.column + 1)
    rest = text[err.pos_in_stream :].split("\n", 1)[0]
    if ch == '"' and '"' not in rest[1:]:
        return Diagnostic(
            "CT006",
            "unterminated string",
            Span(file, err.line, err.column, err.line, err.column + len(rest.rstrip("\r"))),
            label="no closing '\"' on this line",
            help='close the string on the same line: "like this"',
        )
    help_ = None
    if ch == "=" and text[err.pos_in_stream - 1 : err.pos_in_stream + 1] == "==":
        help_ = "fields take a single '='"
    elif ch in "'`":
        help_ = 'strings are written in double quotes: "like this"'
    elif "UNIT" in (err.allowed or ()) and ch == " ":
        help_ = "write the unit right after the number, e.g. 12.5 GB/s"
    return Diagnostic(
        "CT003",
        f"unexpected character {ch!r}",
        span,
        label="not part of the language",
        help=help_,
    )


def _unexpected_end(err: UnexpectedInput, file: str, text: str) -> Diagnostic:
    lines = text.splitlines() or [""]
    last = len(lines)
    span = Span(file, last, len(lines[-1]) + 1, last, len(lines[-1]) + 2)
    open_at = _unclosed_brace(text, len(text))
    secondary = ()
    msg = "unexpected end of file"
    if open_at:
        msg = "unexpected end of file: a '{' is never closed"
        secondary = (Label(Span(file, open_at[0], open_at[1], open_at[0], open_at[1] + 1), "opened here"),)
    expected = _acceptable(err)
    return Diagnostic(
        "CT004",
        msg,
        span,
        label="expected '}'" if open_at else (f"expected {_expected_words(expected)}" if expected else ""),
        secondary=secondary,
        help="add the missing '}'" if open_at else None,
    )


def _missing_separator(file: str, span: Span, word: str) -> Diagnostic:
    return Diagnostic(
        "CT005",
        f"missing ';' or a newline before '{word}'",
        span,
        label="expected a newline or ';' before this",
        help="put each field or statement on its own line, or separate them with ';'",
    )


def _unexpected_token(err: UnexpectedToken, file: str, text: str) -> Diagnostic:
    tok = err.token
    span = span_of(file, tok)
    expected = _acceptable(err)
    word = str(tok)
    wordlike = tok.type in ("NAME", "UNIT") or word in RESERVED
    shown = word if len(word) <= 24 else word[:21] + "..."
    history = getattr(err, "token_history", None) or []
    prev = history[-1] if history else None
    if prev is not None and prev.type == "UNIT" and (tok.type in ("EQUAL", "LBRACE", "COLON") or str(prev) in RESERVED):
        # `workers = 4 device = g`: the word after the number was read as its unit
        return _missing_separator(file, span_of(file, prev), str(prev))
    if tok.type == "_NL":
        # point just after the last token, not past a comment at the end of the line
        end = _end_of_last(err)
        if end is not None:
            span = Span(file, end[0], end[1], end[0], end[1] + 1)
    before_equals = text[tok.end_pos :].lstrip(" \t").startswith("=") if tok.end_pos is not None else False
    if wordlike and _is_unit(word) and _after_a_value(err) and not before_equals:
        # `bandwidth = x GB/s`: a unit after a name or a bracket, not after a number
        return Diagnostic(
            "CT002",
            f"unexpected unit '{shown}'",
            span,
            label="a unit follows a number",
            help=f"multiply by a quantity: write ... * 1 {shown}",
        )
    if wordlike and expected & {"_NL", "SEMICOLON"}:
        return _missing_separator(file, span, shown)
    label = f"expected {_expected_words(expected)}"
    lead = prev if prev is not None and str(prev) in BLOCK_WORDS else tok  # `dc west`: dc was read as a field's key
    open_at = _unclosed_brace(text, lead.start_pos) if lead.start_pos is not None else None
    if open_at is not None and open_at[0] < lead.line and str(lead) in BLOCK_WORDS:
        # `dc west {` on a later line, inside a block whose '}' is missing
        brace = Label(Span(file, open_at[0], open_at[1], open_at[0], open_at[1] + 1), "this '{' is still open")
        return Diagnostic(
            "CT002",
            f"unexpected {_token_words(tok, shown, wordlike)}: the '{{' on line {open_at[0]} is never closed",
            span,
            label=label,
            secondary=(brace,),
            help=f"close the block with '}}' before line {lead.line}",
        )
    return Diagnostic("CT002", f"unexpected {_token_words(tok, shown, wordlike)}", span, label=label, help=_token_help(tok, expected, wordlike))


def _token_help(tok, expected: set[str], wordlike: bool) -> str | None:
    if tok.type == "SLASH" and "UNIT" in expected:
        return "write compound units without spaces, e.g. GB/s"
    if tok.type == "EQUAL" and "EQUAL" not in expected:
        return "'=' only appears in 'key = value' fields and params"
    if wordlike and "EQUAL" in expected:
        return "a field is written 'key = value'"
    return None


def _token_words(tok, shown: str, wordlike: bool) -> str:
    """The unexpected token, in words: "name 'x'", "end of line", "number 12"."""
    if wordlike:
        return f"{'word' if str(tok) in RESERVED else 'name'} '{shown}'"
    if tok.type == "_NL":
        return "end of line"
    if tok.type == "NUMBER":
        return f"number {shown}"
    if tok.type == "STRING":
        return f"string {shown}"
    return f"'{shown}'"
