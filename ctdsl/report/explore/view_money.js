// ---- cost and CO2e to target: each scheme's, with its parts (ctdsl.symbolic.money) ----------
// A part's key is the JSON's (cost_parts.devices: data-key "cost:devices"); the break-evens on cost
// or CO2e are in the list of break-evens, under the curves.
const moneyRows = [];
let moneyCells = null;
const costParts = [...new Set(S.flatMap((s) => s.i.cost_parts.map(([k]) => k)))];
const co2eParts = [...new Set(S.flatMap((s) => s.i.co2e_parts.map(([k]) => k)))];
const priced = S.some((s) => s.i.cost_parts.length || s.i.co2e_parts.length);
view({
  name: "money",
  build() {
    const box = $("money-box");
    if (!priced) { box.append(el("p", { class: "note" }, "This spec prices nothing and gives no carbon: no cost or CO2e to target.")); return; }
    const head = [["cost", "cost to target"], ...costParts.map((k) => ["cost:" + decoded(k), k]),
      ["co2e", "CO2e to target"], ...co2eParts.map((k) => ["co2e:" + decoded(k), "CO2e " + k])];
    const g = grid(box, "scheme", head);
    S.forEach((s) => moneyRows.push(g.row(swatch(color(moneyRows.length)) + s.label, { "data-scheme": decoded(s.name) })));
  },
  update(f) {
    if (!priced) return;
    if (!moneyCells) moneyCells = S.map((s, j) => {  // each value's cell, once
      const c = moneyRows[j], o = s.i, out = [[c.cost, o.cost, MONEY], [c.co2e, o.co2e, CARBON]];
      for (const [k, i] of o.cost_parts) out.push([c["cost:" + decoded(k)], i, MONEY]);
      for (const [k, i] of o.co2e_parts) out.push([c["co2e:" + decoded(k)], i, CARBON]);
      for (const k of costParts) if (!o.cost_parts.some(([x]) => x === k)) setText(c["cost:" + decoded(k)], "-");
      for (const k of co2eParts) if (!o.co2e_parts.some(([x]) => x === k)) setText(c["co2e:" + decoded(k)], "-");
      return out;
    });
    for (const cells of moneyCells) for (const [td, i, dim] of cells) show(td, f.all[i], dim);
  },
});
