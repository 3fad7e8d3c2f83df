// ---- start: the state from the spec's start values and the URL fragment, the views, a redraw ----
const note = (id, text) => { const sec = $(id); for (const e of sec.querySelectorAll("canvas, .toolbar, .legend")) e.remove(); sec.append(el("p", { class: "note" }, text)); };
vals.set(start);
defaultState();
if (NP === 0) note("curves", "This spec has no params: there is nothing to sweep.");
if (NP < 2) note("map", "The winner map needs two params; this spec has " + NP + ".");
for (const v of views) if (v.build) v.build();
// the fragment: a param's value is offered as a typed one (and refused as one); a view's choice is
// taken only when it names one of the choices
const refused = [];
{
  const h = fragment(), pick = (k) => (h.has(k) && paramIndex.has(h.get(k)) ? paramIndex.get(h.get(k)) : null);
  for (const k of ["x", "mx", "my"]) { const i = pick(k); if (i !== null) state[k] = i; }
  if (h.has("q") && QUANT.has(h.get("q"))) state.q = h.get("q");
  if (h.has("n")) { const n = parseInt(h.get("n"), 10); if (n >= 2 && n <= 400) state.n = n; }
  for (const [k, raw] of h) {
    if (!k.startsWith("p.") || !paramIndex.has(k.slice(2))) continue;
    const i = paramIndex.get(k.slice(2)), v = parseFloat(raw);
    if (Number.isFinite(v) && !offer(i, v)) refused.push([i, v]);
  }
}
for (const v of views) if (v.sync) v.sync();
for (const [i, v] of refused) controls[i].num.value = String(v / P[i].scale);  // the box shows what was refused, and why
update();
window.ctdslExplorer = {
  // for tests and benchmarks: the last redraw's time, and a redraw on demand
  lastMs: () => last,
  lastParts: () => Object.assign({}, parts),
  update,
  values: () => Array.from(vals),
  stagesBinding: () => stages.map((st) => [decoded(S[st.j].name), st.binding]),
  winners: () => Array.from(mapWinners),
  be2: () => ({ done: be2.done, b: be2.b, q: be2.q, xs: be2.xs.slice(), roots: be2.roots.map((r) => r.slice()) }),
  be2Now: () => { clearTimeout(be2.timer); computeBe2(); drawBe2(); be2.done = true; },
  observed: () => drawnObserved.map((o) => Object.assign({}, o)),
  curve: () => ({ x: Array.from(xsCurve), y: curveData.map((a) => Array.from(a.slice(0, xsCurve.length))) }),
  format: (v, dim, digits) => fmt(v, dim, digits),  // ctdsl.units.format_quantity
  g: (v) => pyG(v),  // Python's "{:g}"
  // serving (view_serving.js), on a page that serves: the curves against the rate, each path's SLO, goodput
  serving: () => (typeof SV === "undefined" || !SV ? null : {
    x: Array.from(svCurve.x), param: SV.x === null ? null : P[SV.x].nameText,
    ttft: svCurve.ttft.map((a) => Array.from(a.slice(0, svCurve.x.length))), ttftP: svCurve.ttftP.map((a) => Array.from(a.slice(0, svCurve.x.length))),
    tpot: svCurve.tpot.map((a) => Array.from(a.slice(0, svCurve.x.length))), paths: SV.paths.map((p) => p.nameText),
    slos: SV.paths.map((p) => sloValues(p, vals)), done: svState.done }),
  servingNow: () => { clearTimeout(svState.timer); computeGoodput(); },
  // the break-evens of hand-offs (view_serving_be.js), computed now
  handoffsNow: () => { if (typeof hbState === "undefined") return []; clearTimeout(hbState.timer); computeHandoffBreakevens(); return hbState.res.map((r) => Object.assign({}, r)); },
};
