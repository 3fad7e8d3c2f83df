// ---- the winner map: who reaches the target first over two params, on ticked axes ----------
// One time-to-target evaluation per point (n x n), one pixel per point on a small canvas drawn
// scaled up into the plot; the boundaries between winners in black; the ring marks the values.
// A point where the values break a checker's bound on either axis' param is left blank.
let mapWinners = new Int16Array(0);
const mapCanvas = document.createElement("canvas");
let mapImage = null, mapChart = null, mapXs = null, mapYs = null;
// each scheme's colour, lightened, as one little-endian RGBA word of an ImageData
const tints = D.palette.map((c) => {
  const [r, g, b] = [1, 3, 5].map((k) => parseInt(c.slice(k, k + 2), 16)).map((v) => Math.round(v + (255 - v) * 0.45));
  return ((255 << 24) | (b << 16) | (g << 8) | r) >>> 0;
});
const tintCss = (j) => "#" + [0, 8, 16].map((s) => ((tints[j] >>> s) & 255).toString(16).padStart(2, "0")).join("");

// The winners depend on every param but the two of the axes: when only those moved (or nothing), the
// map computed last is the map, and only the ring moves.
let mapKey = "";
function computeMap() {
  const n = state.n, ix = state.mx, iy = state.my;
  const key = [n, ix, iy, ...Array.from(vals, (v, i) => (i === ix || i === iy ? 0 : v))].join(",");
  if (key === mapKey && mapWinners.length === n * n) { parts.mapEval = 0; return; }
  mapKey = key;
  if (mapWinners.length !== n * n) mapWinners = new Int16Array(n * n);
  mapXs = samplesAt(ix, n); mapYs = samplesAt(iy, n);
  // the bounds on the axes' params: one naming only x is tested once a column, only y once a row,
  // both (or either with others) at each point
  const ks = [...new Set([...boundsOf[ix], ...boundsOf[iy]])];
  const only = (k, i) => CK.list[k].params.every((q) => q === i);
  const colOk = new Uint8Array(n).fill(1), rowOk = new Uint8Array(n).fill(1), each = [];
  work.set(vals);
  for (const k of ks) {
    if (only(k, ix)) { for (let c = 0; c < n; c++) { work[ix] = mapXs[c]; if (!keeps(k, work)) colOk[c] = 0; } }
    else if (only(k, iy)) { for (let r = 0; r < n; r++) { work[iy] = mapYs[r]; if (!keeps(k, work)) rowOk[r] = 0; } }
    else each.push(k);
  }
  const ts = S.map((s, j) => j), ns = ts.length;
  work.set(vals);
  const tEval = performance.now();
  for (let r = 0; r < n; r++) {
    work[iy] = mapYs[r];
    for (let c = 0; c < n; c++) {
      work[ix] = mapXs[c];
      if (!rowOk[r] || !colOk[c] || (each.length && !each.every((k) => keeps(k, work)))) { mapWinners[r * n + c] = -2; continue; }
      evalTimes(work, outTimes);
      let best = Infinity, w = -1;
      for (let j = 0; j < ns; j++) { const t = outTimes[ts[j]]; if (t < best) { best = t; w = j; } }
      mapWinners[r * n + c] = w;
    }
  }
  parts.mapEval = performance.now() - tEval;  // of the map's time, the evaluation
}
// n points over a param's range, evenly (in log on a log range); a count's rounded to whole numbers
function samplesAt(i, n) {
  const out = new Float64Array(n);
  for (let k = 0; k < n; k++) { const v = fromFrac(i, k / (n - 1)); out[k] = P[i].whole ? Math.round(v) : v; }
  return out;
}

