"""Golden outputs of every shipped spec, for the tests that prove a refactor changes no output.

For each spec in specs/, examples/ and tests/data/tpxpp_step.ct, the tests run the command
line in this process (typer's CliRunner: stdout is not a terminal, so tables are
TABLE_WIDTH columns wide whatever the terminal) and compare what it prints or writes
with the files under tests/golden/outputs/<spec>/:

    solve.txt     ctdsl solve SPEC
    solve.json    ctdsl solve SPEC --format json
    solve.md      ctdsl solve SPEC --format markdown
    solve.csv     ctdsl solve SPEC --format csv
    export.tex    ctdsl export latex SPEC
    report.md     ctdsl report SPEC -o x.md
    report.html   ctdsl report SPEC -o x.html

Byte for byte, with two documented exceptions:

- the figures a report embeds (PNG, base64) are stored as the SHA-256 of their bytes, so
  that the golden files stay small; an image is still compared exactly, by its digest,
  when matplotlib is the version the files were written with (`MANIFEST`); under another
  version its pixels may differ by a rounding, and only the text around it is compared;
- the JSON may differ from the golden file only by the documented key change of
  schema 2 (docs/solve-json.md): `json_as_schema_2` rewrites a golden file of schema 1
  into schema 2 by the rule stated there (a component's display name becomes its key:
  the inner step's parts by a fixed table, `X (exposed)` -> `exposed_sync:X`,
  `queueing on L` -> `queueing:L`, a phase P -> `sync_across_sites:P` where the golden
  file's own phase P crosses a link of kind `wan`, else `sync_in_site:P`), and the
  result must equal the output exactly, key for key and number for number.

`CTDSL_UPDATE_GOLDEN=1 pytest tests/test_outputs_*.py` rewrites the files (read the diff
before committing it: the point of these files is that they do not change).
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = ROOT / "tests" / "golden" / "outputs"
MANIFEST = GOLDEN / "manifest.json"
UPDATE = os.environ.get("CTDSL_UPDATE_GOLDEN") == "1"

SPECS = sorted(p.relative_to(ROOT).as_posix() for p in [*ROOT.glob("specs/*.ct"), *ROOT.glob("examples/*.ct")])
SPECS.append("tests/data/tpxpp_step.ct")

SOLVE = {
    "solve.txt": [],
    "solve.json": ["--format", "json"],
    "solve.md": ["--format", "markdown"],
    "solve.csv": ["--format", "csv"],
}

_PNG = re.compile(r"data:image/png;base64,([A-Za-z0-9+/=]+)")
_DIGEST = re.compile(r"data:image/png;sha256,([0-9a-f]{64})")


def folder(spec: str) -> Path:
    """tests/golden/outputs/examples-01_params for examples/01_params.ct."""
    return GOLDEN / spec.removesuffix(".ct").replace("/", "-")


def _matplotlib() -> str:
    import matplotlib

    return matplotlib.__version__


def digest_images(text: str) -> str:
    """Each embedded PNG as the SHA-256 of its bytes."""
    return _PNG.sub(lambda m: "data:image/png;sha256," + hashlib.sha256(base64.b64decode(m.group(1))).hexdigest(), text)


def blank_images(text: str) -> str:
    return _DIGEST.sub("data:image/png;sha256,(not compared)", text)


def run(args: list[str], tmp: Path | None = None, output: str | None = None) -> str:
    """The command's stdout, or with `output` the file it writes (into `tmp`); it must exit 0."""
    from typer.testing import CliRunner

    from ctdsl.cli import app

    if output is not None:
        args = [*args, "-o", str(tmp / output)]
    result = CliRunner().invoke(app, args, catch_exceptions=False)
    assert result.exit_code == 0, f"ctdsl {' '.join(args)} exited {result.exit_code}:\n{result.output}"
    if output is None:
        return result.stdout
    return (tmp / output).read_text(encoding="utf-8")


def compare(spec: str, name: str, produced: str) -> None:
    """`produced` against the golden file `name` of `spec` (or written, with CTDSL_UPDATE_GOLDEN=1)."""
    if name.startswith("report."):
        produced = digest_images(produced)
    path = folder(spec) / name
    if UPDATE:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "w", encoding="utf-8", newline="") as f:
            f.write(produced)
        MANIFEST.write_text(json.dumps({"matplotlib": _matplotlib()}, indent=2) + "\n", encoding="utf-8")
        return
    assert path.is_file(), f"{path.relative_to(ROOT)} is missing: run CTDSL_UPDATE_GOLDEN=1 pytest tests/test_outputs_*.py"
    with open(path, encoding="utf-8", newline="") as f:
        expected = f.read()
    if name.startswith("report.") and json.loads(MANIFEST.read_text(encoding="utf-8"))["matplotlib"] != _matplotlib():
        expected, produced = blank_images(expected), blank_images(produced)
    if name.endswith(".json"):
        expected = json_as_current(expected)
    assert produced == expected, f"{spec}: {name} differs from {path.relative_to(ROOT)}"


def json_as_current(text: str) -> str:
    """The golden JSON as the current schema prints it: a file of schema 1 through `json_as_schema_2`."""
    data = json.loads(text)
    if data["schema"] == "ctdsl.solve/1":
        data = json_as_schema_2(data)
    return json.dumps(data, indent=2, sort_keys=True) + "\n"


# schema 2 (docs/solve-json.md): a component is named by its key, no longer by its display name
INNER = {
    "compute": "compute", "recompute": "recompute", "tensor parallel": "tensor_parallel", "context parallel": "context_parallel",
    "expert parallel": "expert_parallel", "pipeline bubble": "pipeline_bubble", "pipeline parallel": "pipeline_parallel",
    "optimiser": "optimiser", "parameter gathers": "parameter_gathers",
}  # fmt: skip
PLAIN = ("transform", "stragglers", "overhead")


def component_key(name: str, phases: dict[str, list]) -> str:
    """A component's schema-2 key from its schema-1 name; `phases` maps a phase's name to its links."""
    if name in INNER:
        return INNER[name]
    if name in PLAIN:
        return name
    if name.endswith(" (exposed)"):
        return "exposed_sync:" + name.removesuffix(" (exposed)")
    if name.startswith("queueing on "):
        return "queueing:" + name.removeprefix("queueing on ")
    across = any(link["kind"] == "wan" for link in phases[name])  # a phase that crosses a WAN link
    return ("sync_across_sites:" if across else "sync_in_site:") + name


def json_as_schema_2(data: dict) -> dict:
    """A solve JSON of schema 1 rewritten by the rule of schema 2: every component's display name,
    where it names one (the step's components and binding, the closed forms, the timeline's
    parts and traffic), becomes its key; nothing else changes."""
    data["schema"] = "ctdsl.solve/2"
    for s in data["schemes"]:
        phases = {ph["name"]: ph["links"] for ph in s["phases"]}
        key = lambda name: component_key(name, phases)  # noqa: E731
        step = s["step"]
        step["components"] = {key(k): v for k, v in step["components"].items()}
        step["binding"] = key(step["binding"])
        for cf in s["closed_forms"]:
            cf["component"] = key(cf["component"])
        if s["timeline"] is not None:
            for d in s["timeline"]["dcs"]:
                d["per_micro_batch"] = {INNER[k]: v for k, v in d["per_micro_batch"].items()}
                d["components"] = {INNER[k]: v for k, v in d["components"].items()}
            for x in s["timeline"]["traffic"]:
                x["kind"] = INNER[x["kind"]]
    return data
