"""Model-parallel traffic inside a replica: tensor, pipeline, context and expert parallelism.

One GPU of the most-loaded pipeline stage, per micro-batch (parallelism.md sections
3 to 6; b sequences of s tokens a micro-batch, d width, a heads, g KV heads, d_h
head dim, beta the bytes of a value, L_st the stage's layers, W and alpha the
link's bandwidth per GPU and latency):

- tensor parallel: Megatron's two all-reduces in the forward pass and two in the
  backward pass of every layer (Shoeybi et al. arXiv:1909.08053 section 3), two more
  when the forward is recomputed (full recomputation), each over S = b (s/cp) d beta
  among tp GPUs; a ring all-reduce takes 2(tp-1) alpha + 2(tp-1)/tp S / W and sends
  2(tp-1)/tp S (Narayanan et al. arXiv:2104.04473 section 3.2: 8 b s h (t-1)/t per
  layer per micro-batch). With sequence parallelism each all-reduce is a
  reduce-scatter and an all-gather: the same bytes and the same 2(tp-1) latencies
  (Korthikanti et al. arXiv:2205.05198 section 4.2.2). On the critical path.
- context parallel (ring attention, Transformer Engine's P2P ring): a KV chunk
  2 b (s/cp) (g/tp) d_h beta is sent cp-1 times in the forward pass and twice as
  often in the backward pass (KV and dKV); each step's send overlaps the attention
  of the chunk received before it, 2 c b s^2 a d_h / (tp cp^2) FLOPs in the forward
  pass, so per layer 3 (cp-1) max(0, t_kv - t_attn) is exposed (derived,
  parallelism.md section 5).
- expert parallel: four all-to-alls per MoE layer (dispatch and combine, forward
  and backward; six with full recomputation), each of T k d beta bytes, T = b s /
  (cp tp) tokens a GPU routes with sequence parallelism (b s / cp without), of which
  (ep-1)/ep leaves the GPU; (ep-1) alpha + (ep-1)/ep S / W each (pairwise exchange).
  On the critical path.
- pipeline parallel: the activations of a micro-batch, b (s/cp) d beta / tp per GPU
  (scatter/gather, Narayanan section 4.1), forward, and their gradients backward, at
  every stage boundary; Calculon's convention (`calculon/llm/llm.py`) counts them
  exposed: 2 v m transfers per GPU per step, and one forward and one backward in each
  of the pp - 1 bubble slots, alpha + bytes / W each.

Which links carry a group, and how its collective runs across nodes, is collectives.py's:
Megatron's rank order lays each group over nodes (TP consecutive, CP tp apart, EP
consecutive, PP neighbours tp cp R apart); inside a node on the replica's `scaleup_link`,
across nodes as NCCL's rings and trees do (the node boundary over the group's NICs
together), every link at its `efficiency`. A degree given by a param moves the layout with it over the
param's range (collectives.py, "Layout").
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from ctdsl import units as U
from ctdsl.language.components import TRAFFIC, ComponentKey
from ctdsl.language.enums import ComputeModel
from ctdsl.model.entities import Model
from ctdsl.model import payload as PL
from ctdsl.symbolic import collectives as CO
from ctdsl.symbolic import dimensioned as D
from ctdsl.symbolic.collectives import LinkClass
from ctdsl.symbolic.context import Context
from ctdsl.symbolic.convert import NumericError, value
from ctdsl.symbolic.dimensioned import DimExpr

TP, CP, EP, PP = TRAFFIC
KINDS = TRAFFIC


@dataclass(frozen=True)
class Traffic:
    """One kind of model-parallel traffic of one GPU of the most-loaded stage."""

    kind: ComponentKey  # tensor, context, expert or pipeline parallel
    link: LinkClass
    per_micro: DimExpr  # bytes sent per micro-batch (per step for pipeline parallel: see `per_step`)
    time: DimExpr  # s per micro-batch on the critical path (pipeline parallel: per step)
    sent: DimExpr  # bytes one GPU sends per step
    busy: DimExpr  # s per step the transfers take, hidden or not
    formula: str


def positive(x: DimExpr) -> DimExpr:
    """max(0, x), evaluated where x is a number."""
    if x.e.is_Number:
        return x if x.e > 0 else D.zero(x.dim)
    return D.emax(D.zero(x.dim), x)


def indicator(n: DimExpr) -> DimExpr:
    """1 where the count n is above 1, else 0: a number, or min(1, n - 1) for a count given by a param."""
    if n.e.is_Number:
        return D.one() if n.e > 1 else D.zero(U.ONE)
    return D.emin(D.one(), n - 1)


class ReplicaLinks:
    """The scale-up and scale-out links of one dc's replica, per GPU."""

    def __init__(self, ctx: Context, dc: str, notes: list[str]):
        spec = ctx.spec
        self.dc = spec.dcs[dc]
        self.rep = spec.replicas[self.dc.replica]
        self.env = ctx.symbols.defaults()
        self.box = ranges(ctx)
        self.notes = notes
        q = lambda x, default: ctx.q(x, U.ONE) if x is not None else DimExpr(sp.Integer(default), U.ONE)  # noqa: E731
        self.gpn = q(self.rep.gpus_per_node, 8)
        self.domain = q(self.rep.scaleup, 0) if self.rep.scaleup is not None else self.gpn
        out = spec.links[self.dc.link]
        share = D.one()
        if self.rep.nics is not None:
            share = D.emin(D.one(), q(self.rep.nics, 1) / self.gpn)
        self.scale_out = LinkClass(out.name, "scale-out", ctx.field(out, "bandwidth") * share * efficiency(ctx, out), ctx.field(out, "latency"), ctx.field(out, "energy_per_byte"))
        up = spec.links.get(self.rep.scaleup_link) if self.rep.scaleup_link else None
        if up is None:
            self.scale_up = self.scale_out
            self._no_scaleup = True
        else:
            self.scale_up = LinkClass(up.name, "scale-up", ctx.field(up, "bandwidth") * efficiency(ctx, up), ctx.field(up, "latency"), ctx.field(up, "energy_per_byte"), up.in_network)
            self._no_scaleup = False
        self.fabric = CO.Fabric(self.scale_up, self.scale_out)
        self.replicas = ctx.q(self.dc.replicas, U.ONE) if self.dc.replicas is not None else D.one()

    def number(self, x: DimExpr) -> float:
        """A count at the params' defaults."""
        try:
            return value(x.e, self.env)
        except (NumericError, ZeroDivisionError):  # pragma: no cover - counts are checked
            return float("inf")

    def layout(self, n: DimExpr, stride: DimExpr) -> CO.Layout:
        """Megatron's layout of a group of n members `stride` ranks apart (collectives.py): whole
        numbers where the params' ranges cannot move it, else forms in the params."""
        lay = CO.layout(n, stride, self.domain, self.number, self.box)
        if not lay.spans and self._no_scaleup and self.number(n) > 1:
            note = f"replica '{self.rep.name}' names no scaleup_link: traffic inside a node is costed on {self.scale_out.link}"
            if note not in self.notes:
                self.notes.append(note)
        return lay

    def note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)