function drawMap() {
  const c = mapChart, g = c.context(), n = state.n, ix = state.mx, iy = state.my;
  const px_ = P[ix], py = P[iy], R = 12, T = 10, B = 46, h = c.H - T - B;
  const yt = ticks(py.lo, py.hi, py.log, py.dim, Math.max(3, Math.floor(h / 40))), ylab = (t) => fmt(t, py.dim);
  const L = leftMargin(g, yt.map(ylab)), w = c.W - L - R;
  c.plot(L, T, w, h);
  g.clearRect(0, 0, c.W, c.H);
  g.fillStyle = "#fff"; g.fillRect(0, 0, c.W, c.H);
  if (mapCanvas.width !== n) { mapCanvas.width = n; mapCanvas.height = n; mapImage = null; }
  const mg = mapCanvas.getContext("2d");
  if (mapImage === null) mapImage = mg.createImageData(n, n);
  const px = new Uint32Array(mapImage.data.buffer);
  for (let r = 0; r < n; r++) {
    const row = (n - 1 - r) * n;
    for (let k = 0; k < n; k++) { const win = mapWinners[r * n + k]; px[row + k] = win >= 0 ? tints[win] : 0xffffffff; }
  }
  mg.putImageData(mapImage, 0, 0);
  const cw = w / n, ch = h / n;
  g.imageSmoothingEnabled = false;
  g.drawImage(mapCanvas, L, T, w, h);
  // the boundaries between winners, each straight run of cell edges as one line
  g.strokeStyle = "#000"; g.lineWidth = 1.5; g.beginPath();
  for (let k = 0; k + 1 < n; k++) {  // between columns k and k + 1
    let from = -1;
    for (let r = 0; r <= n; r++) {
      const edge = r < n && mapWinners[r * n + k] !== mapWinners[r * n + k + 1];
      if (edge && from < 0) from = r;
      if (!edge && from >= 0) { const x = L + (k + 1) * cw; g.moveTo(x, T + (n - from) * ch); g.lineTo(x, T + (n - r) * ch); from = -1; }
    }
  }
  for (let r = 0; r + 1 < n; r++) {  // between rows r and r + 1
    let from = -1;
    for (let k = 0; k <= n; k++) {
      const edge = k < n && mapWinners[r * n + k] !== mapWinners[(r + 1) * n + k];
      if (edge && from < 0) from = k;
      if (!edge && from >= 0) { const y = T + (n - 1 - r) * ch; g.moveTo(L + from * cw, y); g.lineTo(L + k * cw, y); from = -1; }
    }
  }
  g.stroke();
  // the axes: each cell's centre is its point, so the values run from the first cell's centre to the last's
  const fx = axis(px_.lo, px_.hi, px_.log, L + cw / 2, L + w - cw / 2), fy = axis(py.lo, py.hi, py.log, T + h - ch / 2, T + ch / 2);
  drawAxes(g, L, T, w, h,
    { ticks: ticks(px_.lo, px_.hi, px_.log, px_.dim, room(w, 9)), at: fx, label: (t) => fmt(t, px_.dim), title: px_.nameText + (px_.unit ? " (" + px_.unitText + ")" : "") + (px_.log ? ", log" : "") },
    { ticks: yt, at: fy, label: ylab, title: py.nameText + (py.unit ? " (" + py.unitText + ")" : "") + (py.log ? ", log" : "") });
  g.strokeStyle = "#222"; g.lineWidth = 1; g.strokeRect(L + 0.5, T + 0.5, w - 1, h - 1);
  const mx = fx(vals[ix]), my = fy(vals[iy]);
  g.strokeStyle = "#000"; g.lineWidth = 1.5; g.beginPath(); g.arc(mx, my, 5, 0, 2 * Math.PI); g.stroke();
}

view({
  name: "map",
  build() {
    if (NP < 2) return;
    for (const id of ["map-x", "map-y"]) { const sel = $(id); P.forEach((p, i) => sel.append(el("option", { value: String(i) }, p.name))); }
    $("map-x").addEventListener("change", (e) => { state.mx = +e.target.value; update(); });
    $("map-y").addEventListener("change", (e) => { state.my = +e.target.value; update(); });
    mapChart = chart($("winner"), 1, 260, 460, drawMap);
  },
  sync() {
    if (NP < 2) return;
    $("map-x").value = String(state.mx); $("map-y").value = String(state.my);
  },
  update() {
    if (NP < 2) return;
    computeMap();
    drawMap();
    const n = state.n, ix = state.mx, iy = state.my;
    setText($("map-caption"), "x: " + P[ix].nameText + " " + fmt(P[ix].lo, P[ix].dim) + " .. " + fmt(P[ix].hi, P[ix].dim) + (P[ix].log ? " (log)" : "") +
      "; y: " + P[iy].nameText + " " + fmt(P[iy].lo, P[iy].dim) + " .. " + fmt(P[iy].hi, P[iy].dim) + (P[iy].log ? " (log)" : "") +
      "; " + n + " x " + n + " points; the ring marks the current values.");
    const counts = new Int32Array(S.length + 2);  // -2 (refused), -1 (no finite time), then each scheme
    for (let k = 0; k < mapWinners.length; k++) counts[mapWinners[k] + 2]++;
    let html = "";
    counts.forEach((count, k) => {
      if (!count) return;
      const win = k - 2, txt = win >= 0 ? S[win].label : win === -1 ? "no finite time" : "refused by the checker's bounds";
      html += '<li data-scheme="' + (win >= 0 ? S[win].name : "") + '">' + swatch(win >= 0 ? tintCss(win) : "#fff") + txt + " (" + (100 * count / (n * n)).toFixed(1) + "%)</li>";
    });
    setHTML($("map-legend"), html);
  },
});
