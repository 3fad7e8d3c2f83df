// ---- against one param: each scheme's curve, the current value, the break-evens ------------
// The value axis is padded, so that a flat curve at the top or the bottom is drawn inside the
// frame; a point where the values break a checker's bound on the swept param is not drawn.
const curveData = S.map(() => new Float64Array(CURVE_POINTS));
let xsCurve = new Float64Array(0);
let curveChart = null;
let drawnObserved = [];  // the observed points drawn, with where (CSS px), for tests and readers
const beRows = [];

function drawCurves() {
  const c = curveChart, g = c.context(), W = c.W, H = c.H;
  const R = 18, T = 12, B = 46, h = H - T - B;
  const xi = state.x, px = P[xi], [qk, qdim, qname] = QUANT.get(state.q);
  g.clearRect(0, 0, W, H);
  g.fillStyle = "#fff"; g.fillRect(0, 0, W, H);
  let lo = Infinity, hi = -Infinity;
  const n = xsCurve.length;
  for (const arr of curveData) for (let k = 0; k < n; k++) { const v = arr[k]; if (Number.isFinite(v)) { if (v < lo) lo = v; if (v > hi) hi = v; } }
  for (const o of observedFor(xi)) if (o.q === state.q && lo <= hi && o.x >= px.lo && o.x <= px.hi) { lo = Math.min(lo, o.value); hi = Math.max(hi, o.value); }  // the measured points in view
  g.fillStyle = "#222";
  if (!(lo <= hi)) { g.fillText("no " + qname + " to draw", 20, H / 2); return; }
  const ylog = lo > 0 && hi / lo > 20;
  if (lo === hi) { lo = lo * 0.9 || -1; hi = hi * 1.1 || 1; }
  // a margin of 6% of the span (of its logarithm on a log axis) below and above the values
  if (ylog) { const f = Math.pow(hi / lo, 0.06); lo /= f; hi *= f; } else { const m = 0.06 * (hi - lo); lo -= m; hi += m; }
  const yt = ticks(lo, hi, ylog, qdim, Math.max(3, Math.floor(h / 36))), ylab = (t) => fmt(t, qdim);
  const L = leftMargin(g, yt.map(ylab)), w = W - L - R;
  c.plot(L, T, w, h);
  const fx = axis(px.lo, px.hi, px.log, L, L + w), fy = axis(lo, hi, ylog, T + h, T);
  const xt = ticks(px.lo, px.hi, px.log, px.dim, room(w, 9));
  g.strokeStyle = "#e3e3e3"; g.lineWidth = 1;
  for (const t of xt) { const x = Math.round(fx(t)) + 0.5; g.beginPath(); g.moveTo(x, T); g.lineTo(x, T + h); g.stroke(); }
  for (const t of yt) { const y = Math.round(fy(t)) + 0.5; if (y < T || y > T + h) continue; g.beginPath(); g.moveTo(L, y); g.lineTo(L + w, y); g.stroke(); }
  drawAxes(g, L, T, w, h,
    { ticks: xt, at: fx, label: (t) => fmt(t, px.dim), title: px.nameText + (px.unit ? " (" + px.unitText + ")" : "") + (px.log ? ", log" : "") },
    { ticks: yt, at: fy, label: ylab, title: qname + (ylog ? ", log" : "") });
  g.save(); g.beginPath(); g.rect(L, T, w, h); g.clip();
  g.lineWidth = 2;
  curveData.forEach((arr, j) => {
    g.strokeStyle = color(j); g.beginPath();
    let pen = false;
    for (let k = 0; k < n; k++) {
      const v = arr[k];
      if (!Number.isFinite(v) || (ylog && v <= 0)) { pen = false; continue; }
      const x = fx(xsCurve[k]), y = fy(v);
      if (pen) g.lineTo(x, y); else g.moveTo(x, y);
      pen = true;
    }
    g.stroke();
  });
  g.setLineDash([4, 4]); g.strokeStyle = "#000"; g.lineWidth = 1;
  const cx = fx(vals[xi]); g.beginPath(); g.moveTo(cx, T); g.lineTo(cx, T + h); g.stroke();
  g.setLineDash([]);
  D.breakevens.forEach((b, k) => {
    if (b.over !== xi || b.missing || (b.on !== "time" && b.on !== state.q)) return;
    for (const r of frame.be[k].roots) {
      const x = fx(r.value);
      g.strokeStyle = color(b.x); g.lineWidth = 1.5;
      g.beginPath(); g.moveTo(x, T); g.lineTo(x, T + h); g.stroke();
      g.beginPath(); g.moveTo(x - 5, T); g.lineTo(x + 5, T); g.lineTo(x, T + 8); g.closePath(); g.fillStyle = color(b.x); g.fill();
    }
  });
  // the targets on this quantity over this param: the level, dashed, and a ring at each root
  D.targets.forEach((t, k) => {
    if (t.q !== state.q || t.over !== xi || !frame.targets[k]) return;
    const y = fy(t.value);
    g.setLineDash([2, 3]); g.strokeStyle = color(t.scheme); g.lineWidth = 1;
    g.beginPath(); g.moveTo(L, y); g.lineTo(L + w, y); g.stroke(); g.setLineDash([]);
    for (const r of frame.targets[k]) { g.beginPath(); g.arc(fx(r.value), y, 4, 0, 2 * Math.PI); g.stroke(); }
  });
  drawnObserved = [];
  for (const o of observedFor(xi)) if (o.q === state.q) {  // the observed points (view_scenarios.js), measured values
    const x = fx(o.x), y = fy(o.value);
    if (!(x >= L && x <= L + w && y >= T && y <= T + h)) continue;
    drawnObserved.push({ x: o.x, value: o.value, scheme: o.scheme, here: o.here, px: x, py: y });
    g.fillStyle = color(o.scheme); g.strokeStyle = "#000"; g.lineWidth = 1;
    g.beginPath(); g.moveTo(x, y - 6); g.lineTo(x + 6, y); g.lineTo(x, y + 6); g.lineTo(x - 6, y); g.closePath();
    if (o.here) g.fill(); g.stroke();
  }
  g.restore();
  g.strokeStyle = "#222"; g.lineWidth = 1; g.strokeRect(L + 0.5, T + 0.5, w - 1, h - 1);
}

