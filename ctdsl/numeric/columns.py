"""The columns of a sweep's data, in the order every format writes them (docs/sweeps.md).

- every param, in base SI units, named with its unit: `wan_bw_B_per_s`, `eff`
  (swept params vary, the others repeat their value);
- per scheme, in spec order: `SCHEME.step_s`, `SCHEME.time_to_target_s`,
  `SCHEME.energy_to_target_J`, with components each step-time component
  `SCHEME.COMPONENT_s`, then `SCHEME.binding` (the largest component);
- per serving path (`WORKLOAD/HANDOFF`, `WORKLOAD/POOL`): `PATH.sustainable_per_s`,
  `PATH.ttft_p_s`, `PATH.tpot_s`, `PATH.e2e_p_s`, `PATH.energy_per_token_J`, inf where
  the path's queues do not settle (over capacity);
- `winner`: the scheme with the smallest time to target at that point.

A numeric column gives a float64 array per chunk, NaN where a value cannot be
computed (no steps to target, a division by zero). A categorical column (the
binding component, the winner) gives int codes into its `categories`, -1 for
none. The text formats (CSV, JSON) write the category names; the binary ones
(Parquet, Arrow, npz) and `Study.sweep` keep the codes and the categories.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

import numpy as np

from ctdsl import units as U

if TYPE_CHECKING:  # types only: no import at run time
    from ctdsl.numeric.forms import CompiledForms


@dataclass(frozen=True)
class Column:
    name: str
    unit: str | None  # base SI unit symbol ("1" when dimensionless); None for a categorical column
    get: Callable  # chunk -> np.ndarray: float64 values, or int codes into `categories`
    categories: tuple[str, ...] = ()  # a categorical column's names, code i -> categories[i]
    long_name: str = ""  # what it holds, in words (the CF convention's long_name)
    cf_units: str | None = None  # `unit` in UDUNITS-2 syntax (byte/s for B/s); None where it has none (USD)
    param: bool = False  # a param's value (a coordinate of the grid), not a result

    @property
    def categorical(self) -> bool:
        return self.unit is None

    @property
    def dtype(self) -> np.dtype:
        """float64 for values; for codes the smallest signed int that holds them and -1."""
        if not self.categorical:
            return np.dtype(np.float64)
        return np.dtype(np.int8 if len(self.categories) < 128 else np.int16)

    def names(self, codes: np.ndarray) -> list:
        """Codes of a categorical column as names (None for -1)."""
        table = np.array(list(self.categories) + [None], dtype=object)
        return table[codes].tolist()


def unit_suffix(symbol: str) -> str:
    """A unit symbol as part of a column name: `B/s` -> `B_per_s`."""
    return symbol.replace("/", "_per_").replace("*", "_").replace("^", "").replace("(", "").replace(")", "")


def columns(forms: CompiledForms, components: bool = False) -> list[Column]:
    """The columns of a sweep of `forms`, in order."""
    spec = forms.spec
    cols: list[Column] = []
    for p in spec.params.values():
        unit = None if p.dim.dimensionless else p.dim.symbol()
        name = p.name if unit is None else f"{p.name}_{unit_suffix(unit)}"
        cols.append(Column(name, unit or "1", _param_getter(p.name, float(p.default)), long_name=f"param {p.name}",
                           cf_units=U.udunits(p.dim), param=True))  # fmt: skip
    for s, sf in forms.schemes.items():
        cols.append(Column(f"{s}.step_s", "s", _value_getter(s, "step"), long_name=f"{s} step time", cf_units="s"))
        cols.append(Column(f"{s}.time_to_target_s", "s", _value_getter(s, "time_to_target") if sf.has_steps else _none,
                           long_name=f"{s} time to target", cf_units="s"))  # fmt: skip
        cols.append(Column(f"{s}.energy_to_target_J", "J", _value_getter(s, "energy_to_target") if sf.has_steps else _none,
                           long_name=f"{s} energy to target", cf_units="J"))  # fmt: skip
        if components:
            for comp in sf.components:  # named by its display name, as the tables name it
                cols.append(Column(f"{s}.{comp.label}_s", "s", _value_getter(s, "component:" + comp.id), long_name=f"{s} {comp.label} time", cf_units="s"))
        cols.append(Column(f"{s}.binding", None, _binding_getter(s), tuple(c.label for c in sf.components), long_name=f"{s} binding component"))
    for path in getattr(forms, "paths", ()):  # a serving path, `WORKLOAD/HANDOFF` or `WORKLOAD/POOL`
        cols.append(Column(f"{path}.sustainable_per_s", "1/s", _value_getter(path, "serving:sustainable"), long_name=f"{path} sustainable rate", cf_units="s-1"))
        for key, unit, words in SERVING_COLUMNS:
            cols.append(Column(f"{path}.{key}_{unit_suffix(unit)}", unit, _served(path, key), long_name=f"{path} {words}", cf_units=unit))
    ranked = tuple(name for name, sf in forms.schemes.items() if sf.has_steps)
    cols.append(Column("winner", None, _winner, ranked, long_name="scheme with the shortest time to target"))
    return cols


def _param_getter(name: str, fixed: float):
    def get(ch):
        a = ch.params.get(name)
        return np.asarray(a, dtype=np.float64) if a is not None else np.full(len(ch), fixed)

    return get


def _value_getter(scheme: str, q: str):
    return lambda ch: np.asarray(ch.values[(scheme, q)], dtype=np.float64)


def _binding_getter(scheme: str):
    return lambda ch: ch.binding[scheme]


# a path's latencies and energy (docs/sweeps.md): inf where its queues do not settle, as solve says "over capacity"
SERVING_COLUMNS = (("ttft_p", "s", "TTFT at the SLO's percentile"), ("tpot", "s", "TPOT (mean)"), ("e2e_p", "s", "end to end at the percentile"), ("energy_per_token", "J", "energy per output token"))


def _served(path: str, key: str):
    def get(ch):
        v = ch.values
        out = np.array(v[(path, "serving:" + key)], dtype=np.float64)
        rho = [v[(path, "serving:prefill_utilisation")]] + ([v[(path, "serving:link_utilisation")]] if (path, "serving:link_utilisation") in v else [])
        b, most = v[(path, "serving:decode_batch")], v[(path, "serving:decode_batch_max")]
        with np.errstate(invalid="ignore"):
            settles = (v[(path, "serving:rate")] < v[(path, "serving:sustainable")]) & (v[(path, "serving:tpot")] > 0) & (b >= 0) & (b <= most)
            for r in rho:
                settles &= (r >= 0) & (r < 1)
        out[~settles] = np.inf
        return out

    return get


def _winner(ch) -> np.ndarray:
    return ch.winner


def _none(ch) -> np.ndarray:
    return np.full(len(ch), np.nan)
