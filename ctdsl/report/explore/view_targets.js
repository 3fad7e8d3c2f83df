// ---- utilisation and targets: each scheme's compute utilisation and MFU, and every `target`'s roots --
// A target's value is where the quantity equals it over the param's searched range (the scan and
// bisection of core.js, the other params at their current values); the curves draw the target levels
// when they show that quantity against that param.
const utilRows = [], targetRows = [];
view({
  name: "targets",
  build() {
    const box = $("targets-box");
    const g = grid(box, "scheme", [["utilisation", "compute utilisation"], ["mfu", "MFU"]]);
    S.forEach((s, j) => utilRows.push(g.row(swatch(color(j)) + s.label, { "data-scheme": decoded(s.name) })));
    if (!D.targets.length) { box.append(el("p", { class: "note" }, "No target asked in this spec.")); return; }
    box.append(el("h3", {}, "Targets"));
    // one row per target (quantity, level, param), one column per scheme it is asked of
    const cols = [...new Set(D.targets.map((x) => x.scheme))];
    const t = grid(box, "target", cols.map((j) => [decoded(S[j].name), S[j].label]));
    const rows = new Map();
    D.targets.forEach((x) => {
      const key = x.q + "|" + x.value + "|" + x.over;
      if (!rows.has(key)) rows.set(key, t.row(QUANT.get(x.q)[2] + " = " + x.text + " over <code>" + P[x.over].name + "</code>", { "data-q": x.q, "data-target": String(x.value), "data-over": P[x.over].nameText }));
      const c = rows.get(key)[decoded(S[x.scheme].name)];
      targetRows.push(c);
    });
    box.append(el("p", { class: "note" }, "Each cell: the value of the param where the scheme's quantity equals the target, in the param's range, the other params as set above (&uarr;: the quantity is above the target for larger values, &darr;: for smaller). The curves show the target levels when they show that quantity against that param."));
  },
  update(f) {
    S.forEach((s, j) => { show(utilRows[j].utilisation, f.all[s.i.utilisation], ONE); show(utilRows[j].mfu, f.all[s.i.mfu], ONE); });
    D.targets.forEach((x, k) => {
      const c = targetRows[k], roots = f.targets[k], over = P[x.over];
      if (roots === null) { setHTML(c, "not asked: " + (x.reason || "")); setData(c, "roots", "[]"); return; }
      setData(c, "roots", JSON.stringify(roots.map((r) => r.value)));
      setData(c, "rises", JSON.stringify(roots.map((r) => r.rises)));
      if (!roots.length) { setText(c, "never in range"); return; }
      setText(c, roots.map((r) => fmt(r.value, over.dim) + (r.rises ? " \u2191" : " \u2193")).join("; "));
    });
  },
});
