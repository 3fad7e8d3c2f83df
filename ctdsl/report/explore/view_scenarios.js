// ---- scenarios and observations: presets, and measured points against the model --------------
// A scenario (`scenario NAME { p = v; ... }`) is a preset: the start values with the scenario's in
// place, checked as a typed value is (ctdsl solve --scenario NAME gives the same numbers). With a
// `fit`, "hold the fit" puts the fitted value of its param under every preset, as `ctdsl solve`'s
// Observed table does. Each observation (`observe Q in SCENARIO = V`) is a row: the measured value,
// the model's at the scenario's values (the other params as set above) and the error; and a
// diamond over the curves of its quantity, at the scenario's value of the swept param, filled when
// the other params are the scenario's (the curve passes through the model's prediction there).
const SC = D.scenarios, OB = D.observations;
const obsRows = [];
function scenarioVector(k, base) {
  const v = Float64Array.from(base || vals);
  if (k !== null) for (const [i, x] of SC[k].values) v[i] = x;
  return v;
}
function presetBase() {
  const v = Float64Array.from(start);
  if (D.fit && $("hold-fit") && $("hold-fit").checked) v[D.fit.param] = D.fit.value;
  return v;
}
// apply preset k (null: the start values), checked as typed values are; false if refused
function applyPreset(k) {
  const cand = scenarioVector(k, presetBase());
  const errors = diagnose(cand);
  if (errors.length) { P.forEach((_, i) => showDiagnostics(i, errors.filter((d) => boundsOf[i].some((b) => CK.list[b].at === d.at)))); return false; }
  if (playing !== null) play();
  vals.set(cand);
  clearDiagnostics();
  P.forEach((_, i) => showParam(i));
  update();
  return true;
}
function observedFor(xi) {
  const out = [];
  OB.forEach((o) => {
    if (!o.q) return;
    const sc = o.scenario === null ? null : SC[o.scenario];
    const set = sc ? sc.values.find(([i]) => i === xi) : null;
    const here = !sc || sc.values.every(([i, x]) => i === xi || vals[i] === x);
    out.push({ q: o.q, x: set ? set[1] : vals[xi], value: o.value, scheme: o.scheme, here });
  });
  return out;
}
view({
  name: "scenarios",
  build() {
    const box = $("scenarios-box");
    if (!SC.length && !OB.length) { box.append(el("p", { class: "note" }, "This spec declares no scenario and observes nothing.")); return; }
    const bar = el("div", { class: "presets toolbar" });
    const startBtn = el("button", { type: "button", "data-preset": "" }, "start values");
    startBtn.addEventListener("click", () => applyPreset(null));
    bar.append(startBtn);
    SC.forEach((sc, k) => {
      const b = el("button", { type: "button", "data-preset": decoded(sc.name), title: sc.texts.map(([n, t]) => decoded(n) + " = " + decoded(t)).join("; ") }, sc.name);
      b.addEventListener("click", () => applyPreset(k));
      bar.append(b);
    });
    box.append(bar);
    if (D.fit) {
      const p = el("p", {}, '<label><input type="checkbox" id="hold-fit"> hold the fit: <code>' + P[D.fit.param].name + "</code> = " +
        fmt(D.fit.value, P[D.fit.param].dim, 6) + ", fitted on scenario <code>" + D.fit.scenario + "</code> (under every preset)</label>");
      box.append(p);
      $("hold-fit").addEventListener("change", (e) => { if (e.target.checked) { const v = Float64Array.from(vals); v[D.fit.param] = D.fit.value; if (!diagnose(v).length) { vals.set(v); P.forEach((_, i) => showParam(i)); update(); } } });
    }
    if (SC.length) box.append(el("p", { class: "note" }, SC.map((sc) => "<code>" + sc.name + "</code>: " + sc.texts.map(([n, t]) => "<code>" + n + "</code> = " + t).join(", ")).join("; ")));
    if (!OB.length) return;
    const g = grid(box, "observed", [["scheme", "scheme"], ["measured", "measured"], ["predicted", "model here"], ["error", "error"], ["source", "source"]]);
    OB.forEach((o, k) => {
      const c = g.row(o.observable + (o.scenario === null ? "" : " in <code>" + SC[o.scenario].name + "</code>"), { "data-obs": String(k) });
      c.scheme.innerHTML = S[o.scheme].label; c.measured.innerHTML = o.text; c.source.innerHTML = o.source;
      setData(c.measured, "value", String(o.value));
      obsRows.push(c);
    });
    box.append(el("p", { class: "note" }, "model here: the quantity at the scenario's values, the other params as set above; error: (model - measured) / measured. The diamonds on the curves are the measured points (filled where the other params are the scenario's)."));
  },
  update() {
    OB.forEach((o, k) => {
      const c = obsRows[k];
      if (!o.q) { setText(c.predicted, "n/a"); return; }
      const v = quantityAt(o.q, scenarioVector(o.scenario === null ? null : o.scenario), o.scheme), dim = QUANT.get(o.q)[1];
      show(c.predicted, v, dim);
      const err = (v - o.value) / o.value;
      setData(c.error, "value", String(err));
      setText(c.error, Number.isFinite(err) ? (err >= 0 ? "+" : "") + (100 * err).toFixed(1) + "%" : "n/a");
    });
  },
});
