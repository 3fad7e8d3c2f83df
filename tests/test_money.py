"""Cost and carbon to target (docs/codesign.md): the arithmetic done by hand, the unit checks, and no change for a spec without prices.

The time to target and the energy to target are the cost model's (tested
elsewhere); these tests take them, or the step time, from the result and redo
the money and carbon arithmetic by hand, with every rate and unit conversion
written out: an hour is 3600 s, a kWh 3.6e6 J, a month 730 h, a year 8760 h.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from ctdsl.api import check
from ctdsl.report.jsonout import solution_json
from ctdsl.report.tables import render_markdown
from ctdsl.symbolic.convert import Env, Symbols, value
from ctdsl.symbolic.money import site_energy
from ctdsl.symbolic.context import contexts
from ctdsl.symbolic.costs import cost
from solvekit import ROOT, solve_file, solve_text

HOUR, KWH, MONTH, YEAR = 3600.0, 3.6e6, 730 * 3600.0, 8760 * 3600.0

# one dc, two workers, energy from static power alone (no energy per FLOP or per bit),
# so the energy to target is (2 x 700 W + 500 W) x the time to target
ONE_DC = """
model m { params = 1e9; bytes_per_value = 2 B; tokens = 1000 }
device acc { peak = 1000 TFLOP/s; efficiency = 0.5; static_power = 700 W; price = 2.5 USD/h; embodied_carbon = 1000 kgCO2e; depreciation = 4 yr }
link l { bandwidth = 50 GB/s; latency = 1 us }
switch s { power = 500 W; price = 20000 USD; depreciation = 5 yr }
dc a { workers = 2; device = acc; link = l; switch = s; power_price = 0.1 USD/kWh; pue = 1.25; carbon_intensity = 400 gCO2e/kWh }
scheme x { payload = dense; collective = ring_allreduce; steps = 1000 }
"""


def test_one_dc_by_hand(tmp_path):
    r = solve_text(tmp_path, ONE_DC).schemes["x"]
    T = 1000 * r.step_time.value  # steps x step time
    assert r.time_to_target.value == pytest.approx(T, rel=1e-12)
    E = (2 * 700 + 500) * T  # W x s
    assert r.energy_to_target.value == pytest.approx(E, rel=1e-12)
    devices = 2 * 2.5 / HOUR * T  # 2 GPUs x 2.5 USD per GPU-hour
    switches = 20000 / (5 * YEAR) * T  # one switch, 20000 USD over 5 years
    energy = E * 1.25 * 0.1 / KWH  # grid energy = energy x pue, at 0.1 USD/kWh
    assert r.cost_parts["devices"].value == pytest.approx(devices, rel=1e-12)
    assert r.cost_parts["switches"].value == pytest.approx(switches, rel=1e-12)
    assert r.cost_parts["energy"].value == pytest.approx(energy, rel=1e-12)
    assert r.cost_parts["modules"].value == 0 and r.cost_parts["links"].value == 0
    assert r.cost_to_target.value == pytest.approx(devices + switches + energy, rel=1e-12)
    operational = E * 1.25 * 400 / KWH  # gCO2e
    embodied = 2 * 1000e3 / (4 * YEAR) * T  # 1000 kgCO2e per GPU over 4 years
    assert r.co2e_parts["operational"].value == pytest.approx(operational, rel=1e-12)
    assert r.co2e_parts["embodied"].value == pytest.approx(embodied, rel=1e-12)
    assert r.co2e_to_target.value == pytest.approx(operational + embodied, rel=1e-12)
    assert str(r.cost_to_target).endswith("USD") and str(r.co2e_to_target).endswith("gCO2e")


# two like dcs with their own power price, pue and grid; priced modules (over the device's
# depreciation), a priced intra link and a priced WAN link
TWO_DCS = """
model m { params = 1e9; bytes_per_value = 2 B; tokens = 1000 }
device acc { peak = 1000 TFLOP/s; efficiency = 0.5; static_power = 700 W; capex = 30000 USD; depreciation = 4 yr }
link l { bandwidth = 50 GB/s; latency = 1 us; price = 10 USD/month / 1 Gb/s }
link wan { bandwidth = 1.25 GB/s; latency = 10 ms; price = 2000 USD/month / 1 Gb/s }
pluggable q { ops = [dct]; price = 800 USD; port { rate = 50 GB/s } }
switch s { power = 500 W }
dc east { workers = 2; device = acc; link = l; switch = s; pluggable = q; power_price = 0.08 USD/kWh; pue = 1.2; carbon_intensity = 400 gCO2e/kWh }
dc west : east { power_price = 0.05 USD/kWh; pue = 1.1; carbon_intensity = 30 gCO2e/kWh }
wan east <-> west = wan
scheme x { payload = dense; collective = hier_allreduce; steps = 1000 }
"""


def test_two_dcs_by_hand(tmp_path):
    r = solve_text(tmp_path, TWO_DCS).schemes["x"]
    T = r.time_to_target.value
    E_dc = (2 * 700 + 500) * T  # each dc: its two workers' static power and its switch's
    assert r.energy_to_target.value == pytest.approx(2 * E_dc, rel=1e-12)
    devices = 4 * 30000 / (4 * YEAR) * T  # 4 GPUs bought at 30000 USD, over 4 years
    modules = 4 * 800 / (4 * YEAR) * T  # a module per worker, over the device's 4 years
    # 4 connections of l (a worker to its switch), 400 Gb/s each; one WAN connection of 10 Gb/s
    links = (4 * 400 * 10 + 10 * 2000) / MONTH * T
    energy = E_dc * 1.2 * 0.08 / KWH + E_dc * 1.1 * 0.05 / KWH
    for key, want in (("devices", devices), ("modules", modules), ("links", links), ("energy", energy)):
        assert r.cost_parts[key].value == pytest.approx(want, rel=1e-12), key
    assert r.cost_parts["switches"].value == 0
    assert r.cost_to_target.value == pytest.approx(devices + modules + links + energy, rel=1e-12)
    assert r.co2e_to_target.value == pytest.approx(E_dc * 1.2 * 400 / KWH + E_dc * 1.1 * 30 / KWH, rel=1e-12)
    assert r.co2e_parts["embodied"].value == 0


def test_site_energies_add_up_to_the_energy_on_unlike_dcs(tmp_path):
    """Per-site energy (what pue and intensity multiply) sums to the energy model's total, energy per bit and per FLOP included."""
    text = """
    model m { params = 1e9; bytes_per_value = 2 B; tokens = 1000 }
    device acc { peak = 1000 TFLOP/s; efficiency = 0.5; static_power = 300 W; energy_per_flop = 1 pJ/FLOP }
    device big { peak = 2000 TFLOP/s; efficiency = 0.5; static_power = 900 W; energy_per_flop = 0.5 pJ/FLOP }
    link l { bandwidth = 50 GB/s; latency = 1 us; energy_per_bit = 5 pJ/bit }
    link wan { bandwidth = 1.25 GB/s; latency = 10 ms; energy_per_bit = 20 pJ/bit }
    pluggable q { ops = [dct]; power = 12 W; port { rate = 50 GB/s } }
    switch s { power = 500 W }
    dc east { workers = 2; device = acc; link = l; switch = s; pluggable = q; carbon_intensity = 1 gCO2e/kWh }
    dc west { workers = 3; device = big; link = l; switch = s }
    wan east <-> west = wan
    scheme x { payload = dense; collective = ring_allreduce; steps = 10 }
    """
    path = tmp_path / "spec.ct"
    path.write_text(text, encoding="utf-8")
    spec = check(path).spec
    symbols = Symbols(spec)
    cm = contexts(spec, symbols)[None]
    c = cost(cm, spec.schemes["x"])
    env = Env(symbols.defaults())
    parts = {k: value(v.e, env) for k, v in site_energy(cm, c).items()}
    assert set(parts) == {"east", "west"} and all(v > 0 for v in parts.values())
    assert parts["east"] != pytest.approx(parts["west"])
    assert sum(parts.values()) == pytest.approx(value(c.energy_per_step.e, env), rel=1e-12)


