// ---- the recorded simulation (`ctdsl explore --simulate`) ------------------------------------
// Replays the short run that ctdsl recorded with the engine of `ctdsl simulate`
// (ctdsl/simulate/trace.py; its embedding: ctdsl/report/explore/simview.py). Nothing is simulated
// here. The closed form beside it is the solver's step time at the start values (the result tree's).
const SIM = JSON.parse($("ct-sim").textContent);
const SIM_PLAY_MS = 10000; // wall time of a whole run at play speed
// the embedded recording, back to seconds: rounds [start, end, steps, step time], jobs [direction,
// joined, on the wire, off it], phases [name, start, end]
SIM.schemes.forEach((s) => {
  const at = (k) => k * s.tick;
  let t = 0;
  const bounds = s.rounds.map((d) => (t += d));
  s.rounds = bounds.slice(1).map((e, k) => {
    const m = Array.isArray(s.per) ? s.per[k] : s.per;
    return [at(bounds[k]), at(e), m, at(e - bounds[k]) / m];
  });
  s.endS = at(s.end);
  const jobs = [];
  t = 0;
  for (let k = 0; k < s.jobs.length; k += 4) { t += s.jobs[k + 1]; const b = t + s.jobs[k + 2]; jobs.push([s.jobs[k], at(t), at(b), at(b + s.jobs[k + 3])]); }
  s.jobs = jobs;
  const phases = [];
  t = 0;
  for (let k = 0; k < s.phases.length; k += 3) { t += s.phases[k + 1]; phases.push([s.names[s.phases[k]], at(t), at(t + s.phases[k + 2])]); }
  s.phases = phases;
});
const sim = { j: 0, t: 0, playing: false, last: null, line: null, steps: null };
// the simulated mean step over the measured rounds finished by `upto` (after the warm-up)
function simMean(s, upto) {
  let sum = 0, n = 0;
  s.rounds.forEach((r, k) => { if (k >= s.warm && r[1] <= upto) { sum += r[3] * r[2]; n += r[2]; } });
  return n ? sum / n : NaN;
}

const simRowHeight = (nd) => (nd ? Math.max(60, Math.min(90, 240 / nd)) : 0);
function drawSimLine() {
  const c = sim.line, g = c.context(), s = SIM.schemes[sim.j], W = c.W, t = sim.t, end = s.endS || 1;
  const L = 12, R = 16, w = W - L - R, x = (v) => L + w * Math.min(1, Math.max(0, v / end));
  g.clearRect(0, 0, W, c.H);
  g.fillStyle = "#fff"; g.fillRect(0, 0, W, c.H);
  const nd = s.directions.length, rowH = simRowHeight(nd);
  let y = 4;
  s.directions.forEach((d, i) => {
    const q = s.queue[i], qmax = Math.max(1, ...q), shown = Math.floor(Math.min(1, t / end) * q.length);
    g.fillStyle = "#222"; g.textBaseline = "top"; g.textAlign = "left";
    g.fillText(decoded(d.from) + " \u2192 " + decoded(d.to) + ": \u03c1 " + sig(d.rho, 4) + ", queue \u2264 " + qmax, L, y);
    const top = y + 18, qh = rowH - 36;
    g.fillStyle = color(i);
    const bw = w / q.length;
    for (let k = 0; k < shown; k++) { const hq = qh * q[k] / qmax; g.fillRect(L + k * bw, top + qh - hq, Math.max(1, bw), hq); }
    for (const [di, a, b, e] of s.jobs) {
      if (di !== i || a > t) continue;
      g.fillStyle = "#f2c28c"; g.fillRect(x(a), top + qh + 4, Math.max(1, x(Math.min(b, t)) - x(a)), 10);
      if (b < t) { g.fillStyle = "#b35900"; g.fillRect(x(b), top + qh + 4, Math.max(1, x(Math.min(e, t)) - x(b)), 10); }
    }
    y += rowH;
  });
  g.fillStyle = "#222"; g.textBaseline = "top"; g.fillText("sync phases", L, y);
  for (const [, a, b] of s.phases) { if (a > t) continue; g.fillStyle = "#7f7f7f"; g.fillRect(x(a), y + 16, Math.max(1, x(Math.min(b, t)) - x(a)), 12); }
  y += 34;
  g.fillStyle = "#222"; g.fillText("rounds (warm-up in grey)", L, y);
  s.rounds.forEach((r, k) => {
    if (r[0] > t) return;
    g.fillStyle = k < s.warm ? "#cccccc" : (k % 2 ? "#6baed6" : "#2171b5");
    g.fillRect(x(r[0]), y + 16, Math.max(1, x(Math.min(r[1], t)) - x(r[0])), 12);
  });
  y += 34;
  c.plot(L, 0, w, y);
  drawAxes(g, L, 0, w, y, { ticks: ticks(0, end, false, TIME, room(w, 7)), at: x, label: (v) => fmt(v, TIME), title: "time since training started" }, null);
  g.strokeStyle = "#222"; g.beginPath(); g.moveTo(L, y + 0.5); g.lineTo(L + w, y + 0.5); g.stroke();
  g.strokeStyle = "#d62728"; g.beginPath(); g.moveTo(x(t), 0); g.lineTo(x(t), y); g.stroke();
}

