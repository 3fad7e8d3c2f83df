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
from ctdsl.syntax.positions import Positions
from ctdsl.units import UnitError, parse_unit

RESERVED = {
    "model", "device", "link", "pluggable", "switch", "dc", "variant", "scheme", "simulation",
    "wan", "param", "baseline", "breakeven", "import", "in", "vs", "over", "lin", "log",
    "target", "for", "scenario", "observe", "of", "source", "fit",
    "instance", "pool", "workload", "handoff", "slo",
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


BLOCK_WORDS = ("model", "device", "link", "pluggable", "switch", "dc", "scheme", "simulation", "variant", "param", "wan", "import", "breakeven", "baseline", "target", "scenario", "observe", "fit", "instance", "pool", "workload", "handoff", "slo")


def _unclosed_brace(text: str, upto: int) -> int | None:
    """The offset of the last '{' not closed before offset `upto`."""
    stack: list[int] = []
    in_comment, in_string = False, False
    for i, ch in enumerate(text[:upto]):
        if ch in "\r\n":  # a line end (LF, CR LF or a lone CR) ends a comment and a string
            in_comment, in_string = False, False
            continue
        if not in_comment and not in_string:
            if ch == "#":
                in_comment = True
            elif ch == '"':
                in_string = True
            elif ch == "{":
                stack.append(i)
            elif ch == "}" and stack:
                stack.pop()
        elif in_string and ch == '"':
            in_string = False
    return stack[-1] if stack else None


def _end_of_last(err: UnexpectedInput, pos: Positions) -> int | None:
    """The offset just after the last thing the parser took before `err`."""
    interactive = getattr(err, "interactive_parser", None)
    stack = getattr(getattr(interactive, "parser_state", None), "value_stack", None) or []
    if not stack:
        return None
    return pos.end_of(stack[-1])


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


def syntax_diagnostic(err: UnexpectedInput, pos: Positions) -> Diagnostic:
    """Turn one of Lark's exceptions into a diagnostic with a clear message."""
    if isinstance(err, UnexpectedCharacters):
        return _unexpected_character(err, pos)
    if isinstance(err, UnexpectedEOF) or (isinstance(err, UnexpectedToken) and err.token.type == "$END"):
        return _unexpected_end(err, pos)
    assert isinstance(err, UnexpectedToken)
    return _unexpected_token(err, pos)


def _unexpected_character(err: UnexpectedCharacters, pos: Positions) -> Diagnostic:
    text = pos.index.text
    at = err.pos_in_stream
    ch = text[at] if at < len(text) else "?"
    span = pos.at(at)
    line_end = pos.index.line_span(span.line)[1]
    rest = text[at:line_end]
    if ch == '"' and '"' not in rest[1:]:
        return Diagnostic(
            "CT006",
            "unterminated string",
            pos.between(at, line_end),
            label="no closing '\"' on this line",
            help='close the string on the same line: "like this"',
        )
    help_ = None
    if ch == "=" and text[at - 1 : at + 1] == "==":
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


def _unexpected_end(err: UnexpectedInput, pos: Positions) -> Diagnostic:
    last = max(pos.index.count, 1)
    width = len(pos.index.line(last) or "")
    span = Span(pos.file, last, width + 1, last, width + 2)
    open_at = _unclosed_brace(pos.index.text, len(pos.index.text))
    secondary = ()
    msg = "unexpected end of file"
    if open_at is not None:
        msg = "unexpected end of file: a '{' is never closed"
        secondary = (Label(pos.at(open_at), "opened here"),)
    expected = _acceptable(err)
    return Diagnostic(
        "CT004",
        msg,
        span,
        label="expected '}'" if open_at is not None else (f"expected {_expected_words(expected)}" if expected else ""),
        secondary=secondary,
        help="add the missing '}'" if open_at is not None else None,
    )


def _missing_separator(span: Span, word: str) -> Diagnostic:
    return Diagnostic(
        "CT005",
        f"missing ';' or a newline before '{word}'",
        span,
        label="expected a newline or ';' before this",
        help="put each field or statement on its own line, or separate them with ';'",
    )


def _unexpected_token(err: UnexpectedToken, pos: Positions) -> Diagnostic:
    text = pos.index.text
    tok = err.token
    span = pos.span(tok)
    expected = _acceptable(err)
    word = str(tok)
    wordlike = tok.type in ("NAME", "UNIT") or word in RESERVED
    shown = word if len(word) <= 24 else word[:21] + "..."
    history = getattr(err, "token_history", None) or []
    prev = history[-1] if history else None
    if prev is not None and prev.type == "UNIT" and (tok.type in ("EQUAL", "LBRACE", "COLON") or str(prev) in RESERVED):
        # `workers = 4 device = g`: the word after the number was read as its unit
        return _missing_separator(pos.span(prev), str(prev))
    if tok.type == "_NL":
        # point just after the last token, not past a comment at the end of the line
        end = _end_of_last(err, pos)
        if end is not None:
            span = pos.at(end)
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
        return _missing_separator(span, shown)
    label = f"expected {_expected_words(expected)}"
    lead = prev if prev is not None and str(prev) in BLOCK_WORDS else tok  # `dc west`: dc was read as a field's key
    open_at = _unclosed_brace(text, lead.start_pos) if lead.start_pos is not None else None
    lead_line = pos.span(lead).line
    if open_at is not None and pos.at(open_at).line < lead_line and str(lead) in BLOCK_WORDS:
        # `dc west {` on a later line, inside a block whose '}' is missing
        opened = pos.at(open_at)
        brace = Label(opened, "this '{' is still open")
        return Diagnostic(
            "CT002",
            f"unexpected {_token_words(tok, shown, wordlike)}: the '{{' on line {opened.line} is never closed",
            span,
            label=label,
            secondary=(brace,),
            help=f"close the block with '}}' before line {lead_line}",
        )
    return Diagnostic("CT002", f"unexpected {_token_words(tok, shown, wordlike)}", span, label=label, help=_token_help(tok, expected, wordlike, prev))


def _token_help(tok, expected: set[str], wordlike: bool, prev=None) -> str | None:
    if tok.type == "SLASH" and "UNIT" in expected:
        return "write compound units without spaces, e.g. GB/s"
    if tok.type == "EQUAL" and prev is not None and prev.type == "EQUAL" and prev.end_pos == tok.start_pos:
        return "fields take a single '='"  # `bandwidth == 5 GB/s`
    if tok.type == "EQUAL" and "EQUAL" not in expected:
        return "'=' only appears in 'key = value' fields and params"
    if (wordlike or tok.type == "NUMBER") and "EQUAL" in expected:  # `distance 10 km`
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