@pytest.mark.parametrize(
    "field, written, line_col, dim",
    [
        ("device", "price = 2 USD", None, "price per time"),
        ("device", "capex = 2 USD/h; depreciation = 1 yr", None, "money"),
        ("device", "embodied_carbon = 5 kWh; depreciation = 1 yr", None, "carbon"),
        ("link", "price = 2000 USD/month", None, "price per capacity and time"),
    ],
)
def test_a_price_with_the_wrong_dimension_is_ct202_at_its_value(field, written, line_col, dim):
    base = {"device": "device d { peak = 1 TFLOP/s; efficiency = 0.5; ", "link": "link d { bandwidth = 1 GB/s; latency = 1 us; "}[field]
    text = base + written + " }\n"
    result = check("spec.ct", text=text)
    [d] = result.diagnostics
    assert d.code == "CT202" and f"must be {dim}" in d.message
    value_text = written.split(" = ", 1)[1].split(";")[0]
    assert (d.span.line, d.span.col) == (1, text.index(value_text) + 1)


def test_invalid_combinations_have_their_codes():
    both = "device d { peak = 1 TFLOP/s; efficiency = 0.5; price = 2 USD/h; capex = 3 USD; depreciation = 1 yr }\n"
    [d] = check("spec.ct", text=both).diagnostics
    assert d.code == "CT116" and (d.span.line, d.span.col) == (1, both.index("capex") + 1)
    bare = "device d { peak = 1 TFLOP/s; efficiency = 0.5; capex = 3 USD }\n"
    [d] = check("spec.ct", text=bare).diagnostics
    assert d.code == "CT105" and "depreciation" in d.message


