"""Checks of a scheme's sync schedule: overlap, buckets, fragments, delay and the inner sync.

At the params' defaults (docs/cost-model.md, "The training step"):

- `overlap = true` hides the whole sync behind the next H steps; a delay, fragments
  or an inner sync would count the same overlap twice (CT435);
- `bucket` applies only to a sync that overlaps the backward pass (CT113);
- a scheme syncs at most one fragment per step: fragments <= H (CT435);
- `inner = dc` needs dcs of replicas (a dc's replicas are its data-parallel group),
  a sync period H > 1 and a hierarchical collective, whose across-dc phase it keeps
  (CT436).
"""

from __future__ import annotations

from ctdsl.check.draft import Draft
from ctdsl.diagnostics import DiagnosticSink, Label
from ctdsl.language.enums import InnerSync
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
        if "fragments" in s.spans and fragments > period:
            sink.error(
                "CT435",
                f"scheme '{s.name}': {fragments:g} fragments, but a sync every {period:g} steps: each fragment syncs once every H steps, one every H / F steps",
                span("fragments"),
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
