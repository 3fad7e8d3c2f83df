"use strict";
// ctdsl explorer, recorded simulation: animates the short run that `ctdsl explore --simulate`
// recorded with the engine of `ctdsl simulate` (ctdsl/simulate/trace.py). Nothing is simulated
// here: this script only replays the recorded numbers. Names are HTML-encoded by ctdsl.
(function () {
  const R = JSON.parse(document.getElementById("ct-sim").textContent);
  const $ = (id) => document.getElementById(id);
  const decoded = (html) => { const t = document.createElement("textarea"); t.innerHTML = html; return t.value; };
  const COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf"];
  const PLAY_MS = 10000; // wall time of a whole run at play speed
  const sel = $("sim-scheme"), play = $("sim-play"), slider = $("sim-time"), canvas = $("sim-canvas");
  const ctx = canvas.getContext("2d");
  const st = { j: 0, t: 0, playing: false, last: null };

  function fmt(x) {
    if (!isFinite(x)) return String(x);
    const m = Math.abs(x);
    if (m !== 0 && (m < 1e-3 || m >= 1e5)) return x.toExponential(3);
    return x.toPrecision(4).replace(/\.?0+$/, "");
  }
  // the simulated mean step over the measured rounds (after the warm-up), as `ctdsl simulate` takes it
  function meanOf(s, upto) {
    let sum = 0, n = 0;
    s.rounds.forEach((r, k) => { if (k >= s.warm && (upto === undefined || r[1] <= upto)) { sum += r[3] * r[2]; n += r[2]; } });
    return n ? sum / n : NaN;
  }
  R.schemes.forEach((s, j) => {
    s.meanShown = meanOf(s);
    const o = document.createElement("option");
    o.value = String(j);
    o.textContent = decoded(s.label);
    sel.append(o);
  });
  $("sim-note").textContent = "One seed (" + R.seed + "), " + R.steps + " measured steps after " + R.warmup +
    " of warm-up, from the start of training (after the background's warm-up); latency " + decoded(R.latency) +
    ". Each loaded WAN direction: its queue (the longest in each slice) and the sync's jobs on it (light: waiting, dark: on the wire).";

  function draw() {
    const s = R.schemes[st.j], W = canvas.width, H = canvas.height, t = st.t, end = s.end || 1;
    ctx.clearRect(0, 0, W, H);
    ctx.font = "12px sans-serif";
    const left = 150, right = W - 230, x = (v) => left + (right - left) * Math.min(1, v / end);
    const nd = s.directions.length, rowH = nd ? Math.min(90, 240 / nd) : 0;
    let y = 10;
    ctx.fillStyle = "#000";
    s.directions.forEach((d, i) => {
      const q = s.queue[i], qmax = Math.max(1, ...q), shown = Math.floor(Math.min(1, t / end) * q.length);
      ctx.fillStyle = "#000";
      ctx.fillText(decoded(d.from) + " \u2192 " + decoded(d.to), 4, y + 14);
      ctx.fillText("\u03c1 " + fmt(d.rho) + ", queue \u2264 " + qmax, 4, y + 30);
      ctx.fillStyle = COLORS[i % COLORS.length];
      const bw = (right - left) / q.length, qh = rowH - 28;
      for (let k = 0; k < shown; k++) { const h = qh * q[k] / qmax; ctx.fillRect(left + k * bw, y + qh - h, Math.max(1, bw), h); }
      for (const [di, a, b, e] of s.jobs) {
        if (di !== i || a > t) continue;
        ctx.fillStyle = "#f2c28c"; ctx.fillRect(x(a), y + qh + 4, Math.max(1, x(Math.min(b, t)) - x(a)), 10);
        if (b < t) { ctx.fillStyle = "#b35900"; ctx.fillRect(x(b), y + qh + 4, Math.max(1, x(Math.min(e, t)) - x(b)), 10); }
      }
      y += rowH;
    });
    // phases of the collective
    ctx.fillStyle = "#000"; ctx.fillText("sync phases", 4, y + 12);
    for (const [, a, b] of s.phases) { if (a > t) continue; ctx.fillStyle = "#7f7f7f"; ctx.fillRect(x(a), y + 2, Math.max(1, x(Math.min(b, t)) - x(a)), 12); }
    y += 24;
    // rounds: alternating bars, warm-up ones hatched grey
    ctx.fillStyle = "#000"; ctx.fillText("rounds", 4, y + 12);
    s.rounds.forEach((r, k) => {
      if (r[0] > t) return;
      ctx.fillStyle = k < s.warm ? "#cccccc" : (k % 2 ? "#6baed6" : "#2171b5");
      ctx.fillRect(x(r[0]), y + 2, Math.max(1, x(Math.min(r[1], t)) - x(r[0])), 12);
    });
    y += 24;
    // the time axis
    ctx.strokeStyle = "#000"; ctx.beginPath(); ctx.moveTo(left, y); ctx.lineTo(right, y); ctx.stroke();
    ctx.fillStyle = "#000"; ctx.fillText("0 s", left, y + 14); ctx.fillText(fmt(end) + " s", right - 40, y + 14);
    ctx.strokeStyle = "#d62728"; ctx.beginPath(); ctx.moveTo(x(t), 0); ctx.lineTo(x(t), y); ctx.stroke();
    // step times building up, beside the closed form and the simulated mean
    const bx = right + 30, bw = W - bx - 10, done = s.rounds.filter((r, k) => k >= s.warm && r[1] <= t);
    const top = Math.max(s.closed, s.meanShown, ...s.rounds.map((r) => r[3])) * 1.1 || 1, bh = H - 40, yv = (v) => 20 + bh * (1 - v / top);
    ctx.fillStyle = "#000"; ctx.fillText("step time per round, s", bx, 12);
    const n = Math.max(1, s.rounds.length - s.warm), w = bw / n;
    done.forEach((r, k) => { ctx.fillStyle = "#2171b5"; ctx.fillRect(bx + k * w, yv(r[3]), Math.max(1, w - 1), yv(0) - yv(r[3])); });
    const line = (v, c, label) => { ctx.strokeStyle = c; ctx.beginPath(); ctx.moveTo(bx, yv(v)); ctx.lineTo(bx + bw, yv(v)); ctx.stroke(); const tw = ctx.measureText(label).width; ctx.fillStyle = "#fff"; ctx.fillRect(bx + bw - tw - 4, yv(v) - 15, tw + 4, 13); ctx.fillStyle = c; ctx.fillText(label, bx + bw - tw - 2, yv(v) - 4); };
    line(s.closed, "#2ca02c", "closed form " + fmt(s.closed));
    if (done.length) line(meanOf(s, t), "#d62728", "simulated mean " + fmt(meanOf(s, t)));
    showText(s, done.length);
  }

  function showText(s, k) {
    const now = $("sim-now");
    now.textContent = "t = " + fmt(st.t) + " s of " + fmt(s.end) + " s";
    now.dataset.value = String(st.t);
    slider.setAttribute("aria-valuetext", fmt(st.t) + " seconds");
    const p = $("sim-steps");
    p.innerHTML = "";
    const add = (text, cls, v) => { const e = document.createElement("span"); e.className = cls; e.textContent = text; if (v !== undefined) e.dataset.value = String(v); p.append(e, " "); };
    add(k + " of " + (s.rounds.length - s.warm) + " measured rounds done;", "sim-done");
    add("simulated mean step " + fmt(s.meanShown) + " s (" + s.steps + " steps);", "sim-mean", s.meanShown);
    add("closed form " + fmt(s.closed) + " s", "sim-closed", s.closed);
    add("(with no load and no jitter " + fmt(s.free) + " s)" + (s.clipped ? "; the recording was cut at its bound." : "."), "sim-free", s.free);
  }

  function setTime(t) {
    const s = R.schemes[st.j];
    st.t = Math.max(0, Math.min(s.end, t));
    slider.value = String(Math.round(1000 * st.t / (s.end || 1)));
    draw();
  }
  function frame(ts) {
    if (!st.playing) return;
    if (st.last !== null) {
      const s = R.schemes[st.j];
      setTime(st.t + s.end * (ts - st.last) / PLAY_MS);
      if (st.t >= s.end) { toggle(false); return; }
    }
    st.last = ts;
    requestAnimationFrame(frame);
  }
  function toggle(on) {
    st.playing = on;
    st.last = null;
    play.textContent = on ? "Pause" : "Play";
    play.setAttribute("aria-pressed", on ? "true" : "false");
    if (on) {
      if (st.t >= R.schemes[st.j].end) setTime(0);
      requestAnimationFrame(frame);
    }
  }
  play.addEventListener("click", () => toggle(!st.playing));
  slider.addEventListener("input", () => { toggle(false); setTime(R.schemes[st.j].end * Number(slider.value) / 1000); });
  sel.addEventListener("change", () => { st.j = Number(sel.value); setTime(0); });
  if (!R.schemes.length) { play.disabled = true; slider.disabled = true; }
  else setTime(0);
  window.ctdslSim = { time: () => st.t, playing: () => st.playing, data: () => R };
})();
