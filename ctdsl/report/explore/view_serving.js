// ---- serving: TTFT and TPOT against the arrival rate, each path's capacities, goodput -------
// Each path a workload's requests take (docs/serving.md) is a series: its TTFT (mean, solid; at the
// SLO's percentile, dashed) and its TPOT (mean) against the param its workload's rate is, with the
// SLO's targets as lines. evalServing (printed from Solution.serving's exact forms) gives every term,
// capacity and the sustainable rate of every path. A path is over capacity (unstable) unless its
// rate is below the sustainable one and its queues settle (the rule of ctdsl.symbolic.serving):
// then its waits, and every latency that holds one, are infinite: shown as "over capacity", never
// drawn. Goodput is the highest rate at which every target of the SLO holds, found as solve finds
// it (the same bisection, ctdsl.roots.bisect, 60 halvings), just after each redraw.
const SV = D.serving;
const NSV = D.n.serving;
const outServ = new Float64Array(Math.max(1, NSV));
const GOODPUT_BISECTIONS = 60;
const svCurve = { x: new Float64Array(0), ttft: [], ttftP: [], tpot: [] };
const svRows = [];
const svState = { goodput: [], done: false, timer: 0 };
let svTtftChart = null, svTpotChart = null;

// the rate as solve prints it ("4.422 req/s")
const reqs = (v) => (v === null || v === undefined || Number.isNaN(v) ? "n/a" : !Number.isFinite(v) ? "inf" : sig(v, 4) + " req/s");
// the values of each path at the params' values `a`, into out (evalServing's layout)
function servingAt(a, out) { evalServing(a, out); return out; }
// whether path p's queues settle in the values `o` (ctdsl.symbolic.serving.settles): each utilisation
// in [0, 1), a positive TPOT, the mean decode batch within the largest
function settles(p, o) {
  const t = p.terms, v = (k) => (has(t, k) ? o[t[k]] : NaN);
  const rhos = [v("prefill_utilisation")].concat(has(t, "link_utilisation") ? [v("link_utilisation")] : []);
  return rhos.every((r) => r >= 0 && r < 1) && v("tpot") > 0 && v("decode_batch") >= 0 && v("decode_batch") <= v("decode_batch_max");
}
// whether path p is over capacity: its rate at or above the sustainable one, or its queues do not settle
const overCapacity = (p, o) => !(o[p.rate] < o[p.sustainable] && settles(p, o));
// a term of path p as solve gives it: infinite where the path is over capacity and the term is a wait or follows from one
function termOf(p, o, key, over) {
  if (!has(p.terms, key)) return null;
  return over && SV.queued.includes(key) ? Infinity : o[p.terms[key]];
}
function sloValues(p, a) {
  if (p.slo === null) return null;
  const f = SLOS[p.slo], ev = (g) => { if (!g) return null; const v = g(a); return failed(v) ? NaN : v; };
  return { ttft: ev(f[0]), tpot: ev(f[1]), e2e: ev(f[2]), q: ev(f[3]) };
}
// the binding capacity: the least, ties to the first name (as solve: min over (value, name))
function bindingCap(p, o) {
  let best = null;
  for (const [k, i] of p.caps) { const v = o[i]; if (best === null || v < best[1] || (v === best[1] && k < best[0])) best = [k, v]; }
  return best ? best[0] : null;
}

// goodput (ctdsl.symbolic.serving._goodput): below the sustainable rate, where every queue settles
// and every target of the SLO holds, bisected as ctdsl.roots.bisect does
function goodput(j) {
  const p = SV.paths[j], slo = sloValues(p, vals);
  if (!slo) return null;
  if (p.rate_param === null) {  // the rate is a number: solve's goodput holds at the start values only
    const atStart = vals.every((v, i) => v === start[i]);
    return p.goodput0 && atStart ? { value: p.goodput0[0], by: decoded(p.goodput0[1]) } : { value: NaN, by: "n/a: the rate is not a param" };
  }
  const o0 = servingAt(vals, outServ), ceiling = o0[p.sustainable], binds = bindingCap(p, o0);
  const w = Float64Array.from(vals), o = new Float64Array(outServ.length), ri = p.rate_param;
  const settlesAt = (x) => { w[ri] = x; servingAt(w, o); return settles(p, o); };
  let best = ceiling, why = binds;
  const hi = ceiling * (1 - 1e-9);
  for (const [k, [name, key]] of SV.targets.entries()) {
    const limit = [slo.ttft, slo.tpot, slo.e2e][k];
    if (limit === null) continue;
    const holds = (x) => settlesAt(x) && o[p.terms[key]] <= limit;
    const lo = ceiling * 1e-9;
    if (!holds(lo)) return { value: 0, by: name };
    if (holds(hi)) continue;
    let a = lo, b = hi;
    for (let s = 0; s < GOODPUT_BISECTIONS; s++) { const m = (a + b) / 2; if (m === a || m === b) break; if (holds(m)) a = m; else b = m; }
    const x = (a + b) / 2;
    if (x < best) { best = x; why = name; }
  }
  return { value: best, by: why };
}

