// ---- a break-even against a second param: where two schemes (or hand-offs) tie over one param, as another moves ----
// For each of BE2_POINTS values of the second param (whole numbers for a count), the other params as
// set above, the break-even's roots over its own param (the scan and bisection of core.js, as the list
// of break-evens; for two hand-offs, handoffBreakeven of view_serving_be.js, as the serving view's list).
// Computed after the redraw (it is about 40 break-evens), so that a move stays fast.
const BE2_POINTS = 40;
const be2 = { b: -1, q: -1, xs: [], roots: [], chart: null, timer: 0, done: false };
// the break-evens offered: each of schemes that could be asked, then each of hand-offs (on a page that serves)
const be2List = D.breakevens.filter((b) => !b.missing).map((b) => ({
  over: b.over, colour: b.x, option: S[b.x].name + " vs " + S[b.y].name + " over " + P[b.over].name + (b.on !== "time" ? " on " + b.on : ""),
  names: decoded(S[b.x].name) + " vs " + decoded(S[b.y].name) + (b.on !== "time" ? " on " + QUANT.get(b.on)[2] : ""),
  roots: (base) => breakeven(b, base).roots.map((r) => r.value),
})).concat((D.serving ? D.serving.breakevens : []).map((hb) => ({
  over: hb.over, colour: hb.x, option: hb.hx + " vs " + hb.hy + " (" + hb.workload + ") over " + P[hb.over].name + " on " + hb.on,
  names: decoded(hb.hx) + " vs " + decoded(hb.hy) + " (" + decoded(hb.workload) + ") on " + hb.words,
  roots: (base) => handoffBreakeven(hb, base).roots.map((r) => r.value),
})));
function computeBe2() {
  be2.xs = []; be2.roots = [];
  if (be2.b < 0 || be2.q < 0) return;
  const b = be2List[be2.b], qi = be2.q, base = Float64Array.from(vals);
  for (const x of samples(qi, BE2_POINTS)) {
    base[qi] = x;
    if (boundsOf[qi].length && !allowed(base, [qi])) continue;
    be2.xs.push(x);
    be2.roots.push(b.roots(base));
  }
}
function drawBe2() {
  const c = be2.chart;
  if (!c) return;
  const g = c.context(), W = c.W, H = c.H, R = 18, T = 12, B = 46, h = H - T - B;
  g.clearRect(0, 0, W, H); g.fillStyle = "#fff"; g.fillRect(0, 0, W, H);
  if (be2.b < 0) return;
  const b = be2List[be2.b], py = P[b.over], pq = P[be2.q];
  const yt = ticks(py.lo, py.hi, py.log, py.dim, Math.max(3, Math.floor(h / 36))), ylab = (t) => fmt(t, py.dim);
  const L = leftMargin(g, yt.map(ylab)), w = W - L - R;
  c.plot(L, T, w, h);
  const fx = axis(pq.lo, pq.hi, pq.log, L, L + w), fy = axis(py.lo, py.hi, py.log, T + h, T);
  drawAxes(g, L, T, w, h,
    { ticks: ticks(pq.lo, pq.hi, pq.log, pq.dim, room(w, 9)), at: fx, label: (t) => fmt(t, pq.dim), title: pq.nameText + (pq.unit ? " (" + pq.unitText + ")" : "") + (pq.log ? ", log" : "") },
    { ticks: yt, at: fy, label: ylab, title: py.nameText + " where they tie" + (py.log ? ", log" : "") });
  g.save(); g.beginPath(); g.rect(L, T, w, h); g.clip();
  g.fillStyle = color(b.colour);
  be2.xs.forEach((x, k) => { for (const r of be2.roots[k]) { g.beginPath(); g.arc(fx(x), fy(r), 3, 0, 2 * Math.PI); g.fill(); } });
  g.setLineDash([4, 4]); g.strokeStyle = "#000"; g.lineWidth = 1;
  const cx = fx(vals[be2.q]); g.beginPath(); g.moveTo(cx, T); g.lineTo(cx, T + h); g.stroke(); g.setLineDash([]);
  g.restore();
  g.strokeStyle = "#222"; g.lineWidth = 1; g.strokeRect(L + 0.5, T + 0.5, w - 1, h - 1);
  setText($("be2-caption"), be2.xs.length ? b.names +
    ": the value of " + py.nameText + " where they tie, at " + be2.xs.length + " values of " + pq.nameText + " (a point per root; none: they do not tie in range)" : "");
}
function be2Later() {
  clearTimeout(be2.timer); be2.done = false;
  be2.timer = setTimeout(() => { computeBe2(); drawBe2(); be2.done = true; }, 0);
}
view({
  name: "be2",
  build() {
    const box = $("be2-box");
    if (!be2List.length || NP < 2) { box.append(el("p", { class: "note" }, NP < 2 ? "A break-even against a second param needs two params." : "No break-even asked in this spec.")); return; }
    const sb = $("be2-b"), sq = $("be2-q");
    be2List.forEach((b, k) => sb.append(el("option", { value: String(k) }, b.option)));
    const fillQ = () => {
      sq.innerHTML = "";
      P.forEach((p, i) => { if (i !== be2List[be2.b].over) sq.append(el("option", { value: String(i) }, p.name)); });
      if (be2.q < 0 || be2.q === be2List[be2.b].over) be2.q = +sq.options[0].value;
      sq.value = String(be2.q);
    };
    sb.addEventListener("change", () => { be2.b = +sb.value; fillQ(); be2Later(); });
    sq.addEventListener("change", () => { be2.q = +sq.value; be2Later(); });
    be2.b = 0; fillQ();
    be2.chart = chart($("be2-chart"), 0.5, 220, 380, drawBe2);
  },
  update() { if (be2.chart) be2Later(); },
});
