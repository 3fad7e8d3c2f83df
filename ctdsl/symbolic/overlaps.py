"""Communication overlapped with compute, each as a stated option with its convention (issue 27 item 3).

What a step waits for of a collective that runs beside compute is its **exposed** part; the
ledger records what it hid behind (`ledger.Exposure`). Per micro-batch t_c is the compute
and t_r the recomputation of one stage (timeline.py), t_f = t_c / 3 its forward pass.

- **Tensor-parallel collectives with the GEMMs** (`tp_comm_overlap = true` on the replica;
  Megatron's `--tp-comm-overlap`, Transformer Engine's userbuffers, which need sequence
  parallelism): each all-gather and reduce-scatter is split into tp chunks pipelined with
  the GEMM's chunks, so the first chunk's transfer cannot hide. A micro-batch waits for

      max(t_tp / tp, t_tp - (t_c + t_r))

  (the chunk that cannot hide, or what the micro-batch's compute cannot cover). The window
  is the micro-batch's whole compute: the GEMMs are most of it, and the per-operation
  compute can narrow it to them. Calculon's `tensor_par_overlap = pipe` is the same
  structure (calculon/llm/llm.py, `LinearOverlapped`: the first tile exposed).
- **The backward pass's tensor-parallel collectives with the weight-gradient GEMMs**
  (`tp_async_backward = true` on a replica with `compute = operations`, without
  `tp_comm_overlap`, which subsumes it: Megatron-LM's default since 2021 and
  Megatron-DeepSpeed's, `LinearWithGradAccumulationAndAsyncCommunication` in
  `megatron/core/tensor_parallel/layers.py`, its `async_tensor_model_parallel_allreduce`
  and the sequence-parallel path of the same backward). A column-parallel layer (QKV, MLP
  up) launches the collective of its input gradient asynchronously and computes its
  weight gradient meanwhile: without sequence parallelism the all-reduce (the backward of
  the operator f; the row-parallel layers' g is the identity backward), with it the
  reduce-scatter (half an all-reduce's bytes), while the all-gather of the row-parallel
  layers' output gradient (the backward of the forward's reduce-scatter) is waited for.
  The forward's collectives, and the recomputed forward's, are waited for. With sequence
  parallelism and without full recomputation, each column-parallel layer also gathers its
  scattered input again in the backward pass (traffic.py: one all-reduce equivalent a layer,
  r = 1), launched before its input-gradient GEMM and run beside it. With n the all-reduce
  equivalents of a layer (4, + 2 with full recomputation, + r), t_1 = t_tp / (L n) one of
  them, w_QKV and w_up the two layers' GEMMs (a weight or input gradient has the time of its
  forward: the same shape), a micro-batch waits for

      t_tp (n - 2) / n + L sum_w x(t_1, w)                            without sequence parallelism
      t_tp (n - 1 - r) / n + L sum_w (x(t_1 / 2, w) + r x(t_1 / 2, w))     with it

  where x(c, w) is what a collective of time c beside a GEMM of time w exposes. A collective
  holds some of the GPU's SMs while it runs (NCCL's channels, one SM each: the link's
  `channels`, f = min(1, channels / sms) of the device's `sms`), and the GEMM beside it runs
  on the rest, so the pair takes max(w + f c, c):

      x(c, w) = max(f c, c - w)

  (f = 0 where the link or the device gives none: the collective hides whole behind a GEMM
  at least as long; f = 1: nothing hides). The weight gradient is what the input-gradient
  collective may hide behind, the input gradient what the gather may, so a GEMM shorter
  than its collective leaves the difference exposed.
- **Pipeline point-to-point with compute** (`overlap_p2p = true`; Megatron's
  `--overlap-p2p-communication`, batched isend/irecv): the 2 v m transfers of the steady
  state run beside the m micro-batches' compute, the 2 (pp - 1) of the warm-up and
  cool-down stay exposed (nothing to hide behind in the bubble):

      2 (pp - 1) t_p2p + max(0, 2 v m t_p2p - m (t_c + t_r))

- **The parameter all-gather with the next forward** (`overlap_param_gather = true` on the
  scheme; Megatron's `--overlap-param-gather` with the distributed optimizer): the
  all-gather of the updated parameters (the all-gather phases of `hier_allreduce`, or the
  inner sync's with `inner = dc`) is launched bucket by bucket after the optimiser step and
  waited for as the next step's first forward pass reaches each bucket, so what stays
  exposed is

      max(T_ag / B, T_ag - t_f)

  (the first bucket, needed at once, or what the first micro-batch's forward pass cannot
  cover), B the scheme's buckets of the GPU's own parameters (`bucket`). It adds to the
  rest of the sync's exposure (exposure.py): without other overlap, the other phases
  whole; with `overlap = backward`, those phases bucket by bucket behind the backward pass.
  Not with `delay` or `fragments` (the sync's own schedule then decides).
- **Data-parallel buckets with the backward pass** (`overlap = backward`): exposure.py's
  rule, the buckets cutting the GPU's own gradients, a MoE model's experts over pp ep.

What stays exposed otherwise: the TP, CP (beyond each ring step's attention) and EP
collectives, the pipeline transfers, the whole data-parallel sync, and the optimiser step.
An overlapped collective costs the compute nothing but in the backward pass's rule above, on
a link that gives `channels` (Calculon charges a `processor_usage` fraction of every overlap;
here the other overlaps' links, the NICs and userbuffers, give no channel count a source states).
"""