function drawServing(c, which) {
  const g = c.context(), W = c.W, H = c.H, R = 18, T = 12, B = 46, h = H - T - B;
  g.clearRect(0, 0, W, H); g.fillStyle = "#fff"; g.fillRect(0, 0, W, H);
  const xi = SV.x, px = P[xi], n = svCurve.x.length;
  const series = which === "ttft" ? [[svCurve.ttft, []], [svCurve.ttftP, [6, 4]]] : [[svCurve.tpot, []]];
  const levels = [];
  SV.paths.forEach((p, j) => { if (p.rate_param !== xi) return; const s = sloValues(p, vals); const v = s && s[which]; if (v !== null && v !== undefined && Number.isFinite(v)) levels.push(v); });
  let lo = Infinity, hi = -Infinity;
  for (const [arrs] of series) for (const arr of arrs) for (let k = 0; k < n; k++) { const v = arr[k]; if (Number.isFinite(v) && v > 0) { lo = Math.min(lo, v); hi = Math.max(hi, v); } }
  for (const v of levels) if (v > 0) { lo = Math.min(lo, v); hi = Math.max(hi, v); }
  g.fillStyle = "#222";
  if (!(lo <= hi)) { g.fillText("nothing stable to draw over this range", 20, H / 2); return; }
  // near a path's capacity its waits grow without end: the axis stops at 20 times the larger of the
  // targets and the least value, and what lies above is clipped
  const cap = 20 * Math.max(lo, ...levels);
  if (hi > cap) hi = cap;
  const ylog = hi / lo > 20;
  if (lo === hi) { lo *= 0.9; hi *= 1.1; }
  if (ylog) { const f = Math.pow(hi / lo, 0.06); lo /= f; hi *= f; } else { const m = 0.06 * (hi - lo); lo = Math.max(0, lo - m); hi += m; }
  const yt = ticks(lo, hi, ylog, TIME, Math.max(3, Math.floor(h / 36))), ylab = (t) => fmt(t, TIME);
  const L = leftMargin(g, yt.map(ylab)), w = W - L - R;
  c.plot(L, T, w, h);
  const fx = axis(px.lo, px.hi, px.log, L, L + w), fy = axis(lo, hi, ylog, T + h, T);
  const xt = ticks(px.lo, px.hi, px.log, px.dim, room(w, 9));
  g.strokeStyle = "#e3e3e3"; g.lineWidth = 1;
  for (const t of xt) { const x = Math.round(fx(t)) + 0.5; g.beginPath(); g.moveTo(x, T); g.lineTo(x, T + h); g.stroke(); }
  for (const t of yt) { const y = Math.round(fy(t)) + 0.5; if (y < T || y > T + h) continue; g.beginPath(); g.moveTo(L, y); g.lineTo(L + w, y); g.stroke(); }
  const name = which === "ttft" ? "TTFT" : "TPOT (mean)";
  drawAxes(g, L, T, w, h,
    { ticks: xt, at: fx, label: (t) => fmt(t, px.dim), title: px.nameText + (px.unit ? " (" + px.unitText + ")" : "") + (px.log ? ", log" : "") },
    { ticks: yt, at: fy, label: ylab, title: name + (ylog ? ", log" : "") });
  g.save(); g.beginPath(); g.rect(L, T, w, h); g.clip();
  g.lineWidth = 2;
  for (const [arrs, dash] of series) {
    g.setLineDash(dash);
    arrs.forEach((arr, j) => {
      if (SV.paths[j].rate_param !== xi) return;
      g.strokeStyle = color(j); g.beginPath();
      let pen = false;
      for (let k = 0; k < n; k++) {
        const v = arr[k];
        if (!Number.isFinite(v) || v <= 0) { pen = false; continue; }
        const x = fx(svCurve.x[k]), y = fy(Math.min(v, hi * 4));
        if (pen) g.lineTo(x, y); else g.moveTo(x, y);
        pen = true;
      }
      g.stroke();
    });
  }
  g.setLineDash([]);
  // each path's sustainable rate at the other params' values: beyond it the path is unstable
  g.lineWidth = 1; g.setLineDash([2, 3]);
  SV.paths.forEach((p, j) => {
    if (p.rate_param !== xi) return;
    const x = fx(outServ[p.sustainable]);
    if (!(x >= L && x <= L + w)) return;
    g.strokeStyle = color(j); g.beginPath(); g.moveTo(x, T); g.lineTo(x, T + h); g.stroke();
  });
  // the SLO's targets
  g.setLineDash([8, 4]); g.strokeStyle = "#000"; g.lineWidth = 1.5; g.fillStyle = "#000"; g.textAlign = "right"; g.textBaseline = "bottom";
  for (const v of new Set(levels)) { const y = Math.round(fy(v)) + 0.5; g.beginPath(); g.moveTo(L, y); g.lineTo(L + w, y); g.stroke(); g.fillText("SLO " + fmt(v, TIME), L + w - 4, y - 2); }
  g.setLineDash([4, 4]); g.strokeStyle = "#000"; g.lineWidth = 1;
  const cx = fx(vals[xi]); g.beginPath(); g.moveTo(cx, T); g.lineTo(cx, T + h); g.stroke();
  g.restore();
  g.setLineDash([]); g.strokeStyle = "#222"; g.lineWidth = 1; g.strokeRect(L + 0.5, T + 0.5, w - 1, h - 1);
}

