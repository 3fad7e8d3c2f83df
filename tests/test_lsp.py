"""`ctdsl lsp` driven by a real LSP client over stdio (tests/lspkit.py).

The client opens the flagship, edits it (an error in, then out), hovers,
completes, goes to definition, finds references, asks for symbols, semantic
tokens and quick fixes. Expected positions are counted by hand from the
flagship's text (line numbers below are the file's, 1-based; LSP's are 0-based),
and expected names are read from the files with a regular expression, not from
the server's index.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

pytest.importorskip("pygls", reason="the language server needs pygls: pip install 'ctdsl[lsp]'")
pytest.importorskip("lsprotocol", reason="the language server needs lsprotocol: pip install 'ctdsl[lsp]'")

from lsprotocol import types as T  # noqa: E402
from lspkit import Session  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
FLAGSHIP = ROOT / "tests" / "data" / "llama70b_workers.ct"  # the study with single-GPU workers
TEXT = FLAGSHIP.read_text(encoding="utf-8")
LINES = TEXT.split("\n")


@pytest.fixture(scope="module")
def lsp():
    s = Session()
    yield s
    s.close()


@pytest.fixture(scope="module")
def doc(lsp):
    uri = lsp.open(FLAGSHIP)
    assert lsp.diagnostics(uri) == [], "the flagship checks and lints clean"
    return uri


def test_the_server_says_what_it_can_do(lsp):
    caps = lsp.initialize.capabilities
    assert caps.hover_provider and caps.definition_provider and caps.references_provider
    assert caps.document_symbol_provider and caps.code_action_provider
    assert caps.completion_provider is not None and caps.semantic_tokens_provider is not None


def test_an_error_typed_in_is_reported_at_its_range_and_goes_when_fixed(lsp, doc):
    # line 27: `link wan : eth100g {`; eth100g is characters 11..18 (0-based)
    assert LINES[26][11:18] == "eth100g"
    lsp.edit(doc, 26, 18, 18, "x")  # eth100gx
    diags = lsp.diagnostics(doc)
    base = [d for d in diags if d.code == "CT101"]
    assert len(base) == 1
    assert (base[0].range.start.line, base[0].range.start.character, base[0].range.end.character) == (26, 11, 19)
    assert "unknown base 'eth100gx'" in base[0].message and "did you mean 'eth100g'?" in base[0].message
    assert base[0].severity == T.DiagnosticSeverity.Error and base[0].source == "ctdsl"
    lsp.edit(doc, 26, 18, 19, "")
    assert lsp.diagnostics(doc) == []


def test_hover_on_a_param_gives_its_value_unit_and_range(lsp, doc):
    # line 28: `  bandwidth = wan_bw`; line 12 declares
    # param wan_bw = 12.5 GB/s in 0.1 GB/s .. 1000 GB/s log 41
    assert LINES[27][14:20] == "wan_bw"
    text = lsp.hover(doc, 27, 16)
    assert "**param** `wan_bw` = 12.5 GB/s" in text
    assert "unit: GB/s" in text
    assert "range: 0.1 GB/s .. 1000 GB/s, log, 41 points" in text


def test_hover_on_a_block_shows_its_fields_and_where_each_comes_from(lsp, doc):
    text = lsp.hover(doc, 26, 6)  # `wan` in `link wan : eth100g`
    assert "| `bandwidth` | wan_bw (= 12.5 GB/s) | this block |" in text
    # latency and energy per bit are inherited from the library's eth100g, line 8 of links.ct
    assert "| `latency` | 20 us | `eth100g` (&lt;std>/links.ct:8) |" in text
    assert "| `energy_per_bit` | 15 pJ/bit | `eth100g` (&lt;std>/links.ct:8) |" in text


def test_hover_on_a_preset_shows_its_source(lsp, doc):
    text = lsp.hover(doc, 26, 13)  # eth100g
    assert "preset from the standard library (&lt;std>/links.ct:8)" in text
    line8 = (ROOT / "ctdsl" / "stdlib" / "links.ct").read_text(encoding="utf-8").splitlines()[7]
    assert line8.startswith("link eth100g {") and line8.split("#")[0].strip() in text  # the preset's own line


def test_definition_reaches_into_the_standard_library(lsp, doc):
    loc = lsp.definition(doc, 26, 13)
    assert loc.uri.endswith("/ctdsl/stdlib/links.ct")
    # links.ct line 8: `link eth100g {`: the name at characters 5..12
    assert (loc.range.start.line, loc.range.start.character, loc.range.end.character) == (7, 5, 12)
    # a param, from its use on line 28 to its declaration on line 12
    loc = lsp.definition(doc, 27, 16)
    assert loc.uri == doc and (loc.range.start.line, loc.range.start.character) == (11, 6)


def test_references_find_every_use(lsp, doc):
    code = [line.split("#")[0] for line in LINES]
    expected = sorted((n, m.start()) for n, line in enumerate(code) for m in re.finditer(r"\bwan_bw\b", line))
    assert len(expected) == 5  # declared on line 12, used on 28 and in three break-evens
    got = sorted((loc.range.start.line, loc.range.start.character) for loc in lsp.references(doc, 11, 8))
    assert got == expected


def test_completion_of_fields_for_the_block_at_hand(lsp, tmp_path):
    spec = tmp_path / "c.ct"
    text = "import std.devices\ndevice accel : h100 {\n  efficiency = 0.4\n  \n}\n"
    uri = lsp.open(spec, text)
    lsp.diagnostics(uri)
    labels = {i.label for i in lsp.complete(uri, 3, 2)}
    # a device's fields (docs/language.md's table of device fields), less the one written
    table = (ROOT / "docs" / "language.md").read_text(encoding="utf-8").split("<!-- BEGIN GENERATED fields:device -->")[1].split("<!-- END GENERATED fields:device -->")[0]
    fields = set(re.findall(r"^\| `(\w+)`", table, re.M))
    assert {"peak", "mem_bw", "transform_charge"} <= fields
    assert labels == fields - {"efficiency"}


def test_completion_of_references_enums_and_units(lsp, doc):
    std_links = set(re.findall(r"^link (\w+)", (ROOT / "ctdsl" / "stdlib" / "links.ct").read_text(encoding="utf-8"), re.M))
    flagship_links = set(re.findall(r"^link (\w+)", TEXT, re.M))
    assert LINES[53] == "  link = ib_ndr"
    labels = {i.label for i in lsp.complete(doc, 53, 9)}
    assert labels == std_links | flagship_links
    assert LINES[63] == "  payload = dense"
    assert {i.label for i in lsp.complete(doc, 63, 12)} == {"dense", "quantise", "topk", "demo", "band"}
    spec = "import std.links\nlink x { bandwidth = 3 GB/s; latency = 1 ms; distance = 800 }\n"
    uri = lsp.open(Path("/tmp/units-test.ct"), spec)
    lsp.diagnostics(uri)
    col = spec.split("\n")[1].index("800 ") + 4
    units = {i.label for i in lsp.complete(uri, 1, col)}
    assert {"m", "km", "cm", "mm"} <= units and "GB/s" not in units and "ms" not in units
    kinds = {i.label for i in lsp.complete(uri, 2, 0)}
    assert {"model", "device", "link", "pluggable", "switch", "dc", "scheme", "import", "param", "wan"} <= kinds


def test_document_symbols_are_the_statements_in_order(lsp, doc):
    names = [s.name for s in lsp.symbols(doc) if s.detail != "baseline"]  # `baseline adamw` names a scheme again
    params = re.findall(r"^param (\w+)", TEXT, re.M)
    assert [n for n in names if n in params] == params
    blocks = re.findall(r"^(?:model|device|link|pluggable|switch|dc|scheme|simulation) (\w+)", TEXT, re.M)
    assert [n for n in names if n in blocks] == blocks


def _decode(data: list[int]) -> dict[tuple[int, int], tuple[int, int, int]]:
    out, line, start = {}, 0, 0
    for i in range(0, len(data), 5):
        dl, ds, length, kind, mods = data[i : i + 5]
        line += dl
        start = start + ds if dl == 0 else ds
        out[(line, start)] = (length, kind, mods)
    return out


def test_semantic_tokens(lsp, doc):
    legend = lsp.initialize.capabilities.semantic_tokens_provider.legend
    tokens = _decode(lsp.tokens(doc))
    types = legend.token_types
    # line 12: `param wan_bw = 12.5 GB/s in ...`
    assert tokens[(11, 0)][:2] == (5, types.index("keyword"))
    length, kind, mods = tokens[(11, 6)]
    assert (length, types[kind]) == (6, "variable") and mods & 1  # a declaration
    assert tokens[(11, 15)][:2] == (4, types.index("number"))
    assert tokens[(11, 20)][:2] == (4, types.index("type"))  # the unit GB/s
    assert types[tokens[(0, 0)][1]] == "comment"


def test_quick_fix_for_an_exact_edit(lsp, tmp_path):
    text = TEXT + "link eth100g_dci : eth100g { bandwidth = 100 GB/s }\n"
    uri = lsp.open(tmp_path / "q.ct", text)
    diags = lsp.diagnostics(uri)
    slip = next(d for d in diags if d.code == "CTL006")
    line = text.split("\n")[slip.range.start.line]
    assert line[slip.range.start.character : slip.range.end.character] == "bandwidth = 100 GB/s"
    (action,) = lsp.code_actions(uri, slip.range, [slip])
    assert action.kind == T.CodeActionKind.QuickFix
    (edit,) = action.edit.changes[uri]
    assert edit.new_text == "bandwidth = 12.5 GB/s" and edit.range == slip.range
    unused = next(d for d in diags if d.code == "CTL001")
    assert lsp.code_actions(uri, unused.range, [unused]) == [], "'remove it, or use it' is a choice, not a fix"


def test_completion_and_tokens_of_a_distribution(lsp, tmp_path):
    from ctdsl.check.distributions import KINDS

    text = "param r = 1.1 in 0.9 .. 1.5 ~ samples([1.02, 1.3])\nparam e = 0.4 ~ \n"
    uri = lsp.open(tmp_path / "d.ct", text)
    lsp.diagnostics(uri)
    items = lsp.complete(uri, 1, len("param e = 0.4 ~ "))
    assert {i.label for i in items} == set(KINDS) and "samples" in KINDS
    assert {i.kind for i in items} == {T.CompletionItemKind.Function}
    types = lsp.initialize.capabilities.semantic_tokens_provider.legend.token_types
    tokens = _decode(lsp.tokens(uri))
    col = text.index("samples")
    length, kind, mods = tokens[(0, col)]
    assert (length, types[kind]) == (7, "function") and mods & 2  # the language's own
    assert types[tokens[(0, col - 2)][1]] == "operator"  # the ~


# ---- versions, links to the docs, position encodings --------------------------------------------------

SLIPPED = """\
import std.devices
import std.links
import std.models
model m : llama3_8b { tokens = 4096 }
device accel : h100 { efficiency = 0.4 }
switch tor { sum = true }
dc east { workers = 4; device = accel; link = nvlink4; switch = tor }
dc west : east {}
scheme dense { payload = dense; collective = hier_allreduce; steps = 1000 }
link eth100g_dci { bandwidth = 100 GB/s; latency = 1 ms }
wan east <-> west = eth100g_dci
"""
DOCS = "https://github.com/ctdsl/ctdsl/blob/main/docs/"


def test_diagnostics_carry_the_document_version_and_a_link_to_their_docs(lsp, tmp_path):
    uri = lsp.open(tmp_path / "v.ct", SLIPPED)
    (d,) = lsp.diagnostics(uri)
    assert lsp.last[uri].version == 1
    assert d.code == "CTL006" and d.code_description.href == DOCS + "lint-rules.md#ctl006-bit-byte-slip"
    lsp.change(uri, SLIPPED.replace("link = nvlink4", "link = nvlink9"))
    (d,) = [x for x in lsp.diagnostics(uri) if x.code == "CT101"]
    assert lsp.last[uri].version == 2
    assert d.code_description.href == DOCS + "diagnostics.md#ct101-unknown-name"
    headings = re.findall(r"^#+ (.*)$", (ROOT / "docs" / "diagnostics.md").read_text(encoding="utf-8"), re.M)
    assert "CT101 unknown-name" in [h.strip() for h in headings]  # the anchor names a section that exists


@pytest.mark.parametrize("encoding", ["utf-8", "utf-32", "utf-16"])
def test_positions_are_in_the_units_the_client_asked_for(tmp_path, encoding):
    s = Session(encodings=(encoding,))
    try:
        assert str(s.initialize.capabilities.position_encoding) == encoding
        line = 'param a = 1 ms "é😀 x"; param b = zz'
        uri = s.open(tmp_path / "e.ct", line + "\n")
        (d,) = [x for x in s.diagnostics(uri) if x.code == "CT309"]
        before = line[: line.index("zz")]
        units = {"utf-8": len(before.encode("utf-8")), "utf-16": len(before.encode("utf-16-le")) // 2, "utf-32": len(before)}
        assert (d.range.start.line, d.range.start.character) == (0, units[encoding])
        assert d.range.end.character - d.range.start.character == 2
        # and back: a cursor on `b`, after the emoji, in those units, is on the param b (its references)
        at_b = line[: line.index("b = zz")]
        units_b = {"utf-8": len(at_b.encode("utf-8")), "utf-16": len(at_b.encode("utf-16-le")) // 2, "utf-32": len(at_b)}
        refs = s.references(uri, 0, units_b[encoding])
        assert [(r.range.start.character, r.range.end.character) for r in refs] == [(units_b[encoding], units_b[encoding] + 1)]
    finally:
        s.close()
