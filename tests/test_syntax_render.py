"""How diagnostics print: snapshots of the text form (colour off), and the other forms.

The expected texts are written by hand, column by column, from the inputs.
"""

from __future__ import annotations

import json

from ctdsl.api import check
from ctdsl.diagnostics import (
    Diagnostic,
    Label,
    Severity,
    Sources,
    Span,
    did_you_mean,
    render_concise,
    render_json,
    render_text,
    sort_diagnostics,
    summary_line,
)


def rendered(text: str, path: str = "x.ct") -> list[str]:
    result = check(path, text=text)
    return [render_text(d, result.sources) for d in result.diagnostics]


def test_snapshot_dimension_mismatch_with_three_labels():
    (out,) = rendered("param lat = 1 us + 2 GB\n")
    assert out == (
        "x.ct:1:18: CT201 cannot add time (s) and data (B)\n"
        "  |\n"
        "1 | param lat = 1 us + 2 GB\n"
        "  |             ---- time (s)\n"
        "  |                  ^ dimensions differ\n"
        "  |                    ---- data (B)\n"
        "  |\n"
        "  = help: both sides of + and - need the same dimension"
    )


def test_snapshot_duplicate_points_at_both_places_in_line_order():
    (out,) = rendered("link a { bandwidth = 1 GB/s; latency = 1 us }\n\nswitch a {}\n")
    assert out == (
        "x.ct:3:8: CT103 'a' is defined twice\n"
        "  |\n"
        "1 | link a { bandwidth = 1 GB/s; latency = 1 us }\n"
        "  |      - first defined here, as a link\n"
        "3 | switch a {}\n"
        "  |        ^ switch 'a' defined again here\n"
        "  |\n"
        "  = help: every param and block shares one namespace; rename one of them"
    )


def test_snapshot_unclosed_brace():
    (out,) = rendered("link l {\n  bandwidth = 1 GB/s")
    assert out == (
        "x.ct:2:21: CT004 unexpected end of file: a '{' is never closed\n"
        "  |\n"
        "1 | link l {\n"
        "  |        - opened here\n"
        "2 |   bandwidth = 1 GB/s\n"
        "  |                     ^ expected '}'\n"
        "  |\n"
        "  = help: add the missing '}'"
    )


def test_snapshot_label_in_another_file(tmp_path):
    (tmp_path / "lib.ct").write_text("link shared { bandwidth = 1 GB/s; latency = 1 us }\n", encoding="utf-8")
    root = tmp_path / "root.ct"
    root.write_text('import "lib.ct"\nswitch shared {}\n', encoding="utf-8")
    result = check(str(root))
    (d,) = result.diagnostics
    out = render_text(d, result.sources).replace(str(tmp_path) + "/", "")
    assert out == (
        "root.ct:2:8: CT103 'shared' is defined twice: here and in lib.ct\n"
        "  |\n"
        "2 | switch shared {}\n"
        "  |        ^^^^^^ switch 'shared' defined here\n"
        "  ::: lib.ct:1:6\n"
        "1 | link shared { bandwidth = 1 GB/s; latency = 1 us }\n"
        "  |      ------ also defined here, as a link\n"
        "  |\n"
        "  = help: every param and block shares one namespace, imports included; rename one of them"
    )


def test_snapshot_notes_and_help_after_the_excerpt():
    sources = Sources()
    sources.add("a.ct", "scheme s { at = p }\n")
    d = Diagnostic(
        "CT401",
        "pluggable 'p' cannot do top-k: it needs compare",
        Span("a.ct", 1, 12, 1, 18),
        label="here",
        notes=("first note", "second note"),
        help="run it at gpu",
    )
    assert render_text(d, sources) == (
        "a.ct:1:12: CT401 pluggable 'p' cannot do top-k: it needs compare\n"
        "  |\n"
        "1 | scheme s { at = p }\n"
        "  |            ^^^^^^ here\n"
        "  |\n"
        "  = note: first note\n"
        "  = note: second note\n"
        "  = help: run it at gpu"
    )