function drawSimRounds() {
  const c = sim.steps, g = c.context(), s = SIM.schemes[sim.j], t = sim.t;
  const R = 12, T = 22, B = 40, h = c.H - T - B;
  g.clearRect(0, 0, c.W, c.H);
  g.fillStyle = "#fff"; g.fillRect(0, 0, c.W, c.H);
  const done = s.rounds.filter((r, k) => k >= s.warm && r[1] <= t);
  const top = Math.max(s.closed, s.mean, ...s.rounds.map((r) => r[3])) * 1.1 || 1, yv = axis(0, top, false, T + h, T);
  const yt = ticks(0, top, false, TIME, Math.max(3, Math.floor(h / 36))), ylab = (v) => fmt(v, TIME);
  const L = leftMargin(g, yt.map(ylab)), w = c.W - L - R;
  c.plot(L, T, w, h);
  g.fillStyle = "#222"; g.textAlign = "left"; g.textBaseline = "top"; g.fillText("step time of each measured round", L, 2);
  const n = Math.max(1, s.rounds.length - s.warm), bw = w / n;
  done.forEach((r, k) => { g.fillStyle = "#2171b5"; g.fillRect(L + k * bw, yv(r[3]), Math.max(1, bw - 1), yv(0) - yv(r[3])); });
  const ONE = TIME.map(() => 0);
  drawAxes(g, L, T, w, h, { ticks: ticks(1, n, false, ONE, room(w, 3)).filter((v) => Number.isInteger(v)), at: (v) => L + (v - 0.5) * bw, label: (v) => String(v), title: "measured round" },
    { ticks: yt, at: yv, label: ylab, title: "" });
  g.strokeStyle = "#222"; g.lineWidth = 1; g.strokeRect(L + 0.5, T + 0.5, w - 1, h - 1);
  const line = (v, col, label) => {
    const y = Math.round(yv(v)) + 0.5;
    g.strokeStyle = col; g.lineWidth = 1.5; g.beginPath(); g.moveTo(L, y); g.lineTo(L + w, y); g.stroke();
    const tw = g.measureText(label).width;
    g.fillStyle = "rgba(255,255,255,0.85)"; g.fillRect(L + w - tw - 6, y - 16, tw + 4, 14);
    g.fillStyle = col; g.textAlign = "right"; g.textBaseline = "bottom"; g.fillText(label, L + w - 4, y - 2);
  };
  line(s.closed, "#2ca02c", "closed form " + fmt(s.closed, TIME));
  if (done.length) { const m = simMean(s, t); line(m, "#d62728", "simulated mean so far " + fmt(m, TIME)); }
}

