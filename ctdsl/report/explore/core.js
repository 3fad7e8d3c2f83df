// ctdsl explorer, the core: the data, a param's values and slider positions, the checker's bounds,
// the state and the URL fragment, the answers every view reads, and the views' registry. Every number
// is computed by evalAll, evalCurve and evalTimes, printed by ctdsl from the solver's exact sympy
// expressions (ctdsl/report/explore/jsprint.py); nothing here is a hand port of the cost model. The
// page runs this file, numbers.js, charts.js, each view's file, then main.js, in one function's scope
// (page.py).
const $ = (id) => document.getElementById(id);
const D = JSON.parse($("ct-data").textContent);
const CEIL_SLACK = D.ceil_slack;
function ceilTol(x) { return Math.ceil(x - CEIL_SLACK * Math.max(1, Math.abs(x))); }
/*@FORMS@*/

const P = D.params, S = D.schemes, NP = P.length;
const CURVE_POINTS = 400;
const SLIDER_STEPS = 1000;
const el = (tag, attrs, html) => {
  const e = document.createElement(tag);
  for (const k in attrs || {}) e.setAttribute(k, attrs[k]);
  if (html !== undefined) e.innerHTML = html; // only strings ctdsl encoded, or markup made here
  return e;
};
const setHTML = (e, html) => { if (e._html !== html) { e.innerHTML = html; e._html = html; } }; // no relayout when unchanged
const setText = (e, text) => { if (e._text !== text) { e.textContent = text; e._text = text; } };
const setData = (e, key, v) => { if (e.dataset[key] !== v) e.dataset[key] = v; };
const setWidth = (e, w) => { if (e._w !== w) { e.style.width = w; e._w = w; } };
const decoded = (html) => { const t = document.createElement("textarea"); t.innerHTML = html; return t.value; };
const has = (o, k) => Object.prototype.hasOwnProperty.call(o, k);
// a template of ctdsl.language.bounds ("{owner} {words}, ..."): each {name} from vals, own keys only
const fill = (template, vals) => template.replace(/\{(\w+)\}/g, (m, k) => (has(vals, k) ? vals[k] : m));

// colours: one per scheme and one per step component (ctdsl/report/explore/palette.py: distinct for any number)
const color = (j) => D.palette[j];
const compColor = (k) => D.palette[k];
const swatch = (c) => '<span class="swatch" style="background:' + c + '"></span>';
// the plain text of the encoded names, decoded once (for attributes, titles and canvas text)
P.forEach((p) => { p.nameText = decoded(p.name); p.unitText = decoded(p.unit); });
S.forEach((s) => {
  s.compText = s.components.map(decoded).concat([""]);
  s.compKey = s.keys.map(decoded).concat([""]);  // what identifies each component (ctdsl.language.components)
  if (s.module) s.module.stageText = s.module.stages.map(decoded);
});

// ---- a param's values: the slider's positions ----------------------------------------------
// A param's slider has SLIDER_STEPS + 1 positions over its range (log or linear). A param a count
// is set to (replicas = R, sites = K) takes whole numbers only: its positions are the whole numbers
// those positions round to, each once, so that every step of the slider moves to another whole
// number (on a log slider, at the low end, to the next one).
function fromFrac(i, t) {
  const p = P[i];
  if (t <= 0) return p.lo;
  if (t >= 1) return p.hi;
  return p.log ? Math.exp(Math.log(p.lo) + t * (Math.log(p.hi) - Math.log(p.lo))) : p.lo + t * (p.hi - p.lo);
}
function toFrac(i, v) {
  const p = P[i];
  const t = p.log ? (Math.log(v) - Math.log(p.lo)) / (Math.log(p.hi) - Math.log(p.lo)) : (v - p.lo) / (p.hi - p.lo);
  return Number.isFinite(t) ? Math.min(1, Math.max(0, t)) : 0;
}
P.forEach((p, i) => {
  if (!p.whole) return;
  const stops = [], lo = Math.ceil(p.lo), hi = Math.floor(p.hi);
  for (let k = 0; k <= SLIDER_STEPS; k++) {
    const v = Math.min(hi, Math.max(lo, Math.round(fromFrac(i, k / SLIDER_STEPS))));
    if (stops[stops.length - 1] !== v) stops.push(v);
  }
  p.stops = stops;
});
const positions = (i) => (P[i].stops ? P[i].stops.length - 1 : SLIDER_STEPS);
function atPosition(i, k) { const p = P[i]; return p.stops ? p.stops[k] : fromFrac(i, k / SLIDER_STEPS); }
function toPosition(i, v) {
  const st = P[i].stops;
  if (!st) return Math.round(toFrac(i, v) * SLIDER_STEPS);
  let a = 0, b = st.length - 1;  // the nearest stop
  while (b - a > 1) { const m = (a + b) >> 1; if (st[m] <= v) a = m; else b = m; }
  return Math.abs(st[b] - v) < Math.abs(v - st[a]) ? b : a;
}
// n values over a param's range, for a curve or an axis of the map: whole numbers for a count
function samples(i, n) {
  const p = P[i], out = new Float64Array(n);
  if (p.stops && p.stops.length <= n) return Float64Array.from(p.stops);
  for (let k = 0; k < n; k++) out[k] = p.stops ? p.stops[Math.round(k * (p.stops.length - 1) / (n - 1))] : fromFrac(i, k / (n - 1));
  return out;
}

