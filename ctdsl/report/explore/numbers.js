// ctdsl explorer, numbers and units: a value printed as ctdsl prints it (ctdsl.units.format_quantity,
// Python's "{:g}"), so that the page's tables and the checker's messages read as the CLI's.
// ---- numbers as Python prints them -------------------------------------------------------
// The digits of |x| (100 significant, correctly rounded: exact enough to see a tie), and the
// exponent of the first. Rounding to n digits is half to even on the exact value, as Python's
// format does, where toFixed and toExponential round a tie up.
function decimal(x) {
  const [m, e] = Math.abs(x).toExponential(99).split("e");
  return { digits: m.replace(".", ""), exp: +e };
}
function roundDigits(digits, n) {
  if (n < 0) return { kept: "", carry: false };
  if (n >= digits.length) return { kept: digits.padEnd(n, "0"), carry: false };
  const kept = digits.slice(0, n), rest = digits.slice(n);
  let up = rest[0] > "5";
  if (rest[0] === "5") up = /[1-9]/.test(rest.slice(1)) || (n > 0 && +kept[n - 1] % 2 === 1);
  if (!up) return { kept, carry: false };
  const a = kept.split("");
  let i = n - 1;
  while (i >= 0 && a[i] === "9") { a[i] = "0"; i--; }
  if (i < 0) return { kept: "1" + a.join(""), carry: true };
  a[i] = String(+a[i] + 1);
  return { kept: a.join(""), carry: false };
}
const pyOdd = (x) => (Number.isNaN(x) ? "nan" : x > 0 ? "inf" : "-inf");  // Python's text of a value that is not finite
// f"{x:.{d}f}"
function pyFixed(x, d) {
  if (!Number.isFinite(x)) return pyOdd(x);
  const sign = x < 0 || Object.is(x, -0) ? "-" : "";
  if (x === 0) return sign + (d ? "0." + "0".repeat(d) : "0");
  const { digits, exp } = decimal(x);
  let s = roundDigits(digits, exp + 1 + d).kept.replace(/^0+/, "");
  s = s.padStart(d + 1, "0");
  return sign + (d ? s.slice(0, s.length - d) + "." + s.slice(s.length - d) : s);
}
// f"{x:.{d}e}"
function pyExp(x, d) {
  if (!Number.isFinite(x)) return pyOdd(x);
  const sign = x < 0 || Object.is(x, -0) ? "-" : "";
  let kept, exp;
  if (x === 0) { kept = "0".repeat(d + 1); exp = 0; } else {
    const dec = decimal(x), r = roundDigits(dec.digits, d + 1);
    kept = r.carry ? r.kept.slice(0, d + 1) : r.kept; exp = dec.exp + (r.carry ? 1 : 0);
  }
  return sign + kept[0] + (d ? "." + kept.slice(1) : "") + "e" + (exp < 0 ? "-" : "+") + String(Math.abs(exp)).padStart(2, "0");
}
// f"{x:g}"
function pyG(x) {
  if (!Number.isFinite(x)) return pyOdd(x);
  if (x === 0) return Object.is(x, -0) ? "-0" : "0";
  const e = pyExp(x, 5), exp = +e.split("e")[1];
  const strip = (t) => (t.includes(".") ? t.replace(/0+$/, "").replace(/\.$/, "") : t);
  if (exp < -4 || exp >= 6) { const [m, ex] = e.split("e"); return strip(m) + "e" + ex; }
  return strip(pyFixed(x, 5 - exp));
}
// ctdsl.units._sig: `digits` significant figures
function sig(x, digits) {
  if (x === 0) return "0";
  const m = Math.abs(x);
  if (m >= Math.pow(10, digits) || m < 1e-3) return pyExp(x, digits - 1);
  const dec = Math.max(0, digits - 1 - Math.floor(Math.log10(m)));
  let t = pyFixed(x, dec);
  if (t.includes(".")) t = t.replace(/0+$/, "").replace(/\.$/, "");
  return t;
}
// ctdsl.units.format_quantity: a preferred prefix, four significant figures
function fmt(v, dim, digits) {
  digits = digits || 4;
  if (v === null || v === undefined || Number.isNaN(v)) return "n/a";
  if (!Number.isFinite(v)) return "inf";
  const key = dim.join(",");
  if (dim.every((e) => e === 0)) return sig(v, digits);
  const pref = has(D.units, key) ? D.units[key] : null;
  if (!pref) return sig(v, digits) + " " + (has(D.symbols, key) ? D.symbols[key] : "");
  const scales = pref.scales;
  if (v === 0) return "0 " + (scales.length > 1 ? pref.base : scales[0][1]);
  const m = Math.abs(v);
  for (let k = 0; k < scales.length; k++) {
    const [scale, label] = scales[k];
    if (m >= scale * 0.9995 || k === scales.length - 1) return sig(v / scale, digits) + " " + label;
  }
  return sig(v, digits) + " " + pref.base;
}
const TIME = D.dims.time, ENERGY = D.dims.energy, DATA = D.dims.data;
const MONEY = D.dims.money, CARBON = D.dims.carbon, ONE = D.dims.one;
// the quantities a curve may show: key -> [its place, its dimension, what it is called] (model.py, QUANTITIES)
const QUANT = new Map(D.quantities.map(([k, dim, words], i) => [k, [i, dim, words]]));
