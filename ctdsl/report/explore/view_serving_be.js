// ---- serving: break-evens of two hand-offs --------------------------------------------------
// Each `breakeven h1 vs h2 over p on M` of the spec (docs/serving.md): the workload's paths through the
// two hand-offs compared on M (TTFT, TTFT at the percentile, end to end, or energy per output token: a
// term of evalServing), the other params as set, found as solve finds it
// (ctdsl.symbolic.serving_breakeven): the forms hold only where both paths' queues settle, so the range
// of p is first narrowed to the widest run of settled points of a scan of SETTLE_STEPS intervals
// (roots.grid), each end of the run between two points of the scan bisected as roots.bisect bisects
// (60 halvings, the geometric middle on a log range); then M_x - M_y is scanned at scan_steps + 1 points
// over that run and each sign change bisected to the last bit of a double (solve finds the same roots
// exactly, or by Brent's method to a few units in the last place). Computed just after each redraw, as
// goodput is, so that a move stays fast.
const HB = SV ? SV.breakevens : [];
const HB_BISECTIONS = 60;
const hbState = { res: [], done: false, timer: 0 };
const hbRows = [];
const hbOut = new Float64Array(Math.max(1, NSV));
const hbWork = new Float64Array(NP);

// roots.grid: n + 1 points from lo to hi, log-spaced on a log range (both ends exact)
function hbGrid(lo, hi, n, log) {
  const xs = new Float64Array(n + 1), r = Math.log(hi / lo);
  for (let k = 0; k <= n; k++) xs[k] = log && lo > 0 ? lo * Math.exp(r * k / n) : lo + (hi - lo) * k / n;
  xs[0] = lo; xs[n] = hi;
  return xs;
}
const hbMid = (a, b, log) => (log ? Math.sqrt(a * b) : (a + b) / 2);  // roots.midpoint
// roots.bisect: where `stays` (true at a, false at b) turns false; the bracket's last midpoint
function hbBisect(a, b, stays, log) {
  for (let k = 0; k < HB_BISECTIONS; k++) {
    const m = hbMid(a, b, log);
    if (m === a || m === b) break;
    if (stays(m)) a = m; else b = m;
  }
  return hbMid(a, b, log);
}

// the break-even `hb` at the values `base` (the current ones by default):
// { roots: [{ value, below, above }], lo, hi (who is lower at each end of the settled run),
//   range: [a, c] (the run solved over), settled (solve's note when the run is not the whole range),
//   nowhere (the queues settle at no point of the range: solve's reason) }
function handoffBreakeven(hb, base) {
  const p = P[hb.over], px = SV.paths[hb.x], py = SV.paths[hb.y], o = hbOut, w = hbWork;
  const log = hb.log, show = (v) => fmt(v, p.dim);
  w.set(base || vals);
  const at = (v) => { w[hb.over] = v; evalServing(w, o); return o; };
  const ok = (v) => { at(v); return !overCapacity(px, o) && !overCapacity(py, o); };
  const xs = hbGrid(hb.lo, hb.hi, SV.settle_steps, log), n = xs.length;
  const runs = [];
  let prev = false;
  for (let k = 0; k < n; k++) {
    const g = ok(xs[k]);
    if (g && !prev) runs.push([k, k]); else if (g) runs[runs.length - 1][1] = k;
    prev = g;
  }
  if (!runs.length) {
    return { roots: [], lo: null, hi: null, range: [hb.lo, hb.hi], settled: null,
      nowhere: "the queues of " + decoded(hb.workload) + "'s path through " + decoded(hb.hx) + " or " + decoded(hb.hy) + " do not settle at any " +
        p.nameText + " in its range, " + show(hb.lo) + " to " + show(hb.hi) };
  }
  let best = runs[0];
  for (const r of runs) if (r[1] - r[0] > best[1] - best[0]) best = r;  // the widest, the first of equals (solve's max)
  // serving_breakeven._edge: the settled point nearest the edge (the bisection's last midpoint may be unsettled)
  const edge = (inside, outside) => {
    let m = hbBisect(inside, outside, ok, log), step = (outside - inside) * 1e-9;
    for (let k = 0; k < 200 && !ok(m); k++) { m -= step; step *= 2; }
    return m;
  };
  const [i, j] = best;
  const a = i === 0 ? xs[0] : edge(xs[i], xs[i - 1]), c = j === n - 1 ? xs[n - 1] : edge(xs[j], xs[j + 1]);
  const settled = a === hb.lo && c === hb.hi ? null
    : "the queues of both paths settle only for " + p.nameText + " from " + show(a) + " to " + show(c) + (runs.length === 1 ? "" : " (the widest such run)");
  const diff = (v) => { at(v); return o[px.terms[hb.term]] - o[py.terms[hb.term]]; };
  const pts = hbGrid(a, c, D.scan_steps, log), ds = Float64Array.from(pts, diff);
  const roots = scanRoots(diff, pts, ds);
  const who = (d) => (d < 0 ? decoded(hb.hx) : d > 0 ? decoded(hb.hy) : "neither");
  const edges = [a].concat(roots, [c]);
  const mid = (u, v) => hbMid(u, v, u > 0 && v > 0);  // breakeven._mid: where each side is read
  return {
    roots: roots.map((x, k) => ({ value: x, below: who(diff(mid(edges[k], edges[k + 1]))), above: who(diff(mid(edges[k + 1], edges[k + 2]))) })),
    lo: who(ds[0]), hi: who(ds[ds.length - 1]), range: [a, c], settled, nowhere: null,
  };
}