// ---- the checker's bounds (ctdsl/report/explore/checks.py) ----------------------------------
// Each bound's expression is evaluated as ctdsl.model.expr evaluates it: a failure is a value that
// travels up, the first met winning, a division's divisor first; X holds the operations.
const CK = D.checks;
function Fail(why) { this.why = why; }
const failed = (v) => v instanceof Fail;
const X = {
  big: () => new Fail(CK.errors.too_large),
  fin: (v) => (Number.isFinite(v) ? v : new Fail(CK.errors.too_large)),
  add: (a, b) => (failed(a) ? a : failed(b) ? b : X.fin(a + b)),
  sub: (a, b) => (failed(a) ? a : failed(b) ? b : X.fin(a - b)),
  mul: (a, b) => (failed(a) ? a : failed(b) ? b : X.fin(a * b)),
  div: (a, b) => (failed(b) ? b : b === 0 ? new Fail(CK.errors.division) : failed(a) ? a : X.fin(a / b)),
  neg: (a) => (failed(a) ? a : -a),
  min: (...xs) => xs.find(failed) || Math.min(...xs),
  max: (...xs) => xs.find(failed) || Math.max(...xs),
  pow: (b, e, integral) => {
    if (failed(b)) return b;
    if (b === 0 && e < 0) return new Fail(CK.errors.division);
    if (b < 0 && !integral) return new Fail(CK.errors.negative_root);
    const v = Math.pow(b, e);
    return Number.isFinite(v) ? v : new Fail(CK.errors.power);
  },
  ceil: (x) => (failed(x) ? x : Number.isFinite(x) ? X.fin(ceilTol(x)) : new Fail(CK.errors.ceil)),
  log2: (x) => (failed(x) ? x : x <= 0 ? new Fail(CK.errors.log2) : X.fin(Math.log2(x))),
};
/*@CHECKS@*/
const KIND = new Map(Object.entries(CK.kinds));
function within(kind, v) {
  if (kind.values) return kind.values.includes(v);
  if (kind.low !== null && !(kind.lowClosed ? v >= kind.low : v > kind.low)) return false;
  if (kind.high !== null && !(kind.highClosed ? v <= kind.high : v < kind.high)) return false;
  return true;
}
// the first failure of bound k at the values `vec` (as ctdsl.check.fields.check_bound: at the
// values, then with each param it names at each end of its declared range), or null
function boundFailure(k, vec) {
  const b = CK.list[k], kind = KIND.get(b.bound);
  const points = [["", vec]];
  for (const [i, lo, hi] of b.ends) for (const [end, v] of [["low", lo], ["high", hi]]) {
    const w = Float64Array.from(vec); w[i] = v;
    points.push([fill(CK.when, { param: P[i].name, end }), w]);
  }
  const diag = (code, text, help) => ({ code, text, help, at: b.at, severity: "error" });
  if (kind.countsOnly) {  // tested only where the value is a count at every point (else its field's bound says so)
    for (const [, env] of points) { const v = CHECKS[k](env); if (failed(v) || !(v > 0) || v !== Math.round(v)) return null; }
  }
  for (const [when, env] of points) {
    const v = CHECKS[k](env);
    if (failed(v)) return diag(CK.notEvaluated[0], fill(CK.notEvaluated[1], { owner: b.owner, when, error: v.why }), null);
    if (!within(kind, v)) return diag(kind.code, fill(kind.message, { owner: b.owner, words: kind.words, shown: fmt(v, b.dim), value: pyG(v), when }), b.help);
    if (kind.whole && Math.abs(v - Math.round(v)) > CK.rel * Math.max(1, Math.abs(v)))
      return diag(CK.notWhole[0], fill(CK.notWhole[1], { owner: b.owner, value: pyG(v), when }), CK.notWhole[2]);
    if (kind.whole && Math.round(v) < 1) return diag(CK.belowOne[0], fill(CK.belowOne[1], { owner: b.owner, value: pyG(v), when }), CK.belowOne[2]);
  }
  return null;
}
const boundsOf = P.map((_, i) => CK.list.map((b, k) => k).filter((k) => CK.list[k].params.includes(i)));
// every failure at `vec` of the bounds on the params in `which` (all by default), one per written field
function diagnose(vec, which) {
  const ks = which === undefined ? CK.list.map((b, k) => k) : [...new Set(which.flatMap((i) => boundsOf[i]))].sort((a, b) => a - b);
  const out = [], seen = new Set();
  for (const k of ks) {
    if (seen.has(CK.list[k].field)) continue;
    const f = boundFailure(k, vec);
    if (f) { out.push(f); seen.add(CK.list[k].field); }
  }
  return out;
}
// whether the values keep every bound on the params in `which` at these values (for the points of a
// curve or the map; the ends of the ranges are tested when a value is offered)
function keeps(k, vec) {
  const v = CHECKS[k](vec), kind = KIND.get(CK.list[k].bound);
  if (failed(v) || !within(kind, v)) return false;
  return !kind.whole || (Math.abs(v - Math.round(v)) <= CK.rel * Math.max(1, Math.abs(v)) && Math.round(v) >= 1);
}
function allowed(vec, which) {
  for (const i of which) for (const k of boundsOf[i]) if (!keeps(k, vec)) return false;
  return true;
}
// CT311, a warning: a value outside its param's declared range is used
function outsideRange(i, v) {
  const p = P[i];
  if (!p.declared || (p.declared[0] <= v && v <= p.declared[1])) return null;
  return { code: CK.outside[0], severity: "warning", at: "--set " + p.name + ":1:1", help: CK.outside[2],
    text: fill(CK.outside[1], { param: p.name, shown: fmt(v, p.dim), low: fmt(p.declared[0], p.dim), high: fmt(p.declared[1], p.dim) }) };
}