function showSimText() {
  const s = SIM.schemes[sim.j], k = s.rounds.filter((r, i) => i >= s.warm && r[1] <= sim.t).length;
  const now = $("sim-now");
  now.textContent = "t = " + fmt(sim.t, TIME) + " of " + fmt(s.endS, TIME);
  now.dataset.value = String(sim.t);
  $("sim-time").setAttribute("aria-valuetext", fmt(sim.t, TIME));
  const p = $("sim-steps");
  p.innerHTML = "";
  const add = (text, cls, v) => { const e = document.createElement("span"); e.className = cls; e.textContent = text; if (v !== undefined) e.dataset.value = String(v); p.append(e, " "); };
  add(k + " of " + (s.rounds.length - s.warm) + " measured rounds done;", "sim-done");
  add("simulated mean step " + fmt(s.mean, TIME) + " (" + s.steps + " steps);", "sim-mean", s.mean);
  add("closed form " + fmt(s.closed, TIME) + ", as ctdsl solve gives it", "sim-closed", s.closed);
  add("(with no load and no jitter " + fmt(s.free, TIME) + ")" + (s.clipped ? "; the recording was cut at its bound." : "."), "sim-free", s.free);
}
function drawSim() { drawSimLine(); drawSimRounds(); showSimText(); }
function setSimTime(t) {
  const s = SIM.schemes[sim.j];
  sim.t = Math.max(0, Math.min(s.endS, t));
  $("sim-time").value = String(Math.round(1000 * sim.t / (s.endS || 1)));
  drawSim();
}
function simFrame(ts) {
  if (!sim.playing) return;
  if (sim.last !== null) {
    const s = SIM.schemes[sim.j];
    setSimTime(sim.t + s.endS * (ts - sim.last) / SIM_PLAY_MS);
    if (sim.t >= s.endS) { simToggle(false); return; }
  }
  sim.last = ts;
  requestAnimationFrame(simFrame);
}
function simToggle(on) {
  const btn = $("sim-play");
  sim.playing = on;
  sim.last = null;
  btn.textContent = on ? "Pause" : "Play";
  btn.setAttribute("aria-pressed", on ? "true" : "false");
  if (on) {
    if (sim.t >= SIM.schemes[sim.j].endS) setSimTime(0);
    requestAnimationFrame(simFrame);
  }
}

view({
  name: "sim",
  build() {
    const sel = $("sim-scheme"), slider = $("sim-time");
    SIM.schemes.forEach((s, j) => sel.append(el("option", { value: String(j) }, s.label)));
    $("sim-note").textContent = "One seed (" + SIM.seed + "), " + SIM.steps + " measured steps after " + SIM.warmup +
      " of warm-up, from the start of training (after the background's warm-up); latency " + decoded(SIM.latency) +
      ". Each loaded WAN direction: its queue (the longest in each slice) and the sync's jobs on it (light: waiting, dark: on the wire).";
    $("sim-play").addEventListener("click", () => simToggle(!sim.playing));
    slider.addEventListener("input", () => { simToggle(false); setSimTime(SIM.schemes[sim.j].endS * Number(slider.value) / 1000); });
    sel.addEventListener("change", () => { sim.j = Number(sel.value); setSimTime(0); });
    if (!SIM.schemes.length) { $("sim-play").disabled = true; slider.disabled = true; return; }
    const nd = Math.max(0, ...SIM.schemes.map((s) => s.directions.length)), height = 4 + nd * simRowHeight(nd) + 68 + 44;
    sim.line = chart($("sim-canvas"), 0, height, height, () => drawSim());
    sim.steps = chart($("sim-rounds"), 0.6, 220, 360, () => drawSim());
    setSimTime(0);
  },
});
window.ctdslSim = { time: () => sim.t, playing: () => sim.playing, data: () => SIM };
