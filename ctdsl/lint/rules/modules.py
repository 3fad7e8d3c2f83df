"""CTL002, CTL003: pluggable modules, their stage rates and their compute budget."""

from __future__ import annotations

from typing import Iterator

from ctdsl import units as U
from ctdsl.diagnostics import Severity
from ctdsl.language.tolerances import above
from ctdsl.language.transforms import optical_needs, optics_performs_transform
from ctdsl.lint.context import Context
from ctdsl.lint.registry import Hit, rule
from ctdsl.lint.rules.shared import is_user, quantity, shown_label, times

# A stage of a module may be faster than the line rate it serves (engineering
# headroom); more than this factor above it, the figure can never matter and is
# more often a unit slip (Gb/s written GB/s is 8x, a prefix slip 1000x).
STAGE_HEADROOM = 2.0


# ---- CTL002 ---------------------------------------------------------------------------


@rule(
    "CTL002",
    "module-rate-never-binds",
    Severity.WARNING,
    "A pluggable's line rate above its host port, or a stage far faster than the line rate: it can never bind.",
    bad="""
    pluggable qsfp {
      port { rate = 25 GB/s; host = 12.5 GB/s }
      optics { rate = 140 GB/s }      # meant 14 GB/s
      ...
    }
    """,
    good="""
    pluggable qsfp {
      port { rate = 25 GB/s; host = 50 GB/s }
      optics { rate = 14 GB/s }
      ...
    }
    """,
)
def module_rate_never_binds(ctx: Context) -> Iterator[Hit]:
    """
    A module's stream passes its stages in a pipeline and the slowest sets the
    rate. The port stage's `rate` is the module's line rate, capped by the `host`
    port it sits in: a line rate above the host port can never bind (the module
    runs at the host's rate), so one of the two is likely mis-typed.

    The optics and FPGA stages serve the line: a stage somewhat faster than the
    line rate is ordinary headroom (the flagship's 40 GB/s FPGA on a 25 GB/s line),
    but one more than twice as fast never matters to any result and is more often
    a unit slip (Gb/s written as GB/s is a factor of 8, a prefix slip 1000). Such a
    stage is reported. Rates are compared at the params' defaults.
    """
    for plug in ctx.spec.pluggables.values():
        if not is_user(ctx, plug):
            continue
        port = plug.stages.get("port")
        rate = ctx.value(port.rate) if port is not None else None
        if rate is None:
            continue
        host = ctx.value(port.host)
        line = rate
        if host is not None:
            line = min(rate, host)
            if above(rate, host):
                yield Hit(
                    f"pluggable '{plug.name}': line rate {quantity(rate, U.RATE)} is above its host port's "
                    f"{quantity(host, U.RATE)}, so it can never bind",
                    ctx.at(plug, "port.rate", "port"),
                    label=f"capped at {quantity(host, U.RATE)} by the host port",
                    secondary=shown_label(ctx, ctx.field_span(plug, "port.host"), "host port"),
                    notes=("the module runs at min(rate, host): the line rate written here changes nothing",),
                    help="check both rates and their units (GB/s or Gb/s); the line rate is the module's own, "
                    "the host rate is the port it sits in",
                )
        for sname in ("optics", "fpga"):
            st = plug.stages.get(sname)
            r = ctx.value(st.rate) if st is not None else None
            if r is None or r <= STAGE_HEADROOM * line:
                continue
            yield Hit(
                f"pluggable '{plug.name}': {sname} rate {quantity(r, U.RATE)} is {times(r / line)} the line rate "
                f"{quantity(line, U.RATE)}, so it can never bind",
                ctx.at(plug, f"{sname}.rate", sname),
                label=f"{times(r / line)} the line rate",
                secondary=shown_label(ctx, ctx.field_span(plug, "port.rate"), "line rate"),
                notes=(f"the stage never sees more than the line rate; a bit/byte slip would make it {quantity(r / 8, U.RATE)}",),
                help=f"check the {sname} rate and its unit; a stage faster than the line it serves only needs "
                f"to be written if it could bind",
            )