function computeServingCurves() {
  const xi = SV.x, m = SV.paths.length;
  svCurve.x = samples(xi, CURVE_POINTS);
  const n = svCurve.x.length, checked = boundsOf[xi].length > 0;
  for (const k of ["ttft", "ttftP", "tpot"]) if (svCurve[k].length !== m) svCurve[k] = SV.paths.map(() => new Float64Array(CURVE_POINTS));
  work.set(vals);
  for (let k = 0; k < n; k++) {
    work[xi] = svCurve.x[k];
    const ok = !checked || allowed(work, [xi]);
    if (ok) evalServing(work, outServ);
    SV.paths.forEach((p, j) => {
      const over = !ok || overCapacity(p, outServ);
      svCurve.ttft[j][k] = over ? NaN : outServ[p.terms.ttft];
      svCurve.ttftP[j][k] = over ? NaN : outServ[p.terms.ttft_p];
      svCurve.tpot[j][k] = over ? NaN : outServ[p.terms.tpot];
    });
  }
  evalServing(vals, outServ);  // the current values again, for the tables and the capacity lines
}

const CAP_KEYS = [["prefill", "prefill"], ["decode", "decode"], ["link", "link"], ["colocated", "colocated"]];
const LAT_KEYS = [["prefill_utilisation", "prefill rho"], ["link_utilisation", "link rho"], ["ttft", "TTFT"], ["ttft_p", "TTFT p"], ["tpot", "TPOT"], ["e2e", "e2e"], ["e2e_p", "e2e p"],
  ["energy_per_token", "energy/token"]];
let svCaps = null, svLat = null;