function computeCurves() {
  const xi = state.x, fq = QFUN.get(state.q);
  xsCurve = samples(xi, CURVE_POINTS);
  const checked = boundsOf[xi].length > 0;
  work.set(vals);
  for (let k = 0; k < xsCurve.length; k++) {
    work[xi] = xsCurve[k];
    const ok = !checked || allowed(work, [xi]);
    if (ok) fq(work, outQ);
    for (let j = 0; j < S.length; j++) curveData[j][k] = ok ? outQ[j] : NaN;
  }
}

view({
  name: "curves",
  build() {
    if (NP === 0) return;
    for (const id of ["x-param"]) { const sel = $(id); P.forEach((p, i) => sel.append(el("option", { value: String(i) }, p.name))); }
    for (const [k, [, , words]] of QUANT) $("quantity").append(el("option", { value: k }, words));
    $("x-param").addEventListener("change", (e) => { state.x = +e.target.value; update(); });
    $("quantity").addEventListener("change", (e) => { state.q = e.target.value; update(); });
    const legend = $("legend");
    S.forEach((s, j) => legend.append(el("li", {}, swatch(color(j)) + s.label)));
    curveChart = chart($("curve"), 0.5, 240, 420, drawCurves);
  },
  sync() {
    if (NP === 0) return;
    $("x-param").value = String(state.x);
    $("quantity").value = state.q;
  },
  update() {
    if (NP === 0) return;
    computeCurves();
    drawCurves();
  },
});

view({
  name: "breakevens",
  build() {
    const box = $("be-list");
    D.breakevens.forEach((b) => {
      const li = el("li", { "data-k": String(b.k), "data-x": decoded(S[b.x].name), "data-y": decoded(S[b.y].name), "data-over": P[b.over].nameText, "data-on": b.on });
      box.append(li);
      beRows.push(li);
    });
    if (!D.breakevens.length) box.append(el("li", {}, "No break-even asked in this spec."));
  },
  update(f) {
    D.breakevens.forEach((b, k) => {
      const li = beRows[k], over = P[b.over], head = "<strong>" + S[b.x].label + "</strong> vs <strong>" + S[b.y].label + "</strong>" +
        (b.on !== "time" ? " on " + QUANT.get(b.on)[2] : "") + " over <code>" + over.name + "</code>: ";
      if (b.missing) { setHTML(li, head + b.missing); li.dataset.roots = "[]"; return; }
      const r = f.be[k];
      li.dataset.roots = JSON.stringify(r.roots.map((x) => x.value));
      if (!r.roots.length) {
        setHTML(li, head + "never in range (" + fmt(over.lo, over.dim) + " .. " + fmt(over.hi, over.dim) + "): " +
          (r.lo === r.hi ? "<code>" + r.lo + "</code> is " + b.better + " over all of it" : "no crossing found"));
        return;
      }
      setHTML(li, head + r.roots.map((x) => "<code>" + over.name + "</code> = " + fmt(x.value, over.dim, 6) + ": <code>" + x.below + "</code> " + b.better + " below, <code>" + x.above + "</code> above").join("; "));
    });
  },
});
