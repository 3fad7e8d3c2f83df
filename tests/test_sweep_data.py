"""Sweep data as binary columns (Parquet, Arrow, npz) and in memory (`Study.sweep`).

The reference is the CSV file: its floats are written with repr (exact round
trip) and its categorical cells as names, by a writer that shares nothing with
the binary ones but the column list. Every binary format must give the same
values bit for bit (Parquet's float32 results: the CSV value rounded to float32
by numpy, bit for bit), the same names, and the units the CSV header names. Values
at single points are also compared with `ctdsl solve --set` (the symbolic
results evaluated one point at a time, an independent path).
"""

from __future__ import annotations

import csv
import io
import json
import math
import sys
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

import ctdsl
from ctdsl.cli import app

ROOT = Path(__file__).resolve().parents[1]
FLAGSHIP = str(ROOT / "specs" / "llama70b_wan.ct")
SWEEP = ["--sweep", "wan_bw=1 GB/s:100 GB/s:7:log", "--sweep", "budget=10 GFLOP/s:90 GFLOP/s:3"]

pa = pytest.importorskip("pyarrow", reason="pyarrow is the Parquet and Arrow writer (the test extra installs it)")


def run(*args: str) -> None:
    result = CliRunner().invoke(app, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("sweep")
    paths = {}
    for fmt in ("csv", "parquet", "arrow", "npz"):
        paths[fmt] = out / f"grid.{fmt}"
        run("sweep", FLAGSHIP, *SWEEP, "--components", "-f", fmt, "-o", str(paths[fmt]))
    return paths


def read_csv(path: Path) -> dict[str, list[str]]:
    rows = list(csv.reader(io.StringIO(path.read_text())))
    return {name: [r[i] for r in rows[1:]] for i, name in enumerate(rows[0])}


def read_arrow(path: Path, fmt: str):
    if fmt == "parquet":
        import pyarrow.parquet as pq

        return pq.read_table(path)
    with pa.memory_map(str(path)) as src:
        return pa.ipc.open_file(src).read_all()


def as_float(cell: str) -> float:
    return float("nan") if cell == "" else float(cell)


def same(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or a == b


@pytest.mark.parametrize("fmt", ["parquet", "arrow"])
def test_arrow_formats_hold_the_csv_values_and_units(files, fmt):
    ref = read_csv(files["csv"])
    table = read_arrow(files[fmt], fmt)
    assert table.column_names == list(ref)
    assert table.num_rows == 7 * 3
    meta = json.loads(table.schema.metadata[b"ctdsl"])
    assert meta["schema"] == "ctdsl.sweep/1" and meta["points"] == 21
    assert [a["name"] for a in meta["axes"]] == ["wan_bw", "budget"]
    narrow = set(meta.get("float32", []))
    for name, cells in ref.items():
        field = table.schema.field(name)
        got = table.column(name).to_pylist()
        if pa.types.is_dictionary(field.type):
            assert [("" if g is None else g) for g in got] == cells, name
        else:
            unit = field.metadata[b"unit"].decode()
            assert unit == meta["units"][meta["columns"].index(name)]
            assert field.metadata[b"long_name"]
            if name in narrow:  # stated in the header, and rounded from the float64 value
                assert field.type == pa.float32()
                assert all(same(g, float(np.float32(as_float(c)))) for g, c in zip(got, cells)), name
            else:
                assert field.type == pa.float64()
                assert all(same(g, as_float(c)) for g, c in zip(got, cells)), name
    if fmt == "parquet":  # the results are float32, the params (the grid's coordinates) float64
        assert narrow == {n for n in ref if not pa.types.is_dictionary(table.schema.field(n).type)} - {
            "wan_bw_B_per_s", "budget_FLOP_per_s", "eff", "wan_load"}
    else:
        assert not narrow
    # the unit in a param column's name is the one its metadata carries
    assert table.schema.field("wan_bw_B_per_s").metadata[b"unit"] == b"B/s"
    assert table.schema.field("adamw.step_s").metadata[b"unit"] == b"s"
    assert table.schema.field("adamw.energy_to_target_J").metadata[b"unit"] == b"J"


def test_npz_holds_the_csv_values_codes_and_categories(files):
    ref = read_csv(files["csv"])
    with np.load(files["npz"], allow_pickle=False) as z:
        meta = json.loads(str(z["__meta__"]))
        assert meta["columns"] == list(ref)
        for name, cells in ref.items():
            a = z[name]
            assert a.shape == (21,)
            if name in meta["categories"]:
                cats = list(z[name + ".categories"])
                assert cats == meta["categories"][name]
                assert [cats[i] if i >= 0 else "" for i in a.tolist()] == cells, name
            else:
                assert a.dtype == np.float64
                assert all(same(g, as_float(c)) for g, c in zip(a.tolist(), cells)), name


@pytest.mark.parametrize("fmt", ["parquet", "arrow", "npz"])
def test_binary_files_are_byte_identical_run_to_run(files, tmp_path, fmt):
    again = tmp_path / f"again.{fmt}"
    run("sweep", FLAGSHIP, *SWEEP, "--components", "-f", fmt, "-o", str(again))
    assert again.read_bytes() == files[fmt].read_bytes()


def test_study_sweep_matches_the_file_and_solve_at_a_point(files):
    study = ctdsl.load(FLAGSHIP)
    sw = study.sweep(
        {"wan_bw": ("1 GB/s", "100 GB/s", 7, "log"), "budget": ("10 GFLOP/s", "90 GFLOP/s", 3)}, components=True
    )
    ref = read_csv(files["csv"])
    assert sw.columns == list(ref)
    assert sw.shape == (7, 3) and len(sw) == 21
    for name, cells in ref.items():
        if name in sw.categories:
            assert [("" if n is None else n) for n in sw.names(name)] == cells
        else:
            assert all(same(g, as_float(c)) for g, c in zip(sw[name].tolist(), cells)), name
    assert sw.unit("adamw.time_to_target_s") == "s" and sw.unit("winner") is None
    # point (wan_bw index 3 = 10 GB/s, budget index 2 = 90 GFLOP/s) is row 3 * 3 + 2
    grid = sw.grid("band_module.step_s")
    assert grid.shape == (7, 3)
    one = study.solve({"wan_bw": "10 GB/s", "budget": "90 GFLOP/s"})
    for scheme in ("adamw", "band_module", "diloco"):
        exact = one.schemes[scheme].step_time.value
        assert sw.grid(f"{scheme}.step_s")[3, 2] == pytest.approx(exact, rel=1e-12)
    assert sw["wan_bw_B_per_s"][11] == pytest.approx(10e9, rel=1e-15)


def test_study_sweep_defaults_to_the_declared_sweeps():
    sw = ctdsl.load(FLAGSHIP).sweep()
    assert sw.shape == (41, 10)  # wan_bw log 41, budget lin 10 in the flagship
    assert sw["wan_bw_B_per_s"][0] == pytest.approx(0.1e9) and sw["wan_bw_B_per_s"][-1] == pytest.approx(1000e9)


def test_study_sweep_reads_ends_as_set_does():
    study = ctdsl.load(FLAGSHIP)
    with pytest.raises(ctdsl.SpecError) as err:
        study.sweep({"wan_bw": ("0 GB/s", "10 GB/s", 3)})
    assert any(d.code.startswith("CT") for d in err.value.diagnostics)
    with pytest.raises(KeyError):
        study.sweep({"nope": None})


def test_study_sweep_to_pandas_and_xarray():
    pd = pytest.importorskip("pandas", reason="to_pandas needs pandas (the test extra installs it)")
    xr = pytest.importorskip("xarray", reason="to_xarray needs xarray (the test extra installs it)")
    sw = ctdsl.load(FLAGSHIP).sweep({"wan_bw": ("1 GB/s", "100 GB/s", 5, "log"), "eff": ("0.2", "0.6", 3)})
    df = sw.to_pandas()
    assert len(df) == 15 and isinstance(df["winner"].dtype, pd.CategoricalDtype)
    assert list(df["winner"].astype(object).where(df["winner"].notna(), None)) == sw.names("winner")
    assert df.attrs["units"]["adamw.step_s"] == "s"
    ds = sw.to_xarray()
    assert isinstance(ds, xr.Dataset)
    assert ds["adamw.step_s"].dims == ("wan_bw", "eff") and ds["adamw.step_s"].attrs["units"] == "s"
    np.testing.assert_array_equal(ds["adamw.step_s"].values, sw.grid("adamw.step_s"))
    np.testing.assert_allclose(ds["eff"].values, [0.2, 0.4, 0.6])
    assert ds["wan_bw"].attrs["units"] == "byte/s" and "wan_bw_B_per_s" not in ds  # a swept param is a coordinate
    assert float(ds["budget_FLOP_per_s"][0, 0]) == pytest.approx(50e9)  # an unswept one a variable


def test_parquet_without_pyarrow_is_a_usage_error(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # import pyarrow now raises ImportError
    result = CliRunner().invoke(app, ["sweep", FLAGSHIP, "-f", "parquet", "-o", str(tmp_path / "g.parquet")])
    assert result.exit_code == 2
    assert "needs pyarrow" in result.output and "--format npz" in result.output
    assert not (tmp_path / "g.parquet").exists()
