"""Sweep data by the conventions its readers use: CF attributes, UDUNITS units, netCDF, and Parquet's honest size.

- Every unit ctdsl can write into a data file (`ctdsl.units.udunits` of every kind
  of quantity the language has) is parsed by cf-units (UDUNITS-2, the CF
  convention's unit library) and by pint, and converts to ctdsl's own base unit
  by the factor ctdsl's unit table gives (1 GB/s is 1e9 byte/s).
- `to_xarray()` names its attributes `units` and `long_name` (not `unit`), a
  categorical variable has `flag_values` and `flag_meanings`, and the Dataset
  saves with `to_netcdf()` and reads back with the same values, bit for bit, and
  the same attributes.
- Parquet: the figure docs/sweeps.md gives for 10^6 points of the flagship is
  the size of the file written now, and a result out of float32's range stops
  the write with a message naming --float64.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

import ctdsl
from ctdsl import units as U
from ctdsl.cli import app

cf_units = pytest.importorskip("cf_units", reason="cf-units parses UDUNITS-2 strings (the test extra installs it)")
pint = pytest.importorskip("pint", reason="pint (the test extra installs it)")
xr = pytest.importorskip("xarray", reason="to_xarray needs xarray (the test extra installs it)")
pq = pytest.importorskip("pyarrow.parquet", reason="pyarrow writes Parquet (the test extra installs it)")

ROOT = Path(__file__).resolve().parents[1]
FLAGSHIP = str(ROOT / "specs" / "llama70b_wan.ct")
# every named kind of quantity of the language, and products of them a spec can write
KINDS = [getattr(U, n) for n in dir(U) if isinstance(getattr(U, n), U.Dim)]
KINDS += [U.RATE * U.TIME**2, U.DATA / (U.TIME * U.ENERGY), U.ENERGY_PER_OP * U.OPS_RATE]
# (a ctdsl unit, the same quantity as UDUNITS-2 writes it), the right column by hand
SAME = [("GB/s", "1e9 byte/s"), ("pJ/bit", "8e-12 J/byte"), ("kWh", "3.6e6 J"), ("GFLOP/s", "1e9 s-1"),
        ("gCO2e/kWh", "2.7777777777777776e-07 g/J"), ("TB", "1e12 byte"), ("km", "1000 m"), ("h", "3600 s")]  # fmt: skip


def test_the_kinds_are_there():
    assert len(KINDS) >= 15 and U.RATE in KINDS and U.MONEY in KINDS


@pytest.mark.parametrize("dim", KINDS, ids=lambda d: d.symbol())
def test_every_unit_written_parses_in_udunits_and_pint(dim):
    text = U.udunits(dim)
    if dim.exps[U.BASE.index("USD")]:
        assert text is None  # UDUNITS has no currency: the file gives ctdsl's unit only
        return
    cf_units.Unit(text)  # raises on a string UDUNITS-2 cannot parse
    pint.UnitRegistry().parse_units(text)


@pytest.mark.parametrize("ctdsl_unit, by_hand", SAME)
def test_one_unit_of_ctdsl_is_the_same_quantity_in_udunits(ctdsl_unit, by_hand):
    """One `ctdsl_unit` is `scale` of ctdsl's base unit; in the base unit's UDUNITS name, that is `by_hand`."""
    unit = U.parse_unit(ctdsl_unit)
    value, _, name = by_hand.partition(" ")
    got = cf_units.Unit(U.udunits(unit.dim)).convert(float(unit.scale), cf_units.Unit(name))
    assert got == pytest.approx(float(value), rel=1e-12)


@pytest.fixture(scope="module")
def sweep():
    return ctdsl.load(FLAGSHIP).sweep({"wan_bw": ("1 GB/s", "100 GB/s", 5, "log"), "eff": ("0.2", "0.6", 3)}, components=True)


def test_xarray_attributes_follow_the_cf_convention(sweep):
    ds = sweep.to_xarray()
    assert ds.attrs["Conventions"].startswith("CF-")
    for name, var in list(ds.data_vars.items()) + list(ds.coords.items()):
        assert "unit" not in var.attrs and var.attrs["long_name"], name
        if "flag_values" in var.attrs:
            words = var.attrs["flag_meanings"].split(" ")
            assert len(words) == len(var.attrs["flag_values"]) == len(var.attrs["categories"]) + 1
            assert all(re.fullmatch(r"[A-Za-z0-9_.+@-]+", w) for w in words)
            assert set(np.unique(var.values)) <= set(var.attrs["flag_values"].tolist())
        else:
            cf_units.Unit(var.attrs["units"])
    assert ds["wan_bw"].attrs["units"] == "byte/s" and ds["wan_bw"].attrs["ctdsl_unit"] == "B/s"
    assert ds["adamw.energy_to_target_J"].attrs["units"] == "J"
    assert ds["winner"].attrs["flag_meanings"].split(" ")[:3] == ["none", "adamw", "topk"]
    assert "sync_exposed" in ds["adamw.binding"].attrs["flag_meanings"].split(" ")  # from "sync (exposed)"


def test_netcdf_round_trip(sweep, tmp_path):
    path = tmp_path / "grid.nc"
    sweep.to_netcdf(path)
    ds = sweep.to_xarray()
    with xr.open_dataset(path, engine="h5netcdf") as back:
        assert set(back.data_vars) == set(ds.data_vars) and list(back.coords) == list(ds.coords)
        for name in list(ds.data_vars) + list(ds.coords):
            np.testing.assert_array_equal(back[name].values, ds[name].values)
            assert back[name].dtype == ds[name].dtype, name
            for key, value in ds[name].attrs.items():
                got = back[name].attrs[key]
                assert (np.asarray(got).tolist() if isinstance(value, np.ndarray) else got) == (
                    value.tolist() if isinstance(value, np.ndarray) else value), (name, key)  # fmt: skip
        assert back.attrs["spec"] == ds.attrs["spec"]
    # the grid's point (wan_bw 10 GB/s, eff 0.4) is the solve's
    step = ctdsl.load(FLAGSHIP).solve({"wan_bw": "10 GB/s", "eff": "0.4"}).schemes["adamw"].step_time.value
    with xr.open_dataset(path, engine="h5netcdf") as back:
        assert float(back["adamw.step_s"].sel(wan_bw=10e9, eff=0.4, method="nearest")) == pytest.approx(step, rel=1e-12)


def _docs_parquet_mb() -> float:
    text = (ROOT / "docs" / "sweeps.md").read_text(encoding="utf-8")
    m = re.search(r"a 10\^6-point sweep\s+of the flagship is\s+([\d.]+) MB of Parquet", text)
    assert m, "docs/sweeps.md no longer states the size of 10^6 points as Parquet"
    return float(m.group(1))


def test_the_parquet_size_in_the_docs_is_the_size_written(tmp_path):
    """The grid of bench/bench_sweep_data.py: wan_bw 1000 log x budget 1000 lin, 10^6 points."""
    out = tmp_path / "grid.parquet"
    r = CliRunner().invoke(app, ["sweep", FLAGSHIP, "--sweep", "wan_bw=0.1 GB/s:1000 GB/s:1000:log",
                                 "--sweep", "budget=10 GFLOP/s:99 GFLOP/s:1000", "-f", "parquet", "-o", str(out)])  # fmt: skip
    assert r.exit_code == 0, r.output
    assert round(out.stat().st_size / 1e6, 1) == _docs_parquet_mb()
    t = pq.ParquetFile(out)
    assert t.metadata.num_rows == 10**6
    encodings = {t.schema_arrow.names[i]: t.metadata.row_group(0).column(i).encodings for i in range(t.metadata.num_columns)}
    assert "RLE_DICTIONARY" in encodings["adamw.step_s"]  # depends on wan_bw only: repeats along budget
    assert "BYTE_STREAM_SPLIT" in encodings["band_module.step_s"]  # depends on both
    assert t.metadata.row_group(0).column(0).compression == "ZSTD"


def test_a_result_outside_float32_stops_the_parquet_write(tmp_path):
    """A step of 1e40 s (a WAN of 1e-30 B/s) is past float32: the write stops and names --float64, which keeps it."""
    spec = tmp_path / "slow.ct"
    text = Path(FLAGSHIP).read_text(encoding="utf-8")
    spec.write_text(text, encoding="utf-8")
    out = tmp_path / "g.parquet"
    args = ["sweep", str(spec), "--sweep", "wan_bw=1e-30 B/s:1e-29 B/s:2", "-f", "parquet", "-o", str(out)]
    r = CliRunner().invoke(app, args)
    assert r.exit_code == 2 and "outside float32's range" in r.stderr and "--float64" in r.stderr
    assert not out.exists()
    r = CliRunner().invoke(app, args + ["--float64"])
    assert r.exit_code == 0, r.output
    table = pq.read_table(out)
    assert table.schema.field("adamw.step_s").type == "double" and max(table.column("adamw.step_s").to_pylist()) > 1e38