view({
  name: "serving",
  build() {
    SV.paths.forEach((p) => { p.nameText = decoded(p.name); });
    const withRate = SV.paths.find((p) => p.rate_param !== null);
    SV.x = withRate ? withRate.rate_param : null;
    const legend = $("serving-legend");
    SV.paths.forEach((p, j) => legend.append(el("li", { "data-path": p.nameText }, swatch(color(j)) + p.label)));
    if (SV.x === null) {
      for (const id of ["sv-ttft", "sv-tpot"]) $(id).remove();
      $("serving-caption").textContent = "No workload's rate is a param: declare one (param rate = 4 req/s in 0.5 req/s .. 12 req/s) to draw TTFT and TPOT against it.";
    } else {
      svTtftChart = chart($("sv-ttft"), 0.45, 220, 380, () => drawServing(svTtftChart, "ttft"));
      svTpotChart = chart($("sv-tpot"), 0.45, 220, 380, () => drawServing(svTpotChart, "tpot"));
      const others = SV.paths.filter((p) => p.rate_param !== SV.x).length;
      $("serving-caption").textContent = "Against " + P[SV.x].nameText + ", the other params as set. TTFT: solid, the mean; dashed, at the SLO's percentile. Dotted: each path's sustainable rate; beyond it the queues do not settle (unstable: not drawn). Dashed black: the SLO's target." +
        (others ? " " + others + " path(s) whose rate is another param are not drawn." : "");
    }
    const box = $("serving-box");
    const caps = CAP_KEYS.filter(([k]) => SV.paths.some((p) => p.caps.some(([c]) => c === k)));
    svCaps = grid(box, "path", [...caps.map(([k, l]) => ["cap:" + k, l]), ["sustainable", "sustainable"], ["binding", "binding"], ["goodput", "goodput"], ["goodput_set_by", "goodput set by"]]);
    svCaps.table.id = "serving-capacity";
    svCaps.keys = caps.map(([k]) => k);
    svLat = grid($("serving-latency-box"), "path", [["rate", "rate"], ["state", "state"], ...LAT_KEYS]);
    svLat.table.id = "serving-latency";
    SV.paths.forEach((p, j) => {
      const head = swatch(color(j)) + p.label;
      svRows.push({ cap: svCaps.row(head, { "data-path": p.nameText }), lat: svLat.row(head, { "data-path": p.nameText }) });
    });
  },
  update() {
    if (SV.x !== null) { computeServingCurves(); drawServing(svTtftChart, "ttft"); drawServing(svTpotChart, "tpot"); } else evalServing(vals, outServ);
    const o = outServ;
    SV.paths.forEach((p, j) => {
      const { cap, lat } = svRows[j], over = overCapacity(p, o), bind = bindingCap(p, o), slo = sloValues(p, vals);
      for (const k of svCaps.keys) {
        const td = cap["cap:" + k], i = p.caps.find(([c]) => c === k);
        if (!i) { setText(td, "-"); continue; }
        if (!Object.is(td._v, o[i[1]])) { td._v = o[i[1]]; setData(td, "value", String(o[i[1]])); setText(td, reqs(o[i[1]])); }
        td.classList.toggle("binding", k === bind);
      }
      const su = cap.sustainable;
      if (!Object.is(su._v, o[p.sustainable])) { su._v = o[p.sustainable]; setData(su, "value", String(o[p.sustainable])); setText(su, reqs(o[p.sustainable])); }
      setData(cap.binding, "value", bind); setText(cap.binding, bind);
      setData(lat.rate, "value", String(o[p.rate])); setText(lat.rate, reqs(o[p.rate]));
      setData(lat.state, "value", over ? "over" : "stable");
      setText(lat.state, over ? "unstable: over capacity" : "stable");
      lat.state.classList.toggle("bad", over);
      for (const [k] of LAT_KEYS) {
        const td = lat[k], v = termOf(p, o, k, over);
        if (v === null) { setText(td, "-"); continue; }
        if (Object.is(td._v, v)) continue;
        td._v = v; setData(td, "value", String(v));
        const dim = k.endsWith("utilisation") ? ONE : k === "energy_per_token" ? ENERGY : TIME;
        setText(td, v === Infinity ? "over capacity" : fmt(v, dim));
        const target = slo && (k === "ttft_p" ? slo.ttft : k === "tpot" ? slo.tpot : k === "e2e_p" ? slo.e2e : null);
        td.classList.toggle("bad", target !== null && target !== undefined && !(v <= target));
      }
      const q = slo && slo.q;
      if (q !== null && q !== undefined) { setData(lat.ttft_p, "label", "TTFT p" + pyG(100 * q)); setData(lat.e2e_p, "label", "e2e p" + pyG(100 * q)); }
    });
    svState.done = false;
    clearTimeout(svState.timer);
    svState.timer = setTimeout(computeGoodput, 0);
  },
});

function computeGoodput() {
  svState.goodput = SV.paths.map((_, j) => goodput(j));
  SV.paths.forEach((p, j) => {
    const gp = svState.goodput[j], { cap } = svRows[j];
    if (!gp) { setText(cap.goodput, "-"); setText(cap.goodput_set_by, "-"); return; }
    setData(cap.goodput, "value", String(gp.value)); setText(cap.goodput, reqs(gp.value));
    setData(cap.goodput_set_by, "value", gp.by); setText(cap.goodput_set_by, gp.by);
  });
  svState.done = true;
}
