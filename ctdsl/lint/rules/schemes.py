"""CTL008, CTL010: what a break-even or a hierarchical collective needs of the study."""

from __future__ import annotations

from typing import Iterator

from ctdsl.diagnostics import Severity
from ctdsl.lint.context import Context
from ctdsl.lint.registry import Hit, rule
from ctdsl.lint.rules.shared import is_user, shown_label

# ---- CTL008 ---------------------------------------------------------------------------


@rule(
    "CTL008",
    "missing-steps-to-target",
    Severity.WARNING,
    "A break-even is requested, but a scheme it compares has no steps to target.",
    bad="""
    scheme band { payload = band; fraction = 1/16; collective = hier_allgather }
    breakeven band vs adamw over wan_bw
    """,
    good="""
    scheme band { payload = band; fraction = 1/16; collective = hier_allgather; steps = 11500 }
    breakeven band vs adamw over wan_bw
    """,
)
def missing_steps(ctx: Context) -> Iterator[Hit]:
    """
    A break-even compares time to target, steps x step time: where two schemes
    need different numbers of steps (top-k and DiLoCo usually need more), the
    bandwidth at which they tie depends on those numbers. A scheme without
    `steps` has no time to target, so the break-even can only compare step times,
    which is rarely the question asked. Steps to target are measured by
    experiment and given as inputs.
    """
    spec = ctx.spec
    for b in spec.breakevens:
        for name in dict.fromkeys((b.x, b.y)):
            s = spec.schemes.get(name)
            if s is None or s.steps is not None:
                continue
            yield Hit(
                f"break-even of '{b.x}' vs '{b.y}' needs steps to target, but scheme '{name}' has none",
                b.span,
                label="compares time to target",
                secondary=shown_label(ctx, s.span, "no steps"),
                notes=("time to target = steps to target x step time",),
                help=f"add steps = N to scheme '{name}' (measured by experiment)",
            )



# ---- CTL010 ---------------------------------------------------------------------------


@rule(
    "CTL010",
    "degenerate-hierarchy",
    Severity.WARNING,
    "A dc with a single worker under a hierarchical collective, whose intra-DC phases then do nothing.",
    bad="""
    dc east { workers = 1; device = gpu; link = ib_ndr; switch = tor }
    scheme adamw { payload = dense; collective = hier_allreduce; ... }
    """,
    good="""
    dc east { workers = 8; device = gpu; link = ib_ndr; switch = tor }
    # or, with one worker per dc: collective = ring_allreduce
    """,
)
def degenerate_hierarchy(ctx: Context) -> Iterator[Hit]:
    """
    A hierarchical collective (hier_allreduce, hier_allgather) reduces or gathers
    inside each dc, exchanges between dcs, then distributes inside each dc. With
    one worker in a dc (or one replica without context parallelism, whose GPUs
    each hold a shard no other GPU of the dc holds) the inside phases move
    nothing and the hierarchy is a flat exchange between data centres. That is rarely what was meant: usually the
    worker count is a placeholder, or a flat collective (ring_allreduce,
    allgather) was intended.
    """
    spec = ctx.spec
    on: dict[str | None, list] = {}  # the hierarchical schemes by the sites they run on (a variant's dcs)
    for s in spec.schemes.values():
        if s.collective in ("hier_allreduce", "hier_allgather"):
            on.setdefault(s.sites, []).append(s)
    for sites_name, hier in on.items():
        yield from _degenerate(ctx, spec.sites_of(hier[0]), hier)


def _degenerate(ctx: Context, sites, hier) -> Iterator[Hit]:
    first = hier[0]
    for dc in sites.dcs.values():
        if not is_user(ctx, dc) or _members(ctx, dc) != 1:
            continue
        names = ", ".join(f"'{s.name}'" for s in hier[:3]) + (" and others" if len(hier) > 3 else "")
        where = f" in variant '{sites.name}'" if sites.name is not None else ""
        key = "replicas" if dc.replica else "workers"
        one = "a single replica" if dc.replica else "a single worker"
        yield Hit(
            f"dc '{dc.name}'{where} has {one}, so the intra-DC phases of {first.collective} "
            f"(scheme{'s' * (len(hier) > 1)} {names}) do nothing",
            (ctx.field_span(dc, key) if sites.name is not None else None) or ctx.at(dc, key),
            label="one worker",
            secondary=shown_label(ctx, ctx.own_span(first, "collective"), first.collective),
            notes=("with one worker per dc the hierarchy is a flat exchange between data centres",),
            help="give the dc its real number of workers, or use a flat collective (ring_allreduce, allgather)",
        )


def _members(ctx: Context, dc) -> float | None:
    """Members of one shard group in the dc: its workers, or cp x its replicas."""
    if not dc.replica:
        return dc.workers
    cp, n = ctx.value(ctx.spec.replicas[dc.replica].cp), ctx.value(dc.replicas)
    return None if cp is None or n is None else cp * n
