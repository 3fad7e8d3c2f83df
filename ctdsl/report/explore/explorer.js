"use strict";
// ctdsl explorer: every number below is computed by the functions evalAll,
// evalCurve and evalTimes, printed by ctdsl from the solver's exact sympy
// expressions (ctdsl/report/explore/jsprint.py). Nothing here is a hand port of
// the cost model; this script only evaluates, scans, formats and draws.
(function () {
  const D = JSON.parse(document.getElementById("ct-data").textContent);
  const CEIL_SLACK = D.ceil_slack;
  function ceilTol(x) { return Math.ceil(x - CEIL_SLACK * Math.max(1, Math.abs(x))); }
  /*@FORMS@*/

  const P = D.params, S = D.schemes, NP = P.length;

  const COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#393b79", "#637939"];
  const CURVE_POINTS = 400;
  const SLIDER_STEPS = 1000;
  const $ = (id) => document.getElementById(id);
  const el = (tag, attrs, html) => {
    const e = document.createElement(tag);
    for (const k in attrs || {}) e.setAttribute(k, attrs[k]);
    if (html !== undefined) e.innerHTML = html; // only strings ctdsl encoded, or markup made here
    return e;
  };
  const setHTML = (e, html) => { if (e._html !== html) { e.innerHTML = html; e._html = html; } }; // no relayout when unchanged
  const decoded = (html) => { const t = document.createElement("textarea"); t.innerHTML = html; return t.value; };
  const color = (i) => COLORS[i % COLORS.length];
  // the plain text of the encoded names, decoded once (for attributes, titles and canvas text)
  P.forEach((p) => { p.nameText = decoded(p.name); p.unitText = decoded(p.unit); });
  S.forEach((s) => {
    s.compText = s.components.map(decoded).concat([""]);
    s.compKey = s.keys.map(decoded).concat([""]);
    if (s.module) s.module.stageText = s.module.stages.map(decoded);
  });

  // ---- state ------------------------------------------------------------------------------
  const vals = new Float64Array(NP);
  const start = new Float64Array(P.map((p) => p.start));
  const state = { x: defaultX(), q: "time", mx: 0, my: 0, n: 200, subst: false };
  const outAll = new Float64Array(Math.max(1, D.n.full));
  const outCurve = new Float64Array(Math.max(1, D.n.curve));
  const outTimes = new Float64Array(Math.max(1, D.n.times));
  const work = new Float64Array(NP);

  function defaultX() {
    const i = P.findIndex((p) => p.log);
    return i >= 0 ? i : 0;
  }
  function defaultMapAxes() {
    const mx = state.x;
    let my = P.findIndex((p, i) => i !== mx);
    if (my < 0) my = mx;
    state.mx = mx; state.my = my;
  }

  // ---- numbers and units ------------------------------------------------------------------
  function sig(x, digits) {
    if (x === 0) return "0";
    const m = Math.abs(x);
    if (m >= Math.pow(10, digits) || m < 1e-3) {
      const [mant, ex] = x.toExponential(digits - 1).split("e");
      const n = parseInt(ex, 10);
      return mant + "e" + (n < 0 ? "-" : "+") + String(Math.abs(n)).padStart(2, "0");
    }
    const dec = Math.max(0, digits - 1 - Math.floor(Math.log10(m)));
    let t = x.toFixed(dec);
    if (t.includes(".")) t = t.replace(/0+$/, "").replace(/\.$/, "");
    return t;
  }
  // format_quantity of ctdsl.units: a preferred prefix, four significant figures
  function fmt(v, dim, digits) {
    digits = digits || 4;
    if (v === null || v === undefined || Number.isNaN(v)) return "n/a";
    if (!Number.isFinite(v)) return "inf";
    const key = dim.join(",");
    if (dim.every((e) => e === 0)) return sig(v, digits);
    const pref = D.units[key];
    if (!pref) return sig(v, digits) + " " + (D.symbols[key] || "");
    const scales = pref.scales;
    if (v === 0) return "0 " + (scales.length > 1 ? pref.base : scales[0][1]);
    const m = Math.abs(v);
    for (let k = 0; k < scales.length; k++) {
      const [scale, label] = scales[k];
      if (m >= scale * 0.9995 || k === scales.length - 1) return sig(v / scale, digits) + " " + label;
    }
    return sig(v, digits) + " " + pref.base;
  }
  const TIME = D.dims.time, ENERGY = D.dims.energy, DATA = D.dims.data;
  const QUANT = { step: [0, TIME, "step time"], time: [1, TIME, "time to target"], energy: [2, ENERGY, "energy to target"] };

  // ---- sliders ----------------------------------------------------------------------------
  function toPos(i, v) {
    const p = P[i];
    let t = p.log ? (Math.log(v) - Math.log(p.lo)) / (Math.log(p.hi) - Math.log(p.lo)) : (v - p.lo) / (p.hi - p.lo);
    if (!Number.isFinite(t)) t = 0;
    return Math.round(Math.min(1, Math.max(0, t)) * SLIDER_STEPS);
  }
  function fromFrac(i, t) {
    const p = P[i];
    if (t <= 0) return p.lo;
    if (t >= 1) return p.hi;
    return snap(i, p.log ? Math.exp(Math.log(p.lo) + t * (Math.log(p.hi) - Math.log(p.lo))) : p.lo + t * (p.hi - p.lo));
  }
  // a param a count is set to (replicas = R, sites = K) takes whole values only: the nearest
  function snap(i, v) {
    return P[i].whole ? Math.max(1, Math.round(v)) : v;
  }
  const controls = [];
  function buildControls() {
    const box = $("params");
    P.forEach((p, i) => {
      const row = el("div", { class: "param" });
      const unit = p.unit ? " (" + p.unit + ")" : "";
      const lab = el("label", { for: "slider-" + i, id: "label-" + i }, "<code>" + p.name + "</code>" + unit +
        (p.display ? ' <span class="display" title="display name">' + p.display + "</span>" : ""));
      const slider = el("input", { type: "range", id: "slider-" + i, min: "0", max: String(SLIDER_STEPS), step: "1",
        "aria-labelledby": "label-" + i, "data-param": decoded(p.name) });
      const num = el("input", { type: "number", id: "num-" + i, step: p.whole ? "1" : "any", "aria-label": decoded(p.name) + " in " + (decoded(p.unit) || "its unit"),
        "data-param": decoded(p.name), class: "num" });
      const range = el("span", { class: "range" }, fmt(p.lo, p.dim) + " .. " + fmt(p.hi, p.dim) + (p.log ? " log" : " lin"));
      slider.addEventListener("input", () => { vals[i] = fromFrac(i, slider.valueAsNumber / SLIDER_STEPS); showParam(i, true); update(); });
      const fromBox = () => {
        const v = parseFloat(num.value);
        if (!Number.isFinite(v)) return;
        vals[i] = snap(i, v * p.scale);
        showParam(i, false);
        update();
      };
      num.addEventListener("input", fromBox);
      num.addEventListener("change", fromBox);
      row.append(lab, slider, num, range);
      box.append(row);
      controls.push({ slider, num });
    });
  }
  function showParam(i, box) {
    const c = controls[i], p = P[i];
    c.slider.value = String(toPos(i, vals[i]));
    c.slider.setAttribute("aria-valuetext", fmt(vals[i], p.dim, 6));
    if (box) c.num.value = String(vals[i] / p.scale);
  }

  // ---- the URL fragment -------------------------------------------------------------------
  function readFragment() {
    const h = location.hash.replace(/^#/, "");
    if (!h) return;
    for (const part of h.split("&")) {
      const [k, raw] = part.split("=");
      const v = decodeURIComponent(raw || "");
      if (k === "x" || k === "mx" || k === "my") {
        const i = P.findIndex((p) => decoded(p.name) === v);
        if (i >= 0) state[k] = i;
      } else if (k === "q" && v in QUANT) state.q = v;
      else if (k === "n") { const n = parseInt(v, 10); if (n >= 2 && n <= 400) state.n = n; }
      else if (k.startsWith("p.")) {
        const i = P.findIndex((p) => decoded(p.name) === decodeURIComponent(k.slice(2)));
        const f = parseFloat(v);
        if (i >= 0 && Number.isFinite(f)) vals[i] = snap(i, f);
      }
    }
  }
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

  // ---- views built once, updated in place -------------------------------------------------
  const cells = [];
  function buildTable() {
    const body = $("solve-body");
    S.forEach((s, j) => {
      const tr = el("tr", { "data-scheme": decoded(s.name) });
      tr.append(el("th", { scope: "row" }, '<span class="swatch" style="background:' + color(j) + '"></span>' + s.label + " <code>" + s.name + "</code>"));
      const row = {};
      for (const key of ["step", "binding", "time", "energy", "eps", "payload", "wan"]) {
        const td = el("td", { "data-key": key });
        tr.append(td); row[key] = td;
      }
      body.append(tr); cells.push(row);
    });
  }
  function setCell(td, v, dim) { td.dataset.value = String(v); td.textContent = fmt(v, dim); }

  const bars = [];
  const compColor = new Map();
  function buildBars() {
    const box = $("bars");
    S.forEach((s) => s.components.forEach((c) => { if (!compColor.has(c)) compColor.set(c, COLORS[(compColor.size + 4) % COLORS.length]); }));
    S.forEach((s, j) => {
      const row = el("div", { class: "bar-row", "data-scheme": decoded(s.name) });
      const name = el("div", { class: "bar-name" }, s.label);
      const track = el("div", { class: "bar-track", role: "img" });
      const segs = s.components.map((c, k) => {
        const seg = el("span", { class: "seg", title: decoded(c), "data-key": s.compKey[k] });
        seg.style.background = compColor.get(c);
        track.append(seg);
        return seg;
      });
      const note = el("div", { class: "bar-note" });
      row.append(name, track, note);
      box.append(row);
      bars.push({ track, segs, note });
    });
    const legend = $("bars-legend");
    compColor.forEach((col, c) => legend.append(el("li", {}, '<span class="swatch" style="background:' + col + '"></span>' + c)));
  }

  const stages = [];
  function buildStages() {
    const box = $("stages");
    S.forEach((s, j) => {
      if (!s.module) return;
      const m = s.module;
      const wrap = el("div", { class: "module", "data-scheme": decoded(s.name) });
      wrap.append(el("h3", {}, s.label + " &middot; module <code>" + m.pluggable + "</code>"));
      const rows = m.stages.map((name) => {
        const row = el("div", { class: "stage-row", "data-stage": decoded(name) });
        const bar = el("span", { class: "stage-bar" });
        const label = el("span", { class: "stage-name" }, name);
        const val = el("span", { class: "stage-value" });
        row.append(label, bar, val);
        wrap.append(row);
        return { row, bar, val };
      });
      const breaks = el("p", { class: "breaks" });
      wrap.append(breaks);
      box.append(wrap);
      stages.push({ j, rows, breaks, binding: null });
    });
    if (!stages.length) box.append(el("p", {}, "No scheme in this spec runs through a pluggable module."));
  }

  const beRows = [];
  function buildBreakevens() {
    const box = $("be-list");
    D.breakevens.forEach((b) => {
      const li = el("li", { "data-x": decoded(S[b.x].name), "data-y": decoded(S[b.y].name), "data-over": decoded(P[b.over].name) });
      box.append(li);
      beRows.push(li);
    });
    if (!D.breakevens.length) box.append(el("li", {}, "No break-even asked in this spec."));
  }

  function buildSelects() {
    for (const id of ["x-param", "map-x", "map-y"]) {
      const sel = $(id);
      P.forEach((p, i) => sel.append(el("option", { value: String(i) }, p.name)));
    }
    $("x-param").value = String(state.x);
    $("quantity").value = state.q;
    $("map-x").value = String(state.mx);
    $("map-y").value = String(state.my);
    $("x-param").addEventListener("change", (e) => { state.x = +e.target.value; update(); });
    $("quantity").addEventListener("change", (e) => { state.q = e.target.value; update(); });
    $("map-x").addEventListener("change", (e) => { state.mx = +e.target.value; update(); });
    $("map-y").addEventListener("change", (e) => { state.my = +e.target.value; update(); });
    const legend = $("legend");
    S.forEach((s, j) => legend.append(el("li", {}, '<span class="swatch" style="background:' + color(j) + '"></span>' + s.label)));
  }

  // ---- drawing: axes, curves, the winner map ----------------------------------------------
  function axis(lo, hi, log, a, b) {
    if (log) { const l0 = Math.log(lo), l1 = Math.log(hi); return (v) => a + (Math.log(v) - l0) / (l1 - l0) * (b - a); }
    return (v) => a + (v - lo) / (hi - lo) * (b - a);
  }
  // the scale of the unit an axis is labelled in (ctdsl.units' preferred prefixes), for round ticks
  function unitScale(v, dim) {
    const pref = D.units[dim.join(",")];
    if (!pref || !(v > 0)) return 1;
    for (const [scale] of pref.scales) if (v >= scale * 0.9995) return scale;
    return pref.scales[pref.scales.length - 1][0];
  }
  function ticks(lo, hi, log, dim) {
    const out = [];
    const u = unitScale(log ? Math.sqrt(lo * hi) : Math.max(Math.abs(lo), Math.abs(hi)), dim);
    const a = lo / u, b = hi / u;
    if (log) {
      const e0 = Math.floor(Math.log10(a)), e1 = Math.ceil(Math.log10(b));
      const mults = e1 - e0 <= 3 ? [1, 2, 5] : [1];
      for (let e = e0; e <= e1; e++) for (const m of mults) { const v = m * Math.pow(10, e); if (v >= a * (1 - 1e-9) && v <= b * (1 + 1e-9)) out.push(v * u); }
      if (out.length > 9) return out.filter((_, k) => k % Math.ceil(out.length / 9) === 0);
      return out;
    }
    const span = b - a || 1, step = Math.pow(10, Math.floor(Math.log10(span / 4)));
    const m = [1, 2, 5, 10].find((k) => span / (step * k) <= 6) || 10, d = step * m;
    for (let k = Math.ceil(a / d); k * d <= b + 1e-9 * Math.abs(b); k++) out.push(k * d * u);
    return out;
  }
  const curveData = S.map(() => new Float64Array(CURVE_POINTS));
  const xsCurve = new Float64Array(CURVE_POINTS);
  function drawCurves(beResults) {
    const cv = $("curve"), g = cv.getContext("2d");
    const W = cv.width, H = cv.height, L = 78, R = 26, T = 14, B = 42;
    const xi = state.x, px = P[xi], [qk, qdim, qname] = QUANT[state.q];
    work.set(vals);
    for (let k = 0; k < CURVE_POINTS; k++) {
      const v = fromFrac(xi, k / (CURVE_POINTS - 1));
      xsCurve[k] = v; work[xi] = v;
      evalCurve(work, outCurve);
      for (let j = 0; j < S.length; j++) curveData[j][k] = outCurve[S[j].c[qk]];
    }
    let lo = Infinity, hi = -Infinity;
    for (const arr of curveData) for (const v of arr) if (Number.isFinite(v)) { if (v < lo) lo = v; if (v > hi) hi = v; }
    g.clearRect(0, 0, W, H);
    g.fillStyle = "#fff"; g.fillRect(0, 0, W, H);
    g.font = "12px sans-serif"; g.fillStyle = "#222"; g.strokeStyle = "#222";
    if (!(lo <= hi)) { g.fillText("no " + qname + " to draw", L, H / 2); return; }
    const ylog = lo > 0 && hi / lo > 20;
    if (lo === hi) { lo = lo * 0.9 || -1; hi = hi * 1.1 || 1; }
    const fx = axis(px.lo, px.hi, px.log, L, W - R), fy = axis(lo, hi, ylog, H - B, T);
    g.strokeStyle = "#ccc"; g.lineWidth = 1;
    g.textAlign = "center";
    for (const t of ticks(px.lo, px.hi, px.log, px.dim)) { const x = fx(t); g.beginPath(); g.moveTo(x, T); g.lineTo(x, H - B); g.stroke(); g.fillText(fmt(t, px.dim, 4), x, H - B + 15); }
    g.textAlign = "right";
    for (const t of ticks(lo, hi, ylog, qdim)) { const y = fy(t); g.beginPath(); g.moveTo(L, y); g.lineTo(W - R, y); g.stroke(); g.fillText(fmt(t, qdim, 4), L - 4, y + 4); }
    g.textAlign = "center";
    g.fillText(px.nameText + (px.unit ? " (" + px.unitText + ")" : "") + (px.log ? ", log" : ""), (L + W - R) / 2, H - 8);
    g.save(); g.translate(14, (T + H - B) / 2); g.rotate(-Math.PI / 2); g.fillText(qname + (ylog ? ", log" : ""), 0, 0); g.restore();
    g.save(); g.beginPath(); g.rect(L, T, W - L - R, H - T - B); g.clip();
    g.lineWidth = 2;
    curveData.forEach((arr, j) => {
      g.strokeStyle = color(j); g.beginPath();
      let pen = false;
      for (let k = 0; k < CURVE_POINTS; k++) {
        const v = arr[k];
        if (!Number.isFinite(v) || (ylog && v <= 0)) { pen = false; continue; }
        const x = fx(xsCurve[k]), y = fy(v);
        if (pen) g.lineTo(x, y); else g.moveTo(x, y);
        pen = true;
      }
      g.stroke();
    });
    g.setLineDash([4, 4]); g.strokeStyle = "#000"; g.lineWidth = 1;
    const cx = fx(vals[xi]); g.beginPath(); g.moveTo(cx, T); g.lineTo(cx, H - B); g.stroke();
    g.setLineDash([]);
    g.fillStyle = "#000"; g.textAlign = "left";
    D.breakevens.forEach((b, k) => {
      if (b.over !== xi || b.missing) return;
      for (const r of beResults[k].roots) {
        const x = fx(r.value);
        g.strokeStyle = color(b.x); g.lineWidth = 1.5;
        g.beginPath(); g.moveTo(x, T); g.lineTo(x, H - B); g.stroke();
        g.beginPath(); g.moveTo(x - 5, T); g.lineTo(x + 5, T); g.lineTo(x, T + 8); g.closePath(); g.fillStyle = color(b.x); g.fill();
      }
    });
    g.restore();
    g.strokeStyle = "#222"; g.lineWidth = 1; g.strokeRect(L, T, W - L - R, H - T - B);
  }

  let mapWinners = new Int16Array(0);
  const mapCanvas = document.createElement("canvas");
  let mapImage = null;
  // each scheme's colour, lightened, as one little-endian RGBA word of an ImageData
  const tints = COLORS.map((c) => {
    const [r, g, b] = [1, 3, 5].map((k) => parseInt(c.slice(k, k + 2), 16)).map((v) => Math.round(v + (255 - v) * 0.45));
    return ((255 << 24) | (b << 16) | (g << 8) | r) >>> 0;
  });
  function drawMap() {
    const cv = $("winner"), g = cv.getContext("2d");
    const n = state.n, ix = state.mx, iy = state.my;
    if (mapWinners.length !== n * n) mapWinners = new Int16Array(n * n);
    work.set(vals);
    const xs = new Float64Array(n), ys = new Float64Array(n);
    for (let k = 0; k < n; k++) { xs[k] = fromFrac(ix, k / (n - 1)); ys[k] = fromFrac(iy, k / (n - 1)); }
    const ts = S.map((s) => s.t);
    const tEval = performance.now();
    for (let r = 0; r < n; r++) {
      work[iy] = ys[r];
      for (let c = 0; c < n; c++) {
        work[ix] = xs[c];
        evalTimes(work, outTimes);
        let best = Infinity, w = -1;
        for (let j = 0; j < ts.length; j++) { const t = outTimes[ts[j]]; if (t < best) { best = t; w = j; } }
        mapWinners[r * n + c] = Number.isFinite(best) ? w : -1;
      }
    }
    parts.mapEval = performance.now() - tEval;  // of the map's time, the evaluation
    // one pixel per point on a small canvas, scaled up without smoothing
    if (mapCanvas.width !== n) { mapCanvas.width = n; mapCanvas.height = n; mapImage = null; }
    const mg = mapCanvas.getContext("2d");
    if (mapImage === null) mapImage = mg.createImageData(n, n);
    const px = new Uint32Array(mapImage.data.buffer);
    for (let r = 0; r < n; r++) {
      const row = (n - 1 - r) * n;
      for (let c = 0; c < n; c++) { const w = mapWinners[r * n + c]; px[row + c] = w >= 0 ? tints[w % tints.length] : 0xffffffff; }
    }
    mg.putImageData(mapImage, 0, 0);
    const W = cv.width, H = cv.height, cw = W / n, ch = H / n;
    g.imageSmoothingEnabled = false;
    g.drawImage(mapCanvas, 0, 0, W, H);
    g.strokeStyle = "#000"; g.lineWidth = 1.5; g.beginPath();
    for (let r = 0; r < n; r++) for (let c = 0; c < n; c++) {
      const w = mapWinners[r * n + c], x = c * cw, y = (n - 1 - r) * ch;
      if (c + 1 < n && mapWinners[r * n + c + 1] !== w) { g.moveTo(x + cw, y); g.lineTo(x + cw, y + ch); }
      if (r + 1 < n && mapWinners[(r + 1) * n + c] !== w) { g.moveTo(x, y); g.lineTo(x + cw, y); }
    }
    g.stroke();
    const fx = axis(P[ix].lo, P[ix].hi, P[ix].log, 0, W), fy = axis(P[iy].lo, P[iy].hi, P[iy].log, H, 0);
    const mx = fx(vals[ix]), my = fy(vals[iy]);
    g.strokeStyle = "#000"; g.beginPath(); g.arc(mx, my, 5, 0, 2 * Math.PI); g.stroke();
    $("map-caption").textContent = "x: " + P[ix].nameText + " " + fmt(P[ix].lo, P[ix].dim) + " .. " + fmt(P[ix].hi, P[ix].dim) + (P[ix].log ? " (log)" : "") +
      "; y: " + P[iy].nameText + " " + fmt(P[iy].lo, P[iy].dim) + " .. " + fmt(P[iy].hi, P[iy].dim) + (P[iy].log ? " (log)" : "") +
      "; " + n + " x " + n + " points; the ring marks the current values.";
    const counts = new Map();
    for (const w of mapWinners) counts.set(w, (counts.get(w) || 0) + 1);
    let html = "";
    [...counts.keys()].sort((a, b) => a - b).forEach((w) => {
      const txt = w >= 0 ? S[w].label : "no finite time";
      html += '<li data-scheme="' + (w >= 0 ? S[w].name : "") + '"><span class="swatch" style="background:' + (w >= 0 ? color(w) : "#fff") + '"></span>' + txt + " (" + (100 * counts.get(w) / (n * n)).toFixed(1) + "%)</li>";
    });
    setHTML($("map-legend"), html);
  }

  // ---- the update on every move -----------------------------------------------------------
  function updateTables() {
    evalAll(vals, outAll);
    let best = Infinity, winner = -1;
    S.forEach((s, j) => {
      const c = cells[j], o = s.i;
      setCell(c.step, outAll[o.step], TIME);
      setCell(c.time, outAll[o.time], TIME);
      setCell(c.energy, outAll[o.energy], ENERGY);
      setCell(c.eps, outAll[o.eps], ENERGY);
      setCell(c.payload, outAll[o.payload], DATA);
      setCell(c.wan, outAll[o.wan], DATA);
      const comps = o.comp.map((k) => outAll[k]);
      const bi = binding(s, comps);
      c.binding.textContent = s.compText[bi < 0 ? s.compText.length - 1 : bi];
      c.binding.dataset.value = s.compKey[bi < 0 ? s.compKey.length - 1 : bi];
      if (outAll[o.time] < best) { best = outAll[o.time]; winner = j; }
      s._comps = comps; s._bind = bi;
    });
    cells.forEach((c, j) => c.step.parentElement.classList.toggle("winner", j === winner));
    setHTML($("winner-now"), winner >= 0 ? "Fastest to target here: <strong>" + S[winner].label + "</strong>, " + fmt(best, TIME) + "." : "No scheme has a time to target.");
  }
  function updateBars() {
    let top = 0;
    S.forEach((s) => { let sum = 0; for (const v of s._comps) if (v > 0) sum += v; if (sum > top) top = sum; });
    S.forEach((s, j) => {
      const b = bars[j];
      s._comps.forEach((v, k) => {
        const seg = b.segs[k];
        seg.style.width = (top > 0 && v > 0 ? (100 * v / top) : 0).toFixed(3) + "%";
        seg.classList.toggle("binding", k === s._bind);
        seg.dataset.value = String(v);
      });
      b.note.textContent = fmt(outAll[s.i.step], TIME) + "; binds: " + s.compText[s._bind < 0 ? s.compText.length - 1 : s._bind];
      b.note.dataset.binding = s.compKey[s._bind < 0 ? s.compKey.length - 1 : s._bind];
      b.track.setAttribute("aria-label", s.components.map((c, k) => s.compText[k] + " " + fmt(s._comps[k], TIME)).join(", "));
    });
  }
  function updateStages() {
    for (const st of stages) {
      const m = S[st.j].module;
      const ts = m.si.map((k) => outAll[k]);
      let bi = 0; ts.forEach((t, k) => { if (t > ts[bi]) bi = k; });
      const top = Math.max(...ts.filter(Number.isFinite), 0);
      st.rows.forEach((r, k) => {
        r.bar.style.width = (top > 0 ? 60 * ts[k] / top : 0).toFixed(3) + "%";
        r.val.textContent = fmt(ts[k], TIME) + (k === bi ? "  binds" : "");
        r.val.dataset.value = String(ts[k]);
        r.row.classList.toggle("binding", k === bi);
      });
      st.binding = m.stageText[bi];
      st.rows[0].row.parentElement.dataset.binding = st.binding;
      const text = m.breaks.map((b) => {
        const pi = P.findIndex((p) => p.name === b.param);
        const dim = pi >= 0 ? P[pi].dim : b.dim;
        return "beyond <code>" + b.param + "</code> = " + fmt(outAll[b.bi], dim) + ", " + b.then + " binds";
      });
      setHTML(st.breaks, text.length ? "Break points: " + text.join("; ") + "." : "No break point in a param.");
    }
  }
  function updateBreakevens() {
    const res = D.breakevens.map((b) => (b.missing ? null : breakeven(b)));
    D.breakevens.forEach((b, k) => {
      const li = beRows[k], over = P[b.over], head = "<strong>" + S[b.x].label + "</strong> vs <strong>" + S[b.y].label + "</strong> over <code>" + over.name + "</code>: ";
      if (b.missing) { setHTML(li, head + b.missing); li.dataset.roots = "[]"; return; }
      const r = res[k];
      li.dataset.roots = JSON.stringify(r.roots.map((x) => x.value));
      if (!r.roots.length) {
        setHTML(li, head + "never in range (" + fmt(over.lo, over.dim) + " .. " + fmt(over.hi, over.dim) + "): " +
          (r.lo === r.hi ? "<code>" + r.lo + "</code> is faster over all of it" : "no crossing found"));
        return;
      }
      setHTML(li, head + r.roots.map((x) => "<code>" + over.name + "</code> = " + fmt(x.value, over.dim, 6) + ": <code>" + x.below + "</code> faster below, <code>" + x.above + "</code> above").join("; "));
    });
    return res;
  }
  function updateEquations() {
    for (const m of document.querySelectorAll(".ct-sym")) {
      if (m._orig === undefined) m._orig = m.innerHTML;
      const i = +m.dataset.i;
      m.innerHTML = state.subst ? "<mn>" + sig(vals[i], 6) + "</mn>" : m._orig;
    }
  }

  let last = 0, fragmentTimer = 0;
  const parts = {};
  function timed(name, fn) { const t = performance.now(); const r = fn(); parts[name] = performance.now() - t; return r; }
  function update() {
    const t0 = performance.now();
    timed("tables", updateTables);
    timed("bars", updateBars);
    timed("stages", updateStages);
    const be = timed("breakevens", updateBreakevens);
    if (NP >= 1) timed("curves", () => drawCurves(be));
    if (NP >= 2) timed("map", drawMap);
    if (state.subst) updateEquations();
    clearTimeout(fragmentTimer);
    fragmentTimer = setTimeout(writeFragment, 120);  // history.replaceState is slow: once the moves pause
    last = performance.now() - t0;
    $("timing").textContent = "redrawn in " + last.toFixed(1) + " ms";
  }

  // ---- play, reset ------------------------------------------------------------------------
  let playing = null;
  function play() {
    const btn = $("play");
    if (playing !== null) { cancelAnimationFrame(playing); playing = null; btn.textContent = "Play"; btn.setAttribute("aria-pressed", "false"); return; }
    btn.textContent = "Pause"; btn.setAttribute("aria-pressed", "true");
    let pos = toPos(state.x, vals[state.x]);
    const step = () => {
      pos = (pos + 4) % (SLIDER_STEPS + 1);
      vals[state.x] = fromFrac(state.x, pos / SLIDER_STEPS);
      showParam(state.x, true);
      update();
      playing = requestAnimationFrame(step);
    };
    playing = requestAnimationFrame(step);
  }
  function reset() {
    vals.set(start);
    state.x = defaultX(); state.q = "time"; defaultMapAxes(); state.n = 200;
    $("x-param").value = String(state.x); $("quantity").value = state.q;
    $("map-x").value = String(state.mx); $("map-y").value = String(state.my);
    P.forEach((_, i) => showParam(i, true));
    update();
  }

  // ---- start ------------------------------------------------------------------------------
  const note = (id, text) => { const sec = $(id); for (const e of sec.querySelectorAll("canvas, .toolbar, .legend")) e.remove(); sec.append(el("p", { class: "note" }, text)); };
  vals.set(start);
  defaultMapAxes();
  readFragment();
  buildControls();
  buildSelects();
  buildTable();
  buildBars();
  buildStages();
  buildBreakevens();
  P.forEach((_, i) => showParam(i, true));
  if (NP === 0) { note("curves", "This spec has no params: there is nothing to sweep."); $("play").disabled = true; }
  if (NP < 2) note("map", "The winner map needs two params; this spec has " + NP + ".");
  $("play").addEventListener("click", play);
  $("reset").addEventListener("click", reset);
  $("subst").addEventListener("change", (e) => { state.subst = e.target.checked; updateEquations(); });
  update();
  window.ctdslExplorer = {
    // for tests and benchmarks: the last redraw's time, and a redraw on demand
    lastMs: () => last,
    lastParts: () => Object.assign({}, parts),
    update,
    values: () => Array.from(vals),
    stagesBinding: () => stages.map((st) => [decoded(S[st.j].name), st.binding]),
    winners: () => Array.from(mapWinners),
  };
})();
