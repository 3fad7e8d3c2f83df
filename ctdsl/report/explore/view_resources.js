// ---- the job's resources: its size, memory per GPU against the device's, energy per step by part,
// bytes per worker and per class of link. Each value carries its JSON key (data-key) and value.
const memRows = [], energyRows = [], byteRows = [], jobRows = [];
let cellsOf = null;
const energyParts = [...new Set(S.flatMap((s) => s.i.energy_parts.map(([k]) => k)))];
const linkKinds = [...new Set(S.flatMap((s) => s.i.kinds.map(([k]) => k)))];
view({
  name: "resources",
  build() {
    const jb = $("job-box");
    if (S.some((s) => s.i.job)) {
      const g = grid(jb, "scheme", [["sites", "sites"], ["nodes", "nodes"], ["gpus", "GPUs"]]);
      S.forEach((s, j) => jobRows.push(g.row(swatch(color(j)) + s.label + (s.sites ? " <code>" + s.sites + "</code>" : ""), { "data-scheme": decoded(s.name) })));
    }
    const mb = $("memory-box");
    if (!D.memory.length) mb.append(el("p", { class: "note" }, "No model is trained on replicas: no memory per GPU to weigh."));
    else {
      const parts = [...new Set(D.memory.flatMap((m) => m.parts.map(([k]) => k)))];
      const g = grid(mb, "model in dc", [...parts.map((k) => [decoded(k), k]), ["total", "total"], ["capacity", "memory"], ["fits", "fits"]]);
      D.memory.forEach((m) => {
        const c = g.row("<code>" + m.model + "</code> in <code>" + m.dc + "</code>", { "data-model": decoded(m.model), "data-dc": decoded(m.dc) });
        c.diag = el("pre", { class: "diag", hidden: "" });
        mb.append(c.diag);
        memRows.push(c);
      });
      mb.append(el("p", { class: "note" }, [...new Set(D.memory.map((m) => m.dc + ": " + m.note))].join("; ")));
    }
    const eb = $("energy-box");
    const ge = grid(eb, "scheme", [...energyParts.map((k) => [decoded(k), k]), ["eps", "energy per step"]]);
    S.forEach((s, j) => energyRows.push(ge.row(swatch(color(j)) + s.label, { "data-scheme": decoded(s.name) })));
    const bb = $("bytes-box");
    const gb = grid(bb, "scheme", [["dense", "dense update"], ["payload", "payload"], ["wire", "wire / worker"], ["wan", "WAN (busiest link)"],
      ...linkKinds.map((k) => ["kind:" + decoded(k), "on " + k + " links"])]);
    S.forEach((s, j) => byteRows.push(gb.row(swatch(color(j)) + s.label, { "data-scheme": decoded(s.name) })));
    bb.append(el("p", { class: "note" }, "per sync: payload, what a worker originates; wire, what the busiest worker sends under the collective; WAN, bytes on the busiest WAN link, one direction; on each class of link (port, intra, wan), the bytes its links carry, summed."));
  },
  update(f) {
    if (!cellsOf) cellsOf = S.map((s, j) => {  // each value's cell, once: [td, its index in evalAll, its dimension]
      const o = s.i, e = energyRows[j], b = byteRows[j], out = [];
      if (o.job) o.job.forEach((i, k) => out.push([jobRows[j][["gpus", "nodes", "sites"][k]], i, ONE, 12]));
      for (const [k, i] of o.energy_parts) out.push([e[decoded(k)], i, ENERGY]);
      for (const k of energyParts) if (!o.energy_parts.some(([x]) => x === k)) setText(e[decoded(k)], "-");
      out.push([e.eps, o.eps, ENERGY]);
      for (const key of ["dense", "payload", "wire", "wan"]) out.push([b[key], o[key], DATA]);
      for (const [k, i] of o.kinds) out.push([b["kind:" + decoded(k)], i, DATA]);
      for (const k of linkKinds) if (!o.kinds.some(([x]) => x === k)) setText(b["kind:" + decoded(k)], "-");
      return out;
    });
    for (const cells of cellsOf) for (const [td, i, dim, digits] of cells) show(td, f.all[i], dim, digits);
    D.memory.forEach((m, k) => {
      const c = memRows[k];
      if (!c.parts) c.parts = m.parts.map(([p, i]) => [c[decoded(p)], i, decoded(p)]);
      for (const [td, i] of c.parts) show(td, f.all[i], DATA);
      const total = f.all[m.total], cap = m.capacity === null ? NaN : f.all[m.capacity];
      show(c.total, total, DATA); show(c.capacity, cap, DATA);
      const fits = Number.isNaN(cap) || Number.isNaN(total) ? null : total <= cap;
      setData(c.fits, "value", String(fits));
      setText(c.fits, fits === null ? "-" : fits ? "yes" : "no: " + fmt(total - cap, DATA) + " over");
      c.fits.classList.toggle("bad", fits === false);
      // the checker's CT425, as `ctdsl solve` prints it at these values (ctdsl.symbolic.fit.warnings)
      const text = fits === false ? "CT425 [warning] a GPU of dc '" + decoded(m.dc) + "' needs " + fmt(total, DATA) + " for model '" + decoded(m.model) +
        "' (" + c.parts.filter(([, i]) => f.all[i]).map(([, i, p]) => p + " " + fmt(f.all[i], DATA)).join(", ") + "), more than its device's " + fmt(cap, DATA) : "";
      setText(c.diag, text);
      c.diag.hidden = !text;
    });
  },
});
