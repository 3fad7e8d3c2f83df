// ---- step time by component: stacked bars on one scale, the binding component outlined ------
const bars = [];
view({
  name: "bars",
  build() {
    const box = $("bars");
    S.forEach((s, j) => {
      const row = el("div", { class: "bar-row", "data-scheme": decoded(s.name) });
      const name = el("div", { class: "bar-name" }, s.label);
      const track = el("div", { class: "bar-track", role: "img" });
      const segs = s.components.map((c, k) => {
        const seg = el("span", { class: "seg", title: s.compText[k], "data-key": s.compKey[k] });
        seg.style.background = compColor(s.ci[k]);
        track.append(seg);
        return seg;
      });
      const note = el("div", { class: "bar-note" });
      row.append(name, track, note);
      box.append(row);
      bars.push({ track, segs, note });
    });
    const legend = $("bars-legend");
    D.components.forEach((c, k) => legend.append(el("li", {}, swatch(compColor(k)) + c)));
  },
  update(f) {
    let top = 0;
    S.forEach((s, j) => { let sum = 0; for (const v of f.comps[j]) if (v > 0) sum += v; if (sum > top) top = sum; });
    S.forEach((s, j) => {
      const b = bars[j], comps = f.comps[j];
      comps.forEach((v, k) => {
        const seg = b.segs[k];
        setWidth(seg, (top > 0 && v > 0 ? (100 * v / top) : 0).toFixed(3) + "%");
        if (seg._binds !== (k === f.bind[j])) { seg._binds = k === f.bind[j]; seg.classList.toggle("binding", seg._binds); }
        setData(seg, "value", String(v));
      });
      setText(b.note, fmt(f.all[s.i.step], TIME) + "; binds: " + bindText(j));
      setData(b.note, "binding", bindKey(j));
      const label = s.components.map((c, k) => s.compText[k] + " " + fmt(comps[k], TIME)).join(", ");
      if (b.track._label !== label) { b.track.setAttribute("aria-label", label); b.track._label = label; }
    });
  },
});

// ---- module stages: the time of each stage of the stream; the slowest binds ----------------
const stages = [];
view({
  name: "stages",
  build() {
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
  },
  update(f) {
    for (const st of stages) {
      const m = S[st.j].module;
      const ts = m.si.map((k) => f.all[k]);
      let bi = 0; ts.forEach((t, k) => { if (t > ts[bi]) bi = k; });
      const top = Math.max(...ts.filter(Number.isFinite), 0);
      st.rows.forEach((r, k) => {
        setWidth(r.bar, (top > 0 ? 60 * ts[k] / top : 0).toFixed(3) + "%");
        setText(r.val, fmt(ts[k], TIME) + (k === bi ? "  binds" : ""));
        setData(r.val, "value", String(ts[k]));
        r.row.classList.toggle("binding", k === bi);
      });
      st.binding = m.stageText[bi];
      setData(st.rows[0].row.parentElement, "binding", st.binding);
      const text = m.breaks.map((b) => {
        const pi = P.findIndex((p) => p.name === b.param);
        const dim = pi >= 0 ? P[pi].dim : b.dim;
        return "beyond <code>" + b.param + "</code> = " + fmt(f.all[b.bi], dim) + ", " + b.then + " binds";
      });
      setHTML(st.breaks, text.length ? "Break points: " + text.join("; ") + "." : "No break point in a param.");
    }
  },
});

// ---- the solve table: one row per scheme, the fastest marked --------------------------------
// Each cell carries its label (data-label), which the narrow layout shows beside the value.
const cells = [];
const TABLE = [["step", "step time"], ["binding", "binds"], ["time", "time to target"], ["energy", "energy to target"],
  ["eps", "energy per step"], ["payload", "payload"], ["wan", "WAN bytes"]];
view({
  name: "table",
  build() {
    const body = $("solve-body");
    S.forEach((s, j) => {
      const tr = el("tr", { "data-scheme": decoded(s.name) });
      tr.append(el("th", { scope: "row" }, swatch(color(j)) + s.label + " <code>" + s.name + "</code>"));
      const row = {};
      for (const [key, label] of TABLE) {
        const td = el("td", { "data-key": key, "data-label": label });
        tr.append(td); row[key] = td;
      }
      row.tr = tr;
      body.append(tr); cells.push(row);
    });
  },
  update(f) {
    const set = (td, v, dim) => { setData(td, "value", String(v)); setText(td, fmt(v, dim)); };
    S.forEach((s, j) => {
      const c = cells[j], o = s.i;
      set(c.step, f.all[o.step], TIME);
      set(c.time, f.all[o.time], TIME);
      set(c.energy, f.all[o.energy], ENERGY);
      set(c.eps, f.all[o.eps], ENERGY);
      set(c.payload, f.all[o.payload], DATA);
      set(c.wan, f.all[o.wan], DATA);
      setText(c.binding, bindText(j));
      setData(c.binding, "value", bindKey(j));
      if (c.tr._winner !== (j === f.winner)) { c.tr._winner = j === f.winner; c.tr.classList.toggle("winner", c.tr._winner); }
    });
    setHTML($("winner-now"), f.winner >= 0 ? "Fastest to target here: <strong>" + S[f.winner].label + "</strong>, " + fmt(f.best, TIME) + "." : S.length ? "No scheme has a time to target." : "");
  },
});

// ---- the equations: MathML, the current values in place of the params on demand ------------
view({
  name: "equations",
  build() {
    $("subst").addEventListener("change", (e) => { state.subst = e.target.checked; showValues(); });
  },
  sync() { $("subst").checked = state.subst; showValues(); },
  update() { if (state.subst) showValues(); },
});
function showValues() {
  for (const m of document.querySelectorAll(".ct-sym")) {
    if (m._orig === undefined) m._orig = m.innerHTML;
    const i = +m.dataset.i;
    m.innerHTML = state.subst ? "<mn>" + sig(vals[i], 6) + "</mn>" : m._orig;
  }
}