def _without_money(doc: dict) -> dict:
    for s in doc["schemes"].values() if isinstance(doc["schemes"], dict) else doc["schemes"]:
        for k in ("cost_to_target", "cost_parts", "co2e_to_target", "co2e_parts"):
            s.pop(k, None)
            s["expressions"].pop(k, None)
    return doc


def test_prices_change_nothing_else_and_a_spec_without_them_has_no_money(tmp_path):
    """The JSON of a priced spec, less its cost and CO2e keys, is byte for byte the unpriced spec's."""
    bare = re.sub(r"\b(price|capex|embodied_carbon|power_price|carbon_intensity) = [^;}]+(; )?", "", TWO_DCS)
    assert "USD" not in bare and "gCO2e" not in bare
    plain = json.loads(json.dumps(solution_json(solve_text(tmp_path, bare, "bare.ct"))))
    priced = json.loads(json.dumps(solution_json(solve_text(tmp_path, TWO_DCS, "bare.ct"))))
    assert "cost_to_target" in json.dumps(priced) and "cost_to_target" not in json.dumps(plain)
    assert json.dumps(_without_money(priced), sort_keys=True) == json.dumps(plain, sort_keys=True)
    # pue alone is not a price: nothing changes
    pue = json.loads(json.dumps(solution_json(solve_text(tmp_path, bare.replace("pue = 1.2", "pue = 1.5"), "bare.ct"))))
    assert json.dumps(pue, sort_keys=True) == json.dumps(plain, sort_keys=True)


@pytest.mark.parametrize("rel", ["specs/llama70b_wan.ct", "examples/14_breakeven.ct", "examples/16_variants.ct"])
def test_shipped_specs_without_prices_report_no_money(rel):
    sol = solve_file(rel)
    assert all(r.cost_to_target is None and r.co2e_to_target is None for r in sol.schemes.values())
    assert "Cost and carbon" not in render_markdown(sol)


def test_the_example_pays_for_modules_only_where_they_are():
    sol = solve_file("examples/17_cost_carbon.ct")
    adamw, band = sol.schemes["adamw"], sol.schemes["band_module"]
    assert adamw.cost_parts["modules"].value == 0  # its variant has no modules
    T = band.time_to_target.value
    assert band.cost_parts["modules"].value == pytest.approx(8 * 800 / (4 * YEAR) * T, rel=1e-12)
    assert band.cost_to_target.value < adamw.cost_to_target.value