from __future__ import annotations

from ctdsl.symbolic import dimensioned as D
from ctdsl.symbolic.dimensioned import DimExpr
from ctdsl.symbolic.ledger import Exposure
from ctdsl.symbolic.traffic import positive

TP_RULE = "max(t_tp / tp, t_tp - (t_c + t_r)) per micro-batch"
P2P_RULE = "2 (pp - 1) t_p2p + max(0, 2 v m t_p2p - m (t_c + t_r))"
GATHER_RULE = "max(T_ag / B, T_ag - t_f)"
ASYNC_RULE = "t_tp (n - 2) / n + L sum_w max(f t_1, t_1 - w) per micro-batch (with sequence parallelism (n - 1 - r) / n, t_1 / 2, and the input's gather again, r t_1 / 2, beside the input-gradient GEMMs)"


def tensor(t_tp: DimExpr, hide: DimExpr, tp: DimExpr) -> DimExpr:
    """Exposed TP time of one micro-batch whose collectives are pipelined with its `hide` of compute."""
    return D.emax(t_tp / tp, t_tp - hide)


def beside(c: DimExpr, w: DimExpr, f: DimExpr) -> DimExpr:
    """What a collective of time c exposes beside a GEMM of time w that loses a share f of the
    SMs to it while it runs: the pair takes max(w + f c, c) (module docstring)."""
    if f.e == 0:
        return positive(c - w)
    return D.emax(f * c, c - w)


def backward_async(t_tp: DimExpr, n: DimExpr, sp: bool, gemms: tuple[DimExpr, ...], layers: DimExpr, regather: DimExpr, f: DimExpr) -> DimExpr:
    """Exposed TP time of one micro-batch whose column-parallel layers' input-gradient collectives
    run beside their weight-gradient GEMMs and, with sequence parallelism, whose gathers of the
    input again run beside their input-gradient GEMMs (`gemms`: per layer, the time of each),
    the rest waited for."""
    one = t_tp / (layers * n)
    if not sp:
        return t_tp * (n - 2) / n + layers * D.total([beside(one, w, f) for w in gemms], t_tp.dim)
    half = [beside(one / 2, w, f) for w in gemms]
    return t_tp * (n - 1 - regather) / n + layers * (1 + regather) * D.total(half, t_tp.dim)


def pipeline(one: DimExpr, steady: DimExpr, fill: DimExpr, hide: DimExpr) -> DimExpr:
    """Exposed p2p time of a step: the `fill` transfers of the bubble, and what the `steady`
    ones take beyond the `hide` of compute they run beside."""
    return fill * one + positive(steady * one - hide)


def param_gather(t_ag: DimExpr, buckets: DimExpr, forward: DimExpr) -> DimExpr:
    """Exposed time of a parameter all-gather of `buckets` buckets beside a forward pass."""
    return D.emax(t_ag / buckets, t_ag - forward)


def exposure(behind: str, window: DimExpr, rule: str) -> Exposure:
    return Exposure(behind, window, D.zero(window.dim), rule)


__all__ = ["tensor", "beside", "backward_async", "ASYNC_RULE", "pipeline", "param_gather", "exposure", "TP_RULE", "P2P_RULE", "GATHER_RULE"]