def test_a_diagnostic_without_a_place():
    d = Diagnostic("CT606", "the topology has 5000 workers; at most 4096 are modelled", None)
    assert render_text(d, Sources()) == "CT606 the topology has 5000 workers; at most 4096 are modelled"
    assert render_concise(d) == "CT606 the topology has 5000 workers; at most 4096 are modelled"


def test_warnings_say_so():
    sources = Sources()
    sources.add("a.ct", "x\n")
    d = Diagnostic("CT999", "something", Span("a.ct", 1, 1, 1, 2), Severity.WARNING)
    assert render_text(d, sources).splitlines()[0] == "a.ct:1:1: CT999 [warning] something"


def test_long_lines_are_cut_around_the_place():
    text = "param x = " + "1 + " * 100 + "1 GB\n"
    (out,) = rendered(text)
    lines = out.splitlines()
    # the last '+' is 10 + 4 * 99 + 2 characters in: column 409
    assert lines[0] == "x.ct:1:409: CT201 cannot add dimensionless and data (B)"
    source_line = lines[2]
    assert source_line.startswith("1 | ...") and len(source_line) < 200
    # the caret still sits under the '+' it points at
    caret = next(line for line in lines if "^" in line)
    col = caret.index("^") - len("  | ")
    assert source_line[len("1 | ") + col] == "+"


def test_tabs_keep_carets_aligned():
    (out,) = rendered("link l {\n\tbandwidth = 5 ms\n}\n")
    lines = out.splitlines()
    assert lines[2] == "2 |  bandwidth = 5 ms"
    assert lines[3] == "  |              ^^^^ this is time (s)"


def test_colour_is_only_on_request():
    result = check("x.ct", text="link l { bandwidth = 5 ms }\n")
    d = result.diagnostics[0]
    assert "\x1b[" not in render_text(d, result.sources)
    coloured = render_text(d, result.sources, color=True)
    assert "\x1b[31m" in coloured and "CT202" in coloured


def test_json_form():
    result = check("x.ct", text="link l { bandwidth = 5 ms; latency = 1 us }\n")
    data = json.loads(render_json(result.diagnostics))
    # the json of a report (ctdsl check and ctdsl lint), without files given
    assert data == {
        "version": 1,
        "files": [],
        "summary": {"errors": 1, "warnings": 0, "info": 0, "suppressed": 0, "files": 0},
        "diagnostics": [
            {
                "code": "CT202",
                "name": "wrong-dimension",
                "source": "check",
                "severity": "error",
                "message": "link 'l' bandwidth must be data rate (B/s), but this is time (s)",
                "file": "x.ct",
                "span": {"file": "x.ct", "line": 1, "col": 22, "end_line": 1, "end_col": 26},
                "label": "this is time (s)",
                "secondary": [],
                "notes": [],
                "help": "e.g. bandwidth = 50 GB/s",
            }
        ],
    }


def test_sorting_and_deduplication():
    a = Diagnostic("CT2", "m", Span("b.ct", 1, 1, 1, 2))
    b = Diagnostic("CT1", "m", Span("a.ct", 9, 1, 9, 2))
    c = Diagnostic("CT1", "m", Span("a.ct", 2, 5, 2, 6))
    assert sort_diagnostics([a, b, c, c]) == [c, b, a]


def test_summary_line():
    e = Diagnostic("CT1", "m", None)
    w = Diagnostic("CT2", "m", None, Severity.WARNING)
    assert summary_line([]) == "All checks passed."
    assert summary_line([e]) == "Found 1 error."
    assert summary_line([e, e, w]) == "Found 2 errors and 1 warning."


def test_did_you_mean():
    assert did_you_mean("bandwith", ["bandwidth", "latency"]) == "did you mean 'bandwidth'?"
    assert did_you_mean("IB_NDR", ["ib_ndr"]) == "did you mean 'ib_ndr'?"
    assert did_you_mean("zzz", ["bandwidth"]) is None


def test_secondary_label_on_a_line_without_source_is_skipped():
    sources = Sources()
    sources.add("a.ct", "one line\n")
    d = Diagnostic("CT1", "m", Span("a.ct", 1, 1, 1, 4), secondary=(Label(Span("a.ct", 7, 1, 7, 2), "gone"),))
    assert "gone" not in render_text(d, sources)
