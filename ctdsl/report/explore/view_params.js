// ---- the params: a slider and a number box each, checked as `ctdsl solve --set` checks a value ----
// A value from the box, the slider or the URL fragment is tested against the checker's bounds
// (core.js: diagnose) before it is taken: a value the checker would refuse is refused at the box,
// with the diagnostic's code, message, place and help, and nothing is redrawn with it.
const controls = [];
function showParam(i) {
  const c = controls[i], p = P[i];
  c.slider.value = String(toPosition(i, vals[i]));
  c.slider.setAttribute("aria-valuetext", fmt(vals[i], p.dim, 6));
  c.num.value = String(vals[i] / p.scale);
}
function showDiagnostics(i, diags) {
  const c = controls[i], errors = diags.filter((d) => d.severity === "error");
  c.num.setAttribute("aria-invalid", errors.length ? "true" : "false");
  c.diag.hidden = !diags.length;
  setHTML(c.diag, diags.map((d) => '<li data-code="' + d.code + '" data-severity="' + d.severity + '"><code class="code">' + d.code + "</code>" +
    (d.severity === "warning" ? " [warning]" : "") + ' <span class="text">' + d.text + '</span> <span class="at">' + d.at + "</span>" +
    (d.help ? ' <span class="help">help: ' + d.help + "</span>" : "") + "</li>").join(""));
}
// try param i at value v (base units): taken (true) or refused with its diagnostics at the box
function offer(i, v) {
  const cand = Float64Array.from(vals);
  cand[i] = v;
  const errors = diagnose(cand, [i]);
  const warn = outsideRange(i, v);
  showDiagnostics(i, errors.concat(warn && !errors.length ? [warn] : []));
  if (errors.length) return false;
  vals[i] = v;
  return true;
}
function clearDiagnostics() { controls.forEach((_, i) => showDiagnostics(i, [])); }

view({
  name: "params",
  build() {
    const box = $("params");
    P.forEach((p, i) => {
      const row = el("div", { class: "param" });
      const unit = p.unit ? " (" + p.unit + ")" : "";
      const lab = el("label", { for: "slider-" + i, id: "label-" + i }, "<code>" + p.name + "</code>" + unit +
        (p.display ? ' <span class="display" title="display name">' + p.display + "</span>" : ""));
      const slider = el("input", { type: "range", id: "slider-" + i, min: "0", max: String(positions(i)), step: "1",
        "aria-labelledby": "label-" + i, "data-param": p.nameText });
      const num = el("input", { type: "number", id: "num-" + i, step: p.whole ? "1" : "any", "aria-label": p.nameText + " in " + (p.unitText || "its unit"),
        "data-param": p.nameText, class: "num", "aria-describedby": "diag-" + i });
      const range = el("span", { class: "range" }, fmt(p.lo, p.dim) + " .. " + fmt(p.hi, p.dim) + (p.log ? " log" : " lin") + (p.whole ? ", whole numbers" : ""));
      const diag = el("ul", { class: "diags", id: "diag-" + i, "aria-live": "polite" });
      diag.hidden = true;
      slider.addEventListener("input", () => {
        const v = atPosition(i, slider.valueAsNumber);
        if (offer(i, v)) { showParam(i); update(); } else num.value = String(v / p.scale);
      });
      const fromBox = () => {
        if (num.value.trim() === "") return;  // not yet a number (a lone "-" reads as empty)
        const v = parseFloat(num.value) * p.scale;
        if (!Number.isFinite(v)) return;
        if (offer(i, v)) {
          slider.value = String(toPosition(i, vals[i]));
          slider.setAttribute("aria-valuetext", fmt(vals[i], p.dim, 6));
          update();
        }
      };
      num.addEventListener("input", fromBox);
      num.addEventListener("change", fromBox);
      row.append(lab, slider, num, range, diag);
      box.append(row);
      controls.push({ slider, num, diag });
    });
    $("play").addEventListener("click", play);
    $("reset").addEventListener("click", reset);
    if (NP === 0) $("play").disabled = true;
  },
  sync() { P.forEach((_, i) => showParam(i)); },
});

// ---- play, reset ------------------------------------------------------------------------
let playing = null;
function play() {
  const btn = $("play");
  if (playing !== null) { cancelAnimationFrame(playing); playing = null; btn.textContent = "Play"; btn.setAttribute("aria-pressed", "false"); return; }
  btn.textContent = "Pause"; btn.setAttribute("aria-pressed", "true");
  const i = state.x, n = positions(i), stride = Math.max(1, Math.round(4 * n / SLIDER_STEPS));
  let pos = toPosition(i, vals[i]);
  const step = () => {
    pos = (pos + stride) % (n + 1);
    if (offer(i, atPosition(i, pos))) { showParam(i); update(); }
    playing = requestAnimationFrame(step);
  };
  playing = requestAnimationFrame(step);
}
function reset() {
  if (playing !== null) play();
  vals.set(start);
  defaultState();
  clearDiagnostics();
  for (const v of views) if (v.sync) v.sync();
  update();
}