// ---- the state ----------------------------------------------------------------------------
const vals = new Float64Array(NP);
const start = new Float64Array(P.map((p) => p.start));
const state = { x: 0, q: "time", mx: 0, my: 0, n: 200, subst: false };
function defaultState() {
  const i = P.findIndex((p) => p.log);
  state.x = i >= 0 ? i : 0; state.q = "time"; state.n = 200; state.subst = false;
  state.mx = state.x;
  const my = P.findIndex((p, k) => k !== state.mx);
  state.my = my < 0 ? state.mx : my;
}

// ---- the URL fragment -----------------------------------------------------------------------
// Read into a map without a prototype, so that a key such as __proto__ or constructor is only a
// string; unknown keys and values are ignored.
function fragment() {
  const out = new Map();
  for (const part of location.hash.replace(/^#/, "").split("&")) {
    if (!part) continue;
    const eq = part.indexOf("=");
    try {
      out.set(decodeURIComponent(eq < 0 ? part : part.slice(0, eq)), decodeURIComponent(eq < 0 ? "" : part.slice(eq + 1)));
    } catch (e) { /* a malformed escape: ignored */ }
  }
  return out;
}
const paramIndex = new Map(P.map((p, i) => [p.nameText, i]));
function writeFragment() {
  const parts = P.map((p, i) => "p." + encodeURIComponent(p.nameText) + "=" + String(vals[i]));
  const nm = (i) => encodeURIComponent(P[i].nameText);
  if (NP >= 1) parts.push("x=" + nm(state.x), "q=" + state.q, "mx=" + nm(state.mx), "my=" + nm(state.my), "n=" + state.n);
  try { history.replaceState(null, "", "#" + parts.join("&")); } catch (e) { /* a sandboxed page: no fragment */ }
}

// ---- which component binds (ctdsl.language.components) ----------------------------------
function binding(s, comps) {
  const n = comps.length;
  let worked = 0, others = 0, nw = 0, no = 0;
  for (let k = 0; k < n; k++) { if (s.compute_side[k]) { worked += comps[k]; nw++; } else { others += comps[k]; no++; } }
  const argmax = (want) => { let b = -1; for (let k = 0; k < n; k++) if (want(k) && (b < 0 || comps[k] > comps[b])) b = k; return b; };
  if (s.overlap && no && nw) return worked >= others ? argmax((k) => s.compute_side[k]) : argmax((k) => !s.compute_side[k]);
  if (s.overlap && no && !nw) return argmax((k) => !s.compute_side[k]);
  let total = 0; for (let k = 0; k < n; k++) total += comps[k];
  return total ? argmax(() => true) : Math.max(0, s.keys.indexOf("compute"));
}

// ---- break-evens: a scan of T_x - T_y and bisection to the last bit ----------------------
const work = new Float64Array(NP);
const outAll = new Float64Array(Math.max(1, D.n.full));
const outCurve = new Float64Array(Math.max(1, D.n.curve));
const outTimes = new Float64Array(Math.max(1, D.n.times));
function breakeven(b) {
  const p = P[b.over], sx = S[b.x], sy = S[b.y];
  work.set(vals);
  const diff = (v) => { work[b.over] = v; evalTimes(work, outTimes); return outTimes[sx.t] - outTimes[sy.t]; };
  const n = D.scan_steps, pts = [], ds = [];
  for (let k = 0; k <= n; k++) { const v = fromFrac(b.over, k / n); pts.push(v); ds.push(diff(v)); }
  const roots = [];
  let last = -1;
  for (let k = 0; k <= n; k++) {
    if (!(ds[k] !== 0 && Number.isFinite(ds[k]))) continue;
    if (last >= 0 && (ds[last] < 0) !== (ds[k] < 0)) roots.push(bisect(diff, pts[last], pts[k], ds[last]));
    last = k;
  }
  const who = (d) => (d < 0 ? sx.name : d > 0 ? sy.name : "neither");
  const edges = [p.lo].concat(roots, [p.hi]);
  const mid = (u, v) => (p.log && u > 0 ? Math.sqrt(u * v) : (u + v) / 2);
  const out = roots.map((r, k) => ({ value: r, below: who(diff(mid(edges[k], edges[k + 1]))), above: who(diff(mid(edges[k + 1], edges[k + 2]))) }));
  return { roots: out, lo: who(ds[0]), hi: who(ds[n]) };
}
function bisect(f, lo, hi, flo) {
  for (let k = 0; k < 2000; k++) {
    const m = lo > 0 && hi / lo > 2 ? Math.sqrt(lo * hi) : lo + (hi - lo) / 2;
    if (m <= lo || m >= hi) break;
    const fm = f(m);
    if (fm === 0) return m;
    if ((fm < 0) === (flo < 0)) { lo = m; flo = fm; } else hi = m;
  }
  return Math.abs(f(lo)) <= Math.abs(f(hi)) ? lo : hi;
}

// ---- the answers of one redraw, which the views show --------------------------------------
const frame = { all: outAll, comps: S.map(() => []), bind: S.map(() => -1), winner: -1, best: Infinity, be: [] };
function answer() {
  evalAll(vals, outAll);
  frame.winner = -1; frame.best = Infinity;
  S.forEach((s, j) => {
    const comps = s.i.comp.map((k) => outAll[k]);
    frame.comps[j] = comps;
    frame.bind[j] = binding(s, comps);
    const t = outAll[s.i.time];
    if (t < frame.best) { frame.best = t; frame.winner = j; }
  });
  frame.be = D.breakevens.map((b) => (b.missing ? null : breakeven(b)));
}
const bindText = (j) => { const s = S[j], bi = frame.bind[j]; return s.compText[bi < 0 ? s.compText.length - 1 : bi]; };
const bindKey = (j) => { const s = S[j], bi = frame.bind[j]; return s.compKey[bi < 0 ? s.compKey.length - 1 : bi]; };

// ---- views ----------------------------------------------------------------------------------
// A view is { name, build(), sync(), update(frame), redraw() }: build once (after the state is
// read), sync its controls from the state (after a reset or a fragment), update on every redraw
// from the frame's answers, redraw its canvas alone (its size changed). Each is optional.
const views = [];
const view = (v) => { views.push(v); return v; };
const parts = {};
function timed(name, fn) { const t = performance.now(); const r = fn(); parts[name] = performance.now() - t; return r; }
let last = 0, fragmentTimer = 0;
function update() {
  const t0 = performance.now();
  timed("answers", answer);
  for (const v of views) if (v.update) timed(v.name, () => v.update(frame));
  clearTimeout(fragmentTimer);
  fragmentTimer = setTimeout(writeFragment, 120);  // history.replaceState is slow: once the moves pause
  last = performance.now() - t0;
  setText($("timing"), "redrawn in " + last.toFixed(1) + " ms");
}