def test_codesign_doc_shows_what_solve_prints(tmp_path):
    doc = (ROOT / "docs" / "codesign.md").read_text(encoding="utf-8")
    spec = re.search(r"This spec prices.*?```ct\n(.*?)```", doc, re.S).group(1)
    shown = re.search(r"(\| scheme \| cost to target.*?)\n\n", doc, re.S).group(1)
    printed = render_markdown(solve_text(tmp_path, spec))
    assert shown in printed
    assert Path(ROOT / "examples" / "17_cost_carbon.ct").is_file()


def test_a_breakeven_on_cost_is_the_module_price_where_the_costs_meet():
    """Cost is linear in the module price p: band's cost is A + p x (its modules' cost at 800 USD) / 800."""
    sol = solve_file("examples/17_cost_carbon.ct")
    adamw, band = sol.schemes["adamw"], sol.schemes["band_module"]
    per_usd = band.cost_parts["modules"].value / 800  # modules' cost to target per USD of module price
    A = band.cost_to_target.value - band.cost_parts["modules"].value
    want = (adamw.cost_to_target.value - A) / per_usd
    [b] = [b for b in sol.breakevens if b.over == "module_price"]
    assert b.on == "cost" and len(b.roots) == 1
    root = b.roots[0]
    assert root.value == pytest.approx(want, rel=1e-9)
    assert (root.below, root.above) == ("band_module", "adamw")  # cheaper below the price, dearer above
    assert "cheaper below" in b.describe()
    doc = solution_json(sol)
    [j] = [x for x in doc["breakevens"] if x["over"] == "module_price"]
    assert j["on"] == "cost"
    on = [x.get("on") for x in doc["breakevens"]]
    assert on == [None, "cost", "cost"]  # the break-even on time keeps the JSON it had: no "on" key


def test_a_breakeven_on_cost_without_prices_says_what_is_missing(tmp_path):
    text = ONE_DC.replace("price = 2.5 USD/h; ", "").replace("; price = 20000 USD; depreciation = 5 yr", "")
    text = text.replace("power_price = 0.1 USD/kWh; ", "")
    text = "param bw = 50 GB/s in 1 GB/s .. 100 GB/s\n" + text.replace("bandwidth = 50 GB/s", "bandwidth = bw")
    text += 'scheme y { payload = band; fraction = 1/16; collective = allgather; steps = 1100 }\nbreakeven y vs x over bw on cost\n'
    [b] = solve_text(tmp_path, text).breakevens
    assert b.missing is not None and "no cost to target" in b.missing


def test_a_breakeven_on_an_unknown_quantity_is_ct108():
    text = "param p = 1 GB/s in 0.5 GB/s .. 2 GB/s\nbreakeven a vs b over p on price\n"
    codes = {d.code for d in check("spec.ct", text=text).diagnostics}
    assert "CT108" in codes


def test_the_new_json_keys_are_documented():
    doc = (ROOT / "docs" / "solve-json.md").read_text(encoding="utf-8")
    documented = set(re.findall(r"`([a-z_0-9]+)`", doc))
    data = solution_json(solve_file("examples/17_cost_carbon.ct"))
    scheme = data["schemes"][1] if isinstance(data["schemes"], list) else data["schemes"]["band_module"]
    new = {k for k in scheme if "cost" in k or "co2e" in k}
    new |= set(scheme["cost_parts"]) | set(scheme["co2e_parts"]) | {k for b in data["breakevens"] for k in b if k == "on"}
    assert new == {"cost_to_target", "cost_parts", "co2e_to_target", "co2e_parts", "devices", "modules", "switches", "links", "energy", "operational", "embodied", "on"}
    assert new <= documented


def test_a_scheme_on_a_variant_without_the_priced_modules_costs_nothing_for_them(tmp_path):
    """Only the module is priced; AdamW runs where there are none: its cost is 0 USD, not missing."""
    text = TWO_DCS.replace("capex = 30000 USD; ", "").replace("; price = 10 USD/month / 1 Gb/s", "").replace("; price = 2000 USD/month / 1 Gb/s", "")
    text = text.replace("power_price = 0.08 USD/kWh; ", "").replace("power_price = 0.05 USD/kWh; ", "")
    text = text.replace("; carbon_intensity = 400 gCO2e/kWh", "").replace("; carbon_intensity = 30 gCO2e/kWh", "")
    text += "variant bare { pluggable = none }\nscheme y { payload = dense; collective = hier_allreduce; steps = 1000; sites = bare }\n"
    assert text.count("USD") == 1
    sol = solve_text(tmp_path, text)
    x, y = sol.schemes["x"], sol.schemes["y"]
    assert y.cost_to_target is not None and y.cost_to_target.value == 0
    assert x.cost_to_target.value == pytest.approx(4 * 800 / (4 * YEAR) * x.time_to_target.value, rel=1e-12)
    assert x.co2e_to_target is None and y.co2e_to_target is None


