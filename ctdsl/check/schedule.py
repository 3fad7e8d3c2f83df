"""Checks of a scheme's sync schedule: overlap, buckets, fragments, delay and the inner sync.

At the params' defaults (docs/cost-model.md, "The training step"):

- `overlap = true` hides the whole sync behind the next H steps; a delay, fragments
  or an inner sync would count the same overlap twice (CT435);
- `bucket` applies only to a sync that overlaps the backward pass (CT113);
- a scheme syncs at most one fragment per step: fragments <= H (CT435);
- `fragment_layers` sizes the fragments in layers: it needs the model's layers and
  says what `fragments` would (CT123); so does `ready = layer` (CT124);
- `inner = dc` needs dcs of replicas (a dc's replicas are its data-parallel group),
  a sync period H > 1 and a hierarchical collective, whose across-dc phase it keeps
  (CT436).
"""

from __future__ import annotations

import math

from ctdsl.check.draft import Draft
from ctdsl.diagnostics import DiagnosticSink, Label
from ctdsl.language.enums import InnerSync, Readiness
from ctdsl.model import expr as E

HIERARCHICAL = ("hier_allreduce", "hier_allgather")


_value = E.value_or_none


def check_schedules(draft: Draft, sink: DiagnosticSink) -> None:
    env = draft.defaults()
    replicas = any(d.replica for d in draft.dcs.values())
    for s in draft.schemes.values():
        span = lambda key: s.spans.get(key, s.span)  # noqa: E731
        period = _value(s.period, env) or 1
        fragments = _value(s.fragments, env) or 1
        if s.fragment_layers is not None:
            fragments = _fragments_of_layers(draft, s, env, sink) or fragments
        for key, on in (("ready", s.ready is Readiness.LAYER), ("bucket", s.bucket_per_layer)):
            if on and not _has_layers(draft, s):
                sink.error(
                    "CT124",
                    f"scheme '{s.name}': {key} = layer needs the layers of model '{s.model}', which gives none",
                    span(key),
                    label="per layer",
                    help="give the model's shape (layers, width, ...), or " + ("remove ready (the fragments are then ready at the step's end)" if key == "ready" else "give the bucket as a size: bucket = 25 MB"),
                )
        delay = _value(s.delay, env) or 0
        if s.overlap:
            for key, on in (("fragments", fragments > 1), ("delay", delay > 0), ("inner", s.inner is InnerSync.DC)):
                if on:
                    sink.error(
                        "CT435",
                        f"scheme '{s.name}': overlap = true already hides the whole sync behind the next H steps; {key} would count that overlap again",
                        span(key),
                        secondary=(Label(span("overlap"), "overlap = true"),),
                        help="use overlap = backward (the backward pass) with delay = N (inner steps), or remove " + key,
                    )
        if "bucket" in s.spans and not s.backward:
            sink.error(
                "CT113",
                f"scheme '{s.name}': bucket applies only to a sync that overlaps the backward pass",
                s.spans["bucket"],
                label="only with overlap = backward",
                help="add overlap = backward, or remove bucket",
            )
        if ("fragments" in s.spans or "fragment_layers" in s.spans) and fragments > period:
            sink.error(
                "CT435",
                f"scheme '{s.name}': {fragments:g} fragments, but a sync every {period:g} steps: each fragment syncs once every H steps, one every H / F steps",
                span("fragments" if "fragments" in s.spans else "fragment_layers"),
                help="give at most as many fragments as steps between syncs (period)",
            )
        if s.inner is InnerSync.DC:
            why = None
            if not replicas:
                why = "the dcs hold no replicas: inner = dc makes a dc's replicas one data-parallel group"
            elif period <= 1:
                why = "the sync period is 1: with H = 1 the inner and the outer sync would both run every step"
            elif str(s.collective) not in HIERARCHICAL:
                why = f"collective {s.collective} has no phase across dcs to keep: use hier_allreduce or hier_allgather"
            if why is not None:
                sink.error("CT436", f"scheme '{s.name}': inner = dc cannot apply: {why}", span("inner"), help="remove inner, or " + ("set period = H" if period <= 1 else "change what it names"))


def _has_layers(draft: Draft, s) -> bool:
    model = draft.models.get(s.model)
    return model is not None and bool(model.shape) and model.shape.get("layers") is not None


def _fragments_of_layers(draft: Draft, s, env, sink: DiagnosticSink) -> float | None:
    """F = ceil(L / fragment_layers) at the defaults; None (reported, CT123) where it cannot be."""
    where = s.spans.get("fragment_layers", s.span)
    if "fragments" in s.spans and "fragment_layers" in s.spans:
        sink.error(
            "CT123",
            f"scheme '{s.name}' gives both fragments and fragment_layers",
            where,
            secondary=(Label(s.spans["fragments"], "fragments given here"),),
            help="give one: the fragments as a count, fragments = 4, or as a size in layers, fragment_layers = 3",
        )
        return None
    model = draft.models.get(s.model)
    layers = model.shape.get("layers") if model is not None and model.shape else None
    if layers is None:
        sink.error(
            "CT123",
            f"scheme '{s.name}': fragment_layers needs the layers of model '{s.model}', which gives none",
            where,
            label="a size in layers",
            help="give the model's shape (layers, width, ...), or the fragments as a count: fragments = 4",
        )
        return None
    L, n = _value(layers, env), _value(s.fragment_layers, env)
    if L is None or not n:
        return None
    return float(math.ceil(L / n))
