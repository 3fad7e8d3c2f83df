"""The training step's tables: the replica's inner step, its model-parallel traffic by kind, and
each scheme's syncs with what they expose (docs/cost-model.md, "The training step")."""

from __future__ import annotations

from ctdsl import units as U
from ctdsl.language.components import INNER, of
from ctdsl.report.blocks import Grid


def _f(q) -> str:
    return "-" if q is None else str(q)


def _n(x: float) -> str:
    return f"{x:g}" if x == x else "n/a"


def _model(sol, r) -> str:
    return sol.spec.schemes[r.name].model


def _sites(groups: dict) -> bool:
    """Whether the rows need a sites column: some scheme runs on a variant of the sites."""
    return any(key[1] is not None for key in groups)


def inner_table(sol) -> Grid | None:
    """The inner step per dc, once for every model and variant of the sites (the schemes that train
    one model on one set of sites share it)."""
    groups: dict[tuple, tuple] = {}
    dcs: dict[tuple, list[str]] = {}  # alike dcs share a row
    for r in sol.schemes.values():
        if r.timeline is not None:
            for d in r.timeline.dcs:
                key = (_model(sol, r), r.sites, d.micro_batches.value, tuple((k, q.value) for k, q in d.components.items()), d.window.value)
                groups.setdefault(key, (d, r.timeline))
                if d.dc not in dcs.setdefault(key, []):
                    dcs[key].append(d.dc)
    if not groups:
        return None
    names = [k for k in INNER if any(k in d.components for d, _ in groups.values())]
    sites = _sites(groups)
    head = ["model", *(["sites"] if sites else []), "dcs", "micro-batches", *(of(k).label for k in names), "inner step", "window"]
    t = Grid("The training step: a replica's inner step at the defaults", head)
    for key, (d, _tl) in groups.items():
        model, where = key[:2]
        cells = [model, *([where or "declared"] if sites else []), ", ".join(dcs[key]), _n(d.micro_batches.value)]
        t.rows.append(cells + [_f(d.components.get(k)) for k in names] + [_f(d.inner), _f(d.window)])
    t.notes.append("per step on one GPU of the most-loaded pipeline stage; bubble: (pp - 1) / v micro-batches of compute, recompute and the traffic inside them")
    t.notes.append("window: the backward pass of the last micro-batch, which a sync that overlaps the backward pass hides in")
    t.notes.extend(sorted({n for _, tl in groups.values() for n in tl.notes}))
    return t


def traffic_table(sol) -> Grid | None:
    """Model-parallel traffic of one GPU per step, by kind, on the link it uses."""
    groups: dict[tuple, object] = {}
    dcs: dict[tuple, list[str]] = {}  # alike dcs share a row
    for r in sol.schemes.values():
        if r.timeline is not None:
            for x in r.timeline.traffic:
                key = (_model(sol, r), r.sites, x.kind, x.link, x.per_micro.value, x.sent.value, x.busy.value, x.exposed.value)
                groups.setdefault(key, x)
                if x.dc not in dcs.setdefault(key, []):
                    dcs[key].append(x.dc)
    if not groups:
        return None
    sites = _sites(groups)
    head = ["model", *(["sites"] if sites else []), "dcs", "parallelism", "link", "per micro-batch", "per step", "busy", "exposed"]
    t = Grid("Model-parallel traffic per GPU per step", head)
    for key, x in groups.items():
        model, where = key[:2]
        cells = [model, *([where or "declared"] if sites else []), ", ".join(dcs[key]), of(x.kind).label, f"{x.link} ({x.role})"]
        t.rows.append(cells + [_f(x.per_micro), _f(x.sent), _f(x.busy), _f(x.exposed)])
    t.notes.append("bytes one GPU sends; busy: the time its transfers take; exposed: what the step waits for (pipeline parallel: also the transfers of the bubble's slots)")
    t.notes.append("per micro-batch for pipeline parallel: one transfer at a stage boundary")
    return t


def sync_table(sol) -> Grid | None:
    """Each scheme's syncs, where one overlaps something or runs every step (inner = dc)."""
    rows = [r for r in sol.schemes.values() if any(sy.exposed is not None or sy.every == 1 and len(r.syncs) > 1 for sy in r.syncs)]
    if not rows:
        return None
    t = Grid("Sync schedule", ["scheme", "sync", "every", "whole sync", "fragments", "buckets", "one bucket", "window", "slack", "exposed / step"])
    for r in rows:
        for sy in r.syncs:
            steps = "step" if sy.every == 1 else f"{_n(sy.every)} steps"
            exposed = _f(sy.exposed) if sy.exposed is not None else f"{U.format_quantity(sy.time.value / sy.every, U.TIME)} (in series)"
            t.rows.append([r.name, sy.name, steps, _f(sy.time), _n(sy.fragments), _n(sy.buckets), _f(sy.bucket_time), _f(sy.window), _f(sy.slack), exposed])
    t.notes.append("exposed per sync: max(0, max(B tau - w (B - 1) / B, tau) - slack), B buckets of tau released over the window w; per step x fragments / every")
    t.notes.append("slack: delay x the inner step (the inner steps a sync may take while training goes on)")
    return t


__all__ = ["inner_table", "traffic_table", "sync_table"]