# ---- CTL003 ---------------------------------------------------------------------------

@rule(
    "CTL003",
    "charged-transform-over-budget",
    Severity.WARNING,
    "A transform charged to a module needs more FLOPs per byte than the module's budget per byte.",
    bad="""
    pluggable qsfp { port { rate = 25 GB/s }; compute { budget = 50 GFLOP/s }; ops = [dct] }
    scheme band { payload = band; fraction = 1/16; cost = 10 FLOP/B; at = qsfp; ... }
    """,
    good="""
    # let the optics perform the DCT (free), raise the budget, or run it on the GPU
    pluggable qsfp { port { rate = 25 GB/s }; optics { rate = 25 GB/s; performs = [dct] }; ops = [dct] }
    """,
)
def charged_transform_over_budget(ctx: Context) -> Iterator[Hit]:
    """
    A scheme placed on a pluggable (`at = qsfp`) runs its transform in the module.
    Unless the optics performs it (`optics { performs = [dct] }`), its arithmetic is
    charged against the compute stage's budget. The budget per byte is budget /
    line rate: a 50 GFLOP/s budget on a 25 GB/s module affords 2 FLOP per byte.
    A transform that needs more (a DCT costs about 10 to 15 FLOP per BF16 byte)
    makes the compute stage the slowest: the module then runs at budget / cost,
    below its line rate, by the factor reported. That may be the point of a study,
    but more often a budget was given in the wrong unit or the optics was meant to
    do the work; if it is intended, suppress the finding on that line.

    A module with no compute stage has no budget: any charged cost binds it.
    Values are taken at the params' defaults.
    """
    spec = ctx.spec
    for s in spec.schemes.values():
        if s.at.kind != "pluggable" or s.at.name not in spec.pluggables:
            continue
        plug = spec.pluggables[s.at.name]
        cost = ctx.value(s.cost)
        if not cost:
            continue
        optics = plug.stages.get("optics")
        if optics is not None and optics_performs_transform(s.payload, optics.performs):
            continue  # the optics performs the transform: it costs the budget nothing
        port = plug.stages.get("port")
        line = ctx.value(plug.line_rate) if port is not None and port.rate is not None else None
        if not line:
            continue
        compute = plug.stages.get("compute")
        budget = ctx.value(compute.budget) if compute is not None else None
        where = ctx.at(s, "at")
        cost_label = shown_label(ctx, ctx.own_span(s, "cost"), f"{cost:g} FLOP/B")
        if not budget:
            yield Hit(
                f"scheme '{s.name}' charges {cost:g} FLOP/B to pluggable '{plug.name}', which has no compute budget",
                where,
                label=f"runs the transform in '{plug.name}'",
                secondary=cost_label,
                help="give the module a compute stage (compute { budget = 50 GFLOP/s }), let its optics "
                "perform the transform, or run it on the GPU (at = gpu)",
            )
            continue
        per_byte = budget / line
        if not above(cost, per_byte):
            continue
        factor = cost / per_byte
        yield Hit(
            f"scheme '{s.name}': its transform needs {cost:g} FLOP/B, but pluggable '{plug.name}' affords "
            f"{per_byte:.3g} FLOP/B ({quantity(budget, U.OPS_RATE)} / {quantity(line, U.RATE)}): it binds the module by {times(factor)}",
            where,
            label=f"charged to '{plug.name}'",
            secondary=cost_label + shown_label(ctx, ctx.field_span(plug, "compute.budget"), f"{per_byte:.3g} FLOP/B at the line rate"),
            notes=(
                f"the compute stage runs at {quantity(budget / cost, U.RATE)}, {times(factor)} below the line rate "
                f"{quantity(line, U.RATE)}",
            ),
            help=f"a budget of {quantity(cost * line, U.OPS_RATE)} keeps up with the line; or let the optics perform "
            f"the transform (performs = [{', '.join(optical_needs(s.payload)) or 'dct'}]), or run it on the GPU (at = gpu)",
        )