def ranges(ctx: Context) -> dict[sp.Symbol, tuple[float, float]]:
    """Each param's range (lo, hi), where it has one: what a sweep, the explorer or a break-even
    may move it over; a param without one is held at no value (its layouts are forms)."""
    return {i.symbol: (float(i.param.lo), float(i.param.hi)) for i in ctx.symbols.info.values() if i.param.lo is not None and i.param.hi is not None}


def efficiency(ctx: Context, link) -> DimExpr:
    """A link's achieved fraction of its line rate (1 where it gives none)."""
    return ctx.field(link, "efficiency") if link.efficiency is not None else D.one()



class ReplicaTraffic:
    """Per-micro-batch traffic of one dc's replica (module docstring)."""

    def __init__(self, ctx: Context, model: Model, dc: str, links: ReplicaLinks, stage_layers: DimExpr, rate: DimExpr):
        self.ctx, self.model, self.links = ctx, model, links
        rep = links.rep
        q = lambda x: ctx.q(x, U.ONE) if x is not None else D.one()  # noqa: E731
        self.tp, self.pp, self.cp, self.ep = q(rep.tp), q(rep.pp), q(rep.cp), q(rep.ep)
        self.v = q(rep.virtual_stages)
        self.b = q(rep.micro_batch)
        sh = lambda key: ctx.shape(model, key)  # noqa: E731
        self.s, self.d, self.L = sh("seq"), sh("width"), sh("layers")
        self.heads, self.kv = sh("heads"), sh("kv_heads")
        self.dh = sh("head_dim") if PL.has(model, "head_dim") else self.d / self.heads
        self.beta = ctx.field(model, "bytes_per_value")
        self.full = str(rep.recompute) == "full"
        # with full recomputation the recomputed share of the layers runs its forward's collectives again
        self.again = (ctx.field(rep, "recompute_share") if rep.recompute_share is not None else D.one()) if self.full else D.zero(U.ONE)
        self.sp_on = rep.sequence_parallel
        # with sequence parallelism Megatron's column-parallel layer (its backward, which
        # tp_async_backward states: LinearWithGradAccumulationAndAsyncCommunication) keeps its input
        # scattered and gathers it again for its weight gradient where the forward was not
        # recomputed: two all-gathers a layer, one all-reduce equivalent (overlaps.py). Without the
        # option, the papers' count: sequence parallelism sends what tensor parallelism does
        # (Korthikanti et al. section 4.2.2)
        megatron = rep.tp_async_backward and rep.compute is ComputeModel.OPERATIONS
        self.regather = (D.one() - self.again) if self.sp_on and megatron else D.zero(U.ONE)
        self.stage_layers = stage_layers
        self.rate = rate  # the device's FLOP/s: peak x efficiency

    def tensor(self) -> Traffic | None:
        if self.tp.e == 1:
            return None
        links = self.links
        lay = links.layout(self.tp, D.one())
        size = self.b * (self.s / self.cp) * self.d * self.beta
        n = 4 + 2 * self.again + self.regather
        one, at = CO.all_reduce(links.fabric, lay, size, links.rep.algorithm, links.env)
        if len(at) > 1:
            where = f"over {lay.at[0]} GPUs a node" if lay.spans else "in one node"
            links.note(f"tp all-reduce ({where}): {one.algorithm} " + "(" + ", ".join(f"{k} {v * 1e3:.3g} ms" for k, v in sorted(at.items())) + " each at the defaults)")
        per = self.stage_layers * n * 2 * (self.tp - 1) / self.tp * size
        time = self.stage_layers * n * one.time
        return Traffic(TP, one.link, per, time, per, time, f"{sp.sstr(n.e)} all-reduces of b (s/cp) d beta per layer per micro-batch ({one.algorithm})")

    def context(self) -> Traffic | None:
        if self.cp.e == 1:
            return None
        lay = self.links.layout(self.cp, self.tp)
        link = self.links.fabric.link(lay)  # each ring step: one GPU's transfer
        chunk = 2 * self.b * (self.s / self.cp) * (self.kv / self.tp) * self.dh * self.beta
        t_kv = link.latency + chunk / link.bandwidth
        c = PL.attention_factor(self.model)
        flops = 2 * c * self.b * self.s * self.s * self.heads * self.dh / (self.tp * self.cp * self.cp)
        t_attn = DimExpr(flops.e, U.OPS) / self.rate
        per = self.stage_layers * 3 * (self.cp - 1) * chunk
        exposed = self.stage_layers * 3 * (self.cp - 1) * positive(t_kv - t_attn)
        busy = self.stage_layers * 3 * (self.cp - 1) * t_kv
        return Traffic(CP, link, per, exposed, per, busy, "3 (cp - 1) KV chunks of 2 b (s/cp) (g/tp) d_h beta per layer, each behind one step of ring attention")

    def expert(self) -> Traffic | None:
        if self.ep.e == 1 or not PL.is_moe(self.model):
            return None
        lay = self.links.layout(self.ep, D.one())
        tokens = self.b * self.s / self.cp / (self.tp if self.sp_on else 1)
        size = tokens * self.ctx.shape(self.model, "experts_per_token") * self.d * self.beta
        moe = PL.moe_layers(self.model, self.ctx.formulas) * self.stage_layers / self.L
        n = 4 + 2 * self.again
        a2a = CO.all_to_all(self.links.fabric, lay, size)
        link, a2a = a2a.link, a2a.time
        per = moe * n * (self.ep - 1) / self.ep * size
        time = moe * n * a2a
        return Traffic(EP, link, per, time, per, time, f"{sp.sstr(n.e)} all-to-alls of T k d beta per MoE layer per micro-batch")

    def pipeline(self, micro: DimExpr) -> Traffic | None:
        """Per step, not per micro-batch: (2 v m + 2 (pp - 1)) transfers on the critical path."""
        if self.pp.e == 1:
            return None
        # neighbouring stages are tp cp dp ranks apart (Megatron's order: pipeline outermost)
        lay = self.links.layout(self.pp, self.tp * self.cp * self.links.replicas)
        size = self.b * (self.s / self.cp) * self.d * self.beta / self.tp
        hop = CO.p2p(self.links.fabric, lay, size)
        link, one = hop.link, hop.time
        on = indicator(self.pp)
        sent = 2 * self.v * micro * size * on
        time = (2 * self.v * micro + 2 * (self.pp - 1)) * one * on
        return Traffic(PP, link, size, time, sent, 2 * self.v * micro * one * on, "activations b (s/cp) d beta / tp forward and their gradients backward at each stage boundary")
