// ctdsl explorer, charts: a canvas sized to its box and sharp on any screen, and ticked axes.
// A chart's canvas is as wide as its box and `ratio` of that high (within minH .. maxH), its
// backing store scaled by the device's pixel ratio; drawing is in CSS pixels, text in 12 px.
const FONT = "12px system-ui, -apple-system, 'Segoe UI', sans-serif";
function chart(cv, ratio, minH, maxH, redraw) {
  const c = { cv, ratio, minH, maxH, W: 0, H: 0 };
  const fit = () => {
    const w = Math.max(160, Math.floor(cv.parentElement.clientWidth));
    const h = Math.round(Math.min(maxH, Math.max(minH, w * ratio)));
    const dpr = window.devicePixelRatio || 1;
    if (w === c.W && h === c.H && c.dpr === dpr) return false;
    c.W = w; c.H = h; c.dpr = dpr;
    cv.width = Math.round(w * dpr); cv.height = Math.round(h * dpr);
    cv.style.width = w + "px"; cv.style.height = h + "px";
    return true;
  };
  fit();
  if (typeof ResizeObserver !== "undefined") new ResizeObserver(() => { if (fit()) redraw(); }).observe(cv.parentElement);
  c.context = () => {
    const g = cv.getContext("2d");
    g.setTransform(c.dpr, 0, 0, c.dpr, 0, 0);
    g.font = FONT;
    return g;
  };
  // the plot's rectangle in CSS pixels, for tests and readers: data-plot="left,top,width,height"
  c.plot = (L, T, w, h) => { cv.dataset.plot = [L, T, w, h].join(","); };
  return c;
}
function axis(lo, hi, log, a, b) {
  if (log) { const l0 = Math.log(lo), l1 = Math.log(hi); return (v) => a + (Math.log(v) - l0) / (l1 - l0) * (b - a); }
  return (v) => a + (v - lo) / (hi - lo) * (b - a);
}
// the scale of the unit an axis is labelled in (ctdsl.units' preferred prefixes), for round ticks
function unitScale(v, dim) {
  const key = dim.join(",");
  const pref = has(D.units, key) ? D.units[key] : null;
  if (!pref || !(v > 0)) return 1;
  for (const [scale] of pref.scales) if (v >= scale * 0.9995) return scale;
  return pref.scales[pref.scales.length - 1][0];
}
// round values over lo .. hi, at most `most` of them
function ticks(lo, hi, log, dim, most) {
  most = Math.max(2, most || 9);
  const out = [];
  const u = unitScale(log ? Math.sqrt(lo * hi) : Math.max(Math.abs(lo), Math.abs(hi)), dim);
  const a = lo / u, b = hi / u;
  if (log) {
    const e0 = Math.floor(Math.log10(a)), e1 = Math.ceil(Math.log10(b));
    const mults = e1 - e0 <= 3 ? [1, 2, 5] : [1];
    for (let e = e0; e <= e1; e++) for (const m of mults) { const v = m * Math.pow(10, e); if (v >= a * (1 - 1e-9) && v <= b * (1 + 1e-9)) out.push(v * u); }
    if (out.length > most) return out.filter((_, k) => k % Math.ceil(out.length / most) === 0);
    return out;
  }
  const span = b - a || 1, step = Math.pow(10, Math.floor(Math.log10(span / 4)));
  const MULTS = [1, 2, 5, 10, 20, 50, 100], inRange = (d) => Math.floor(b / d + 1e-9) - Math.ceil(a / d - 1e-9) + 1;
  let i = MULTS.findIndex((k) => span / (step * k) <= Math.min(6, most));
  if (i < 0) i = MULTS.length - 1;
  // a step that leaves fewer than three ticks in the range (50 ms on 7 .. 130 ms: 50 and 100) takes the next finer one
  while (i > 0 && inRange(step * MULTS[i]) < 3 && inRange(step * MULTS[i - 1]) <= 2 * Math.min(6, most)) i--;
  const d = step * MULTS[i];
  for (let k = Math.ceil(a / d - 1e-9); k * d <= b + 1e-9 * Math.abs(b); k++) out.push(k * d * u);
  return out;
}
// ticks, tick marks and labels along the bottom (x) and left (y) of a plot rectangle
function drawAxes(g, L, T, w, h, xs, ys) {
  g.save();
  g.strokeStyle = "#222"; g.fillStyle = "#222"; g.lineWidth = 1;
  if (xs) {
    g.textAlign = "center"; g.textBaseline = "top";
    const across = g.canvas.width / g.getTransform().a;  // the canvas' width in CSS pixels
    for (const t of xs.ticks) {
      const x = Math.round(xs.at(t)) + 0.5;
      if (x < L - 0.5 || x > L + w + 0.5) continue;
      g.beginPath(); g.moveTo(x, T + h); g.lineTo(x, T + h + 5); g.stroke();
      const text = xs.label(t), half = g.measureText(text).width / 2 + 2;  // kept on the canvas
      g.fillText(text, Math.min(across - half, Math.max(half, x)), T + h + 7);
    }
    if (xs.title) { g.textBaseline = "bottom"; g.fillText(xs.title, L + w / 2, T + h + 38); }
  }
  if (ys) {
    g.textAlign = "right"; g.textBaseline = "middle";
    for (const t of ys.ticks) {
      const y = Math.round(ys.at(t)) + 0.5;
      if (y < T - 0.5 || y > T + h + 0.5) continue;
      g.beginPath(); g.moveTo(L - 5, y); g.lineTo(L, y); g.stroke();
      g.fillText(ys.label(t), L - 7, y);
    }
    if (ys.title) { g.save(); g.translate(12, T + h / 2); g.rotate(-Math.PI / 2); g.textAlign = "center"; g.textBaseline = "middle"; g.fillText(ys.title, 0, 0); g.restore(); }
  }
  g.restore();
}
// the left margin that fits a title and the widest of the y labels
function leftMargin(g, labels) {
  let wide = 0;
  for (const t of labels) wide = Math.max(wide, g.measureText(t).width);
  return Math.ceil(24 + wide + 8);
}
// how many labels of about `chars` characters fit along `px` pixels
const room = (px, chars) => Math.max(2, Math.floor(px / (chars * 7 + 16)));