function showHandoffBreakevens() {
  HB.forEach((hb, k) => {
    const li = hbRows[k], r = hbState.res[k], over = P[hb.over], code = (t) => "<code>" + t + "</code>";
    const head = "<strong>" + SV.paths[hb.x].handoff + "</strong> vs <strong>" + SV.paths[hb.y].handoff + "</strong> (" + code(hb.hx) + " vs " + code(hb.hy) +
      ", workload " + code(hb.workload) + ") on " + hb.words + " over " + code(over.name) + ": ";
    setData(li, "roots", JSON.stringify(r.roots.map((x) => x.value)));
    setData(li, "range", JSON.stringify(r.range));
    setData(li, "lo", r.lo === null ? "" : r.lo);
    setData(li, "hi", r.hi === null ? "" : r.hi);
    setData(li, "settled", r.settled || "");
    const note = r.settled ? "; " + html(r.settled) : "";
    if (r.nowhere) { setHTML(li, head + "never in range: " + html(r.nowhere)); return; }
    if (!r.roots.length) {
      setHTML(li, head + "never in range (" + fmt(r.range[0], over.dim) + " .. " + fmt(r.range[1], over.dim) + "): " +
        (r.lo === r.hi ? code(html(r.lo)) + " is " + hb.better + " over all of it" : "no crossing found") + note);
      return;
    }
    setHTML(li, head + r.roots.map((x) => code(over.name) + " = " + fmt(x.value, over.dim, 6) + ": " + code(html(x.below)) + " " + hb.better + " below, " +
      code(html(x.above)) + " above").join("; ") + note);
  });
}
// text made here from names the page decoded, encoded again for innerHTML
function html(t) { const d = document.createElement("div"); d.textContent = t; return d.innerHTML; }

function computeHandoffBreakevens() {
  hbState.res = HB.map((hb) => handoffBreakeven(hb));
  showHandoffBreakevens();
  hbState.done = true;
}

view({
  name: "handoff-breakevens",
  build() {
    const box = $("sv-be-list");
    HB.forEach((hb) => {
      const li = el("li", { "data-k": String(hb.k), "data-x": decoded(hb.hx), "data-y": decoded(hb.hy), "data-workload": decoded(hb.workload),
        "data-over": P[hb.over].nameText, "data-on": hb.on });
      box.append(li);
      hbRows.push(li);
    });
  },
  update() {
    hbState.done = false;
    clearTimeout(hbState.timer);
    hbState.timer = setTimeout(computeHandoffBreakevens, 0);
  },
});