@pytest.mark.parametrize(
    "text, scale, dim",
    [
        ("USD/h", 1 / 3600, "price per time"),  # a dollar per 3600 s
        ("kUSD", 1000, "money"),
        ("cUSD", 0.01, "money"),
        ("USD/kWh", 1 / 3.6e6, "price per energy"),  # a kWh is 1000 W x 3600 s
        ("gCO2e/kWh", 1 / 3.6e6, "carbon intensity"),
        ("tCO2e", 1e6, "carbon"),  # a tonne is 10^6 g
        ("MWh", 3.6e9, "energy"),
        ("month", 730 * 3600, "time"),  # a twelfth of 365 days
        ("yr", 365 * 86400, "time"),
        ("USD/month", 1 / (730 * 3600), "price per time"),
    ],
)
def test_money_and_carbon_units(text, scale, dim):
    from ctdsl import units as U

    u = U.parse_unit(text)
    assert float(u.scale) == pytest.approx(scale, rel=1e-15)
    assert u.dim.describe().startswith(dim)


def test_money_and_carbon_print_in_readable_units():
    from ctdsl import units as U

    assert U.format_quantity(12345.6, U.MONEY) == "12.35 kUSD"
    assert U.format_quantity(2.5 / 3600, U.MONEY_RATE) == "2.5 USD/h"
    assert U.format_quantity(0.08 / 3.6e6, U.MONEY_PER_ENERGY) == "0.08 USD/kWh"
    assert U.format_quantity(3.2e7, U.CARBON) == "32 tCO2e"
    # 2000 USD a month for each Gb/s: 1 Gb/s is 1.25e8 B/s, a month 2.628e6 s
    assert U.format_quantity(2000 / (1.25e8 * 730 * 3600), U.MONEY_PER_DATA) == "2000 USD/(Gb/s month)"
    with pytest.raises(U.UnitError) as exc:
        U.parse_unit("kgCO2")
    assert "kgCO2e" in exc.value.help


def test_replicas_pay_for_every_gpu_and_a_wan_of_parallel_links_for_each_link(tmp_path):
    """16 replicas of tp 4 x pp 2 a dc: 128 GPUs a dc, 256 in all; `wan * 4` is four 100 GB/s links."""
    text = """
    param n = 16 in 1 .. 64
    model m { params = 64e9; bytes_per_value = 2 B; tokens = 1000 }
    device d { peak = 100 TFLOP/s; efficiency = 1; price = 2 USD/h }
    link nic { bandwidth = 50 GB/s; latency = 10 us }
    link wan { bandwidth = 100 GB/s; latency = 1 ms; price = 1000 USD/month / 1 Gb/s }
    switch s {}
    replica r { tp = 4; pp = 2 }
    dc a { replica = r; replicas = n; device = d; link = nic; switch = s }
    dc b : a {}
    wan a <-> b = wan * 4
    scheme x { payload = dense; collective = hier_allreduce; steps = 10 }
    """
    r = solve_text(tmp_path, text).schemes["x"]
    T = r.time_to_target.value
    assert r.cost_parts["devices"].value == pytest.approx(2 * 16 * 8 * 2 / HOUR * T, rel=1e-12)
    # four links of 100 GB/s = 800 Gb/s each: 4 x 800 x 1000 USD a month
    assert r.cost_parts["links"].value == pytest.approx(4 * 800 * 1000 / MONTH * T, rel=1e-12)
    assert "n" in {s.name for s in r.cost_parts["devices"].expr.free_symbols}  # the count is a param, kept exact
