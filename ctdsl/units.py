"""Units and dimensions.

Every quantity carries a dimension vector over seven base units: byte (B), second
(s), floating-point operation (FLOP), joule (J), metre (m), US dollar (USD) and
gram of CO2 equivalent (gCO2e). A unit is a scale to those base units plus a
dimension; `12.5 GB/s` is 1.25e10 with dimension B/s. Counts and ratios (`%`,
`values`) are dimensionless. A bit is an eighth of a byte.

Money and carbon are dimensions of their own, so that `2.5 USD/h`, `0.08 USD/kWh`
and `400 gCO2e/kWh` type-check and a price is never added to a time. There is one
currency (USD, with `cUSD`, `kUSD`, `MUSD`) and one carbon mass (`gCO2e`,
`kgCO2e`, `tCO2e`). Energy is also written in watt-hours (`Wh`, `kWh`, `MWh`,
`GWh`), and the long times of prices in `day`, `month` (730 h, a twelfth of
`yr`) and `yr` (365 days, 8760 h). A price per capacity and time (a WAN link's
rent, per Gbit/s and month) is written as a quotient: `2000 USD/month / 1 Gb/s`;
its dimension is USD/B (a rate times a time is data).

The checker keeps these vectors; the symbolic and numeric back ends see plain
numbers in base units, with this module to print them back in readable units.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from fractions import Fraction

from ctdsl.diagnostics import did_you_mean

BASE = ("B", "s", "FLOP", "J", "m", "USD", "gCO2e")


@dataclass(frozen=True)
class Dim:
    exps: tuple[int, int, int, int, int, int, int] = (0, 0, 0, 0, 0, 0, 0)

    def __mul__(self, other: "Dim") -> "Dim":
        return Dim(tuple(a + b for a, b in zip(self.exps, other.exps)))  # type: ignore[arg-type]

    def __truediv__(self, other: "Dim") -> "Dim":
        return Dim(tuple(a - b for a, b in zip(self.exps, other.exps)))  # type: ignore[arg-type]

    def __pow__(self, n: int) -> "Dim":
        return Dim(tuple(a * n for a in self.exps))  # type: ignore[arg-type]

    @property
    def dimensionless(self) -> bool:
        return not any(self.exps)

    def describe(self) -> str:
        """A readable name: 'data rate (B/s)'."""
        name = _KIND_NAMES.get(self.exps)
        sym = self.symbol()
        if name is None:
            return sym
        return name if self.dimensionless else f"{name} ({sym})"

    def symbol(self) -> str:
        if self.dimensionless:
            return "1"
        pref = _PREFERRED.get(self.exps)
        if pref:
            return pref[0]
        num = [f"{b}^{e}" if e != 1 else b for b, e in zip(BASE, self.exps) if e > 0]
        den = [f"{b}^{-e}" if e != -1 else b for b, e in zip(BASE, self.exps) if e < 0]
        text = "*".join(num) or "1"
        if den:
            text += "/" + ("*".join(den) if len(den) == 1 else "(" + "*".join(den) + ")")
        return text


# each base unit as UDUNITS-2 (the CF convention's unit syntax, read by cf-units, xarray's CF tools and pint)
# names it: B is the bel there, so a byte is `byte`; a FLOP is a count (`1`); gCO2e is a mass, in g; a dollar
# has no UDUNITS unit, so a quantity in USD has no CF units (its ctdsl unit is still given)
_UDUNITS = {"B": "byte", "s": "s", "FLOP": "1", "J": "J", "m": "m", "gCO2e": "g"}


def udunits(d: "Dim") -> str | None:
    """The base SI unit of `d` in UDUNITS-2 syntax (`byte/s`, `J/byte`, `1/s`), None when it has no such unit (USD)."""
    if d.dimensionless:
        return "1"
    if d.exps[BASE.index("USD")]:
        return None
    parts = [(_UDUNITS[b], e) for b, e in zip(BASE, d.exps) if e and _UDUNITS[b] != "1"]
    num = [u if e == 1 else f"{u}^{e}" for u, e in parts if e > 0]
    den = [u if e == -1 else f"{u}^{-e}" for u, e in parts if e < 0]
    text = "*".join(num) or "1"
    if den:
        text += "/" + (den[0] if len(den) == 1 else "(" + "*".join(den) + ")")
    return text


def dim(B: int = 0, s: int = 0, FLOP: int = 0, J: int = 0, m: int = 0, USD: int = 0, CO2e: int = 0) -> Dim:
    return Dim((B, s, FLOP, J, m, USD, CO2e))


ONE = dim()
DATA = dim(B=1)
TIME = dim(s=1)
RATE = dim(B=1, s=-1)
OPS = dim(FLOP=1)
OPS_RATE = dim(FLOP=1, s=-1)
ENERGY = dim(J=1)
POWER = dim(J=1, s=-1)
ENERGY_PER_DATA = dim(J=1, B=-1)
ENERGY_PER_OP = dim(J=1, FLOP=-1)
OPS_PER_DATA = dim(FLOP=1, B=-1)
LENGTH = dim(m=1)
FREQUENCY = dim(s=-1)
MONEY = dim(USD=1)
MONEY_RATE = dim(USD=1, s=-1)  # a price per hour of use
MONEY_PER_ENERGY = dim(USD=1, J=-1)  # a power price
MONEY_PER_DATA = dim(USD=1, B=-1)  # a price per capacity and time: USD / (B/s x s)
CARBON = dim(CO2e=1)
CARBON_PER_ENERGY = dim(CO2e=1, J=-1)  # a grid's carbon intensity

_KIND_NAMES = {
    ONE.exps: "dimensionless",
    DATA.exps: "data",
    TIME.exps: "time",
    RATE.exps: "data rate",
    OPS.exps: "operations",
    OPS_RATE.exps: "compute rate",
    ENERGY.exps: "energy",
    POWER.exps: "power",
    ENERGY_PER_DATA.exps: "energy per data",
    ENERGY_PER_OP.exps: "energy per operation",
    OPS_PER_DATA.exps: "operations per byte",
    LENGTH.exps: "length",
    FREQUENCY.exps: "frequency",
    MONEY.exps: "money",
    MONEY_RATE.exps: "price per time",
    MONEY_PER_ENERGY.exps: "price per energy",
    MONEY_PER_DATA.exps: "price per capacity and time",
    CARBON.exps: "carbon",
    CARBON_PER_ENERGY.exps: "carbon intensity",
}
_KWH = 3_600_000  # J
_MONTH = 730 * 3600  # s: a twelfth of 365 days
_GBPS_MONTH = 125_000_000 * _MONTH  # B: 1 Gb/s for a month

# Display unit for each dimension: (symbol of the base-unit form, [(scale, label)...])
# Labels are chosen so that the mantissa lands in [1, 1000).
_PREFERRED: dict[tuple, tuple[str, list[tuple[float, str]]]] = {
    DATA.exps: ("B", [(1e15, "PB"), (1e12, "TB"), (1e9, "GB"), (1e6, "MB"), (1e3, "kB"), (1, "B")]),
    TIME.exps: ("s", [(3600, "h"), (1, "s"), (1e-3, "ms"), (1e-6, "us"), (1e-9, "ns"), (1e-12, "ps")]),
    RATE.exps: ("B/s", [(1e12, "TB/s"), (1e9, "GB/s"), (1e6, "MB/s"), (1e3, "kB/s"), (1, "B/s")]),
    OPS.exps: ("FLOP", [(1e18, "EFLOP"), (1e15, "PFLOP"), (1e12, "TFLOP"), (1e9, "GFLOP"), (1e6, "MFLOP"), (1, "FLOP")]),
    OPS_RATE.exps: ("FLOP/s", [(1e15, "PFLOP/s"), (1e12, "TFLOP/s"), (1e9, "GFLOP/s"), (1e6, "MFLOP/s"), (1, "FLOP/s")]),
    ENERGY.exps: ("J", [(1e9, "GJ"), (1e6, "MJ"), (1e3, "kJ"), (1, "J"), (1e-3, "mJ"), (1e-6, "uJ"), (1e-9, "nJ"), (1e-12, "pJ")]),
    POWER.exps: ("W", [(1e6, "MW"), (1e3, "kW"), (1, "W"), (1e-3, "mW")]),
    ENERGY_PER_DATA.exps: ("J/B", [(8e-12, "pJ/bit")]),
    ENERGY_PER_OP.exps: ("J/FLOP", [(1e-12, "pJ/FLOP")]),
    OPS_PER_DATA.exps: ("FLOP/B", [(1, "FLOP/B")]),
    LENGTH.exps: ("m", [(1e3, "km"), (1, "m")]),
    FREQUENCY.exps: ("1/s", [(1e9, "G/s"), (1e6, "M/s"), (1e3, "k/s"), (1, "/s")]),
    MONEY.exps: ("USD", [(1e6, "MUSD"), (1e3, "kUSD"), (1, "USD")]),
    MONEY_RATE.exps: ("USD/s", [(1 / 3600, "USD/h")]),
    MONEY_PER_ENERGY.exps: ("USD/J", [(1 / _KWH, "USD/kWh")]),
    MONEY_PER_DATA.exps: ("USD/B", [(1 / _GBPS_MONTH, "USD/(Gb/s month)")]),
    CARBON.exps: ("gCO2e", [(1e6, "tCO2e"), (1e3, "kgCO2e"), (1, "gCO2e")]),
    CARBON_PER_ENERGY.exps: ("gCO2e/J", [(1 / _KWH, "gCO2e/kWh")]),
}


@dataclass(frozen=True)
class Unit:
    scale: Fraction
    dim: Dim


def _build_units() -> dict[str, Unit]:
    u: dict[str, Unit] = {}
    si = {"k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
    binary = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50}
    small = {"m": -3, "u": -6, "\u00b5": -6, "n": -9, "p": -12, "f": -15}
    byte = Fraction(1)
    bit = Fraction(1, 8)
    u["B"] = Unit(byte, DATA)
    u["b"] = u["bit"] = u["bits"] = Unit(bit, DATA)
    for p, e in si.items():
        u[p + "B"] = Unit(byte * 10**e, DATA)
        u[p + "b"] = Unit(bit * 10**e, DATA)
        u[p + "bit"] = Unit(bit * 10**e, DATA)  # Gbit/s, as data sheets write it
        u[p + "FLOP"] = Unit(Fraction(10**e), OPS)
    for p, e in binary.items():
        u[p + "B"] = Unit(byte * 2**e, DATA)
        u[p + "b"] = Unit(bit * 2**e, DATA)
    u["FLOP"] = Unit(Fraction(1), OPS)
    u["s"] = Unit(Fraction(1), TIME)
    for p, e in small.items():
        if p in ("m", "u", "\u00b5", "n", "p"):
            u[p + "s"] = Unit(Fraction(10) ** e, TIME)
    u["min"] = Unit(Fraction(60), TIME)
    u["h"] = Unit(Fraction(3600), TIME)
    u["J"] = Unit(Fraction(1), ENERGY)
    u["W"] = Unit(Fraction(1), POWER)
    for p, e in {**small, "k": 3, "M": 6, "G": 9}.items():
        u[p + "J"] = Unit(Fraction(10) ** e, ENERGY)
        u[p + "W"] = Unit(Fraction(10) ** e, POWER)
    for p, e in {"": 0, "k": 3, "M": 6, "G": 9}.items():
        u[p + "Wh"] = Unit(Fraction(3600 * 10**e), ENERGY)
    for word, secs in (("day", 86400), ("days", 86400), ("month", _MONTH), ("months", _MONTH), ("yr", 8760 * 3600), ("year", 8760 * 3600), ("years", 8760 * 3600)):
        u[word] = Unit(Fraction(secs), TIME)
    u["USD"] = Unit(Fraction(1), MONEY)
    u["cUSD"] = Unit(Fraction(1, 100), MONEY)
    u["kUSD"] = Unit(Fraction(1000), MONEY)
    u["MUSD"] = Unit(Fraction(10**6), MONEY)
    u["gCO2e"] = Unit(Fraction(1), CARBON)
    u["kgCO2e"] = Unit(Fraction(1000), CARBON)
    u["tCO2e"] = Unit(Fraction(10**6), CARBON)
    u["m"] = Unit(Fraction(1), LENGTH)
    u["km"] = Unit(Fraction(1000), LENGTH)
    u["cm"] = Unit(Fraction(1, 100), LENGTH)
    u["mm"] = Unit(Fraction(1, 1000), LENGTH)
    u["Hz"] = Unit(Fraction(1), FREQUENCY)
    for p, e in {"k": 3, "M": 6, "G": 9}.items():
        u[p + "Hz"] = Unit(Fraction(10**e), FREQUENCY)
    u["%"] = Unit(Fraction(1, 100), ONE)
    for word in ("value", "values", "token", "tokens", "step", "steps"):
        u[word] = Unit(Fraction(1), ONE)
    return u


UNITS = _build_units()

# Spellings that are common but wrong or ambiguous, with what to write instead.
_MISSPELLINGS = {
    "KB": "write kB (1000 B) or KiB (1024 B)",
    "FLOPS": "write FLOP/s for a rate, FLOP for a count",
    "GFLOPS": "write GFLOP/s",
    "TFLOPS": "write TFLOP/s",
    "PFLOPS": "write PFLOP/s",
    "FLOPs": "write FLOP for a count, FLOP/s for a rate",
    "Gbps": "write Gb/s",
    "GBps": "write GB/s",
    "Mbps": "write Mb/s",
    "sec": "write s",
    "secs": "write s",
    "msec": "write ms",
    "usec": "write us",
    "Bytes": "write B",
    "bytes": "write B",
    "byte": "write B",
    "kwh": "write kWh",
    "KWh": "write kWh",
    "usd": "write USD",
    "dollars": "write USD",
    "gCO2": "write gCO2e (CO2 equivalent)",
    "kgCO2": "write kgCO2e (CO2 equivalent)",
    "tCO2": "write tCO2e (CO2 equivalent)",
}


class UnitError(Exception):
    def __init__(self, message: str, help: str | None = None):
        super().__init__(message)
        self.help = help


def _rate_spelling(atom: str) -> str | None:
    """`GBs`, `Gbps`, `MFLOPs`: a rate written without its slash."""
    for cut in ("ps", "s"):
        stem = atom[: -len(cut)]
        if atom.endswith(cut) and stem in UNITS and UNITS[stem].dim in (DATA, OPS):
            return f"did you mean '{stem}/s'?"
    return None


def parse_unit(text: str) -> Unit:
    """'GB/s' -> Unit(1e9, B/s). Raises UnitError naming the bad atom."""
    atoms = text.split("/")
    scale = Fraction(1)
    d = ONE
    for i, atom in enumerate(atoms):
        unit = UNITS.get(atom)
        if unit is None:
            if atom in _MISSPELLINGS:
                raise UnitError(f"unknown unit '{atom}'", _MISSPELLINGS[atom])
            rate = _rate_spelling(atom) if len(atoms) == 1 else None
            raise UnitError(f"unknown unit '{atom}'", rate or did_you_mean(atom, UNITS))
        if i == 0:
            scale, d = unit.scale, unit.dim
        else:
            scale, d = scale / unit.scale, d / unit.dim
    return Unit(scale, d)


def format_quantity(value: float, d: Dim, digits: int = 4) -> str:
    """12.5e9, B/s -> '12.5 GB/s'; chooses a prefix, keeps `digits` significant figures."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    if isinstance(value, float) and math.isinf(value):
        return "inf"
    if d.dimensionless:
        return _sig(value, digits)
    pref = _PREFERRED.get(d.exps)
    if pref is None:
        return f"{_sig(value, digits)} {d.symbol()}"
    base, scales = pref
    if value == 0:
        return f"0 {base if len(scales) > 1 else scales[0][1]}"
    mag = abs(value)
    for scale, label in scales:
        if mag >= scale * 0.9995 or scale == scales[-1][0]:
            return f"{_sig(value / scale, digits)} {label}"
    return f"{_sig(value, digits)} {base}"  # pragma: no cover


def best_unit(values: Iterable[float], d: Dim) -> tuple[float, str]:
    """One (scale, label) that suits all of `values` (for a table column or an axis)."""
    pref = _PREFERRED.get(d.exps)
    if pref is None:
        return 1.0, d.symbol()
    finite = [abs(v) for v in values if v is not None and math.isfinite(v) and v != 0]
    if not finite:
        return pref[1][-1] if len(pref[1]) == 1 else (1.0, pref[0])
    mag = sorted(finite)[len(finite) // 2]
    for scale, label in pref[1]:
        if mag >= scale * 0.9995:
            return scale, label
    return pref[1][-1]


def _sig(x: float, digits: int) -> str:
    if x == 0:
        return "0"
    mag = abs(x)
    if mag >= 10**digits or mag < 1e-3:
        return f"{x:.{digits - 1}e}"
    decimals = max(0, digits - 1 - int(math.floor(math.log10(mag))))
    text = f"{x:.{decimals}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text
