"""Serving's closed forms: each path a workload's requests take, as terms exact in the params.

A path is a colocated pool, or a prefill pool, a hand-off and a decode pool
(`ctdsl.model.serving.ServingPath`). Its terms, in the order `solve` prints them
(docs/serving.md gives each with its source):

- `prefill`: one prompt of the mean length on an instance (serving_steps.py, a roofline);
- `handoff_bytes`, `transform`, `handoff`: the KV cache the hand-off sends, transformed
  as its payload says; on the GPU the transform is a roofline on the prefill instance
  before the transfer, in a module it streams with the transfer, max(module, wire);
- `handoff_exposed`: what the hand-off adds to TTFT: all of it, or layer by layer what
  outlasts the prefill, max(T_h / L, T_h - T_p (L - 1)/L) (TensorRT-LLM issue 9212);
- capacities in requests/s: a prefill pool's instances x prompts a batch / the batch's
  prefill; a decode pool's instances x its batch / (decode step x (output - 1)), the batch
  as many sequences as fit in KV (and max_batch) at mean context prompt + output/2; a
  link's 1 / hand-off time; a colocated instance's 1 / (1/prefill + 1/decode) (the sister
  simulator's analytic bounds, examples/results.md section 8); `sustainable`, their minimum;
- queues: each prefill instance and the hand-off link an M/G/1 queue fed at the rate over
  its servers (Poisson arrivals split evenly): utilisation rho = lambda E[S] and the
  Pollaczek-Khinchine mean wait lambda E[S^2] / (2 (1 - rho)) (Kleinrock, Queueing Systems
  vol. 1, section 5.5); E[S^2] from the prompt length's coefficient of variation (the
  link's service is affine in the prompt; the prefill's is taken as proportional to it);
- `decode_batch` and `tpot`: the mean decode batch by Little's law, b = lambda_d (output - 1)
  x TPOT; a sequence decodes beside itself and the others, 1 + b on average (Poisson
  arrivals see time averages), with a memory-bound step t0 + k1 (1 + b), so TPOT = (t0 + k1)
  / (1 - lambda_d (output - 1) k1) (a colocated instance decodes only while it does not
  prefill: (1 - rho_prefill) in place of 1); then the decode step's roofline at 1 + b;
- `ttft` (queue + prefill + hand-off), `e2e` = TTFT + (output - 1) TPOT; their percentiles
  from each wait's exponential tail, P(W > t) = rho exp(-rho t / W) (exact for M/M/1),
  summed over the queues (an upper bound on the sum's percentile);
- `throughput` and `tokens_per_s` at the workload's rate, capped at the sustainable rate;
- `energy_per_token`: each prefill's and hand-off's energy spread over the output, each decode
  step's over the batch, and the instances' static power over the tokens a second;
- goodput: the highest rate at which the SLO's targets hold (DistServe, OSDI'24), found on
  the same forms by the one root finder (ctdsl.roots.bisect), at most the sustainable rate.

Long: one concept, a path's closed forms built term by term in the order above (each term
reads the ones before it), and their evaluation at the workload's rate; the step rooflines are
in serving_steps.py and the hand-off break-evens in serving_breakeven.py.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import sympy as sp

from ctdsl import roots
from ctdsl import units as U
from ctdsl.language.enums import Counted
from ctdsl.language.serving import FP4_BITS, FP8_BITS, HandoffMode, KvPayload
from ctdsl.model.serving import ServingPath
from ctdsl.results.frozen import FrozenDict
from ctdsl.results.quantity import Quantity
from ctdsl.results.serving import PathResult, ServingTermResult
from ctdsl.symbolic import dimensioned as D
from ctdsl.symbolic.context import Context
from ctdsl.symbolic.convert import Env, real_function, value
from ctdsl.symbolic.dimensioned import DimExpr
from ctdsl.symbolic.serving_steps import field, instance_forms

RATE = sp.Symbol("lambda_serving", positive=True)  # the arrival rate while the forms are built; replaced by the workload's
GOODPUT_BISECTIONS = 60
SISTER = "Disaggregated_Inference_Sim, examples/results.md (its closed forms)"
PK = "Pollaczek-Khinchine: Kleinrock, Queueing Systems vol. 1, section 5.5"
TAIL = "M/M/1 waiting-time tail P(W > t) = rho exp(-rho t / W) (Kleinrock vol. 1, section 3.2), summed over the queues"
CHUNKED = "chunked prefill: Sarathi-Serve (Agrawal et al., OSDI'24, arXiv:2403.02310), a chunk of the prompt rides on each decode step"
LITTLE = "Little's law, b = lambda (output - 1) TPOT, with a memory-bound decode step"


@dataclass(frozen=True)
class Term:
    key: str
    label: str
    value: DimExpr
    closed_form: str  # exact | approximation
    formula: str
    source: str


def _n(x) -> DimExpr:
    return DimExpr(sp.Integer(x), U.ONE) if isinstance(x, int) else DimExpr(sp.Rational(x), U.ONE)


def _wait(lam: DimExpr, s1: DimExpr, s2: DimExpr) -> tuple[DimExpr, DimExpr]:
    """(rho, mean wait) of an M/G/1 queue fed at lam, service mean s1, second moment s2."""
    rho = lam * s1
    return rho, lam * s2 / (2 * (1 - rho))


def _tail(w: DimExpr, rho: DimExpr, q: DimExpr) -> DimExpr:
    """The q-quantile of an M/G/1 wait by its exponential tail: W / rho ln(max(1, rho / (1 - q)))."""
    return w / rho * DimExpr(sp.log(sp.Max(1, (rho / (1 - q)).e)), U.ONE)


class _Path:
    def __init__(self, ctx: Context, path: ServingPath):
        sv = ctx.spec.serving
        self.ctx, self.path = ctx, path
        self.w = sv.workloads[path.workload]
        self.slo = sv.slos.get(self.w.slo) if self.w.slo else None
        entry = sv.pools[path.entry]
        self.entry = entry
        self.pf = instance_forms(ctx, sv.instances[entry.instance])
        self.n_entry = field(ctx, entry, "pool", "instances")
        self.h = sv.handoffs.get(path.handoff) if path.handoff else None
        if path.decode:
            dpool = sv.pools[path.decode]
            self.df = instance_forms(ctx, sv.instances[dpool.instance])
            self.n_decode = field(ctx, dpool, "pool", "instances")
        else:
            self.df, self.n_decode = self.pf, self.n_entry
        g = lambda n: field(ctx, self.w, "workload", n)  # noqa: E731
        self.s, self.o, self.cv = g("prompt"), g("output"), g("prompt_cv")
        self.lam = DimExpr(RATE, U.FREQUENCY)
        self.q = field(ctx, self.slo, "slo", "percentile") if self.slo else _n(sp.Rational(99, 100))
        self.terms: list[Term] = []

    def add(self, key, label, v, closed, formula, source) -> DimExpr:
        self.terms.append(Term(key, label, v, closed, formula, source))
        return v

    # ---- the instances ------------------------------------------------------------------

    def steps(self) -> tuple[DimExpr, DimExpr]:
        pf, s, o = self.pf, self.s, self.o
        if pf.chunk is None:
            tp = self.add("prefill", "prefill (one prompt)", pf.prefill(_n(1), s), "exact", "max(F / (g peak eff), B / (g mem_bw mem_eff)) + overhead; F = 2 M s + 2 L d s (s + 1), B = M v + s (d v + k)", SISTER)
            nb = self.add("prefill_batch", "prompts a prefill batch", DimExpr(sp.Max(1, sp.floor((pf.prefill_tokens / s).e)), U.ONE), "exact", "max(1, floor(prefill_tokens / prompt))", SISTER)
            self.prefill_cap = nb / pf.prefill(nb, s)
        else:
            n, m, p = pf.chunks(s)
            self.add("prefill_chunks", "chunks a prompt", n, "exact", "ceil(prompt / chunk)", CHUNKED)
            tp = self.add("prefill", "prefill (one prompt, chunked)", n * pf.step(_n(0), _n(0), _n(1), m, p), "approximation", "n steps of a chunk of m = s / n tokens at the mean offset (n - 1) m / 2: F = 2 M m + 2 L d m (2 p + m + 1), B = M v + m (d v + k) + p k; exact where every chunk is in one regime", CHUNKED)
            nb = self.add("prefill_batch", "prompts a prefill batch", DimExpr(sp.Max(1, sp.floor((pf.chunk / s).e)), U.ONE), "exact", "max(1, floor(chunk / prompt))", CHUNKED)
            self.prefill_cap = nb / (n * pf.step(_n(0), _n(0), nb, m, p))
        df = self.df
        self.add("kv_capacity", "KV cache capacity (decode instance)", df.kv_capacity, "exact", "floor((g memory kv_memory - P v) / k) tokens", SISTER)
        bmax = self.add("decode_batch_max", "largest decode batch", D.emin(df.max_batch, DimExpr(sp.floor((df.kv_capacity / (s + o)).e), U.ONE)), "exact", "min(max_batch, floor(KV capacity / (prompt + output)))", SISTER)
        self.c = s + o / 2
        self.steps_out = 1 / D.emax(_n(1), o - 1)
        self.decode_cap = bmax / df.decode(bmax, self.c) * self.steps_out
        return tp, bmax

    def piggyback(self, b: DimExpr) -> DimExpr:
        """What a prompt chunk adds to a decode step of b sequences at the mean context (chunked colocated):
        the hybrid step less the decode step alone; the weights are read once for both."""
        pf, c = self.pf, self.c
        n, m, p = pf.chunks(self.s)
        return pf.step(b, b * (c + 1), _n(1), m, p) - pf.decode(b, c)

    # ---- the hand-off ---------------------------------------------------------------------

    def handoff(self, tp: DimExpr) -> tuple[DimExpr, DimExpr, DimExpr, DimExpr]:
        """(GPU transform time, link service, its second moment, exposed part)."""
        ctx, h, pf = self.ctx, self.h, self.pf
        model = ctx.spec.models[ctx.spec.serving.instances[self.entry.instance].model]
        v = ctx.field(model, "bytes_per_value")
        d_in = self.add("handoff_kv", "KV cache of a prompt", self.s * pf.kv, "exact", "prompt x 2 L g d_h v", "inference.md, KV cache")
        byte = DimExpr(sp.Integer(1), U.DATA)
        ratio = {
            KvPayload.PLAIN: _n(1),
            KvPayload.FP8: byte * (FP8_BITS / 8) / v,
            KvPayload.FP4: byte * (FP4_BITS / 8) / v,
            KvPayload.BAND: field(ctx, h, "handoff", "fraction") if h.fraction is not None else _n(1),
        }[h.payload]
        d_out = self.add("handoff_bytes", "hand-off bytes sent", d_in * ratio, "exact", f"KV x {h.payload} ratio", "OCP MX v1.0 (FP4: 4.25 bits a value)")
        bw, lat, _ = route_terms(ctx, h)
        wire = d_out / bw
        cost = field(ctx, h, "handoff", "cost") * d_in
        if h.payload is KvPayload.PLAIN and h.at == "gpu":
            t_x, stream, fixed = D.zero(U.TIME), wire, lat
        elif h.at == "gpu":
            t_x = pf.roofline(cost, d_in + d_out)
            stream, fixed = wire, lat
        else:
            plug = ctx.spec.pluggables[h.at]
            rates = [ctx.q(plug.line_rate, U.RATE)]
            for st in plug.stages.values():
                if st.name in ("optics", "fpga") and st.rate is not None:
                    rates.append(ctx.q(st.rate, U.RATE))
                if st.name == "compute" and st.budget is not None and h.payload is not KvPayload.PLAIN:
                    per_byte = field(ctx, h, "handoff", "cost")
                    rates.append(ctx.q(st.budget, U.OPS_RATE) / D.emax(per_byte, DimExpr(sp.Rational(1, 10**12), U.OPS_PER_DATA)))
            module = d_in / (D.emin(*rates) if len(rates) > 1 else rates[0])
            t_x = D.zero(U.TIME)
            stream = D.emax(module, wire)
            fixed = lat + ctx.field(plug, "latency")
        self.add("transform", "transform on the prefill GPUs", t_x, "exact", "max(cost KV / (g peak eff), (KV + sent) / (g mem_bw mem_eff)); 0 in a module (it streams)", "domain.md section 6 (the transform's roofline)")
        service = self.add("handoff", "hand-off (link busy)", fixed + stream, "exact", "latency + sent / bandwidth; in a module latency + module latency + max(KV / module rate, sent / bandwidth); over a route, each segment's latency (or the route-counted link's) and the narrowest bandwidth", "inference.md: a stage that streams with the transfer costs max(stage, transfer); docs/cost-model.md, a route's segments")
        s2 = service * service + (self.cv * stream) * (self.cv * stream)
        layers = pf.layers
        exposed = service if h.mode is HandoffMode.WHOLE else D.emax(service / layers, service - tp * (layers - 1) / layers)
        self.add("handoff_exposed", "hand-off in TTFT", exposed, "exact" if h.mode is HandoffMode.WHOLE else "approximation", "whole: the hand-off; layerwise: max(T_h / L, T_h - T_p (L - 1) / L)", "TensorRT-LLM issue 9212")
        return t_x, service, s2, exposed

    # ---- the path ---------------------------------------------------------------------------

    def build(self) -> tuple[list[Term], dict[str, DimExpr]]:
        tp, bmax = self.steps()
        caps = {}
        lam_p = self.lam / self.n_entry
        q = self.q
        o1 = D.emax(_n(1), self.o - 1)
        if self.h is not None:
            t_x, link_s, link_s2, exposed = self.handoff(tp)
            sp_ = tp + t_x
            caps["prefill"] = self.n_entry * self.prefill_cap
            caps["decode"] = self.n_decode * self.decode_cap
            caps["link"] = 1 / link_s
            rho_l, w_l = _wait(self.lam, link_s, link_s2)
            self.add("link_utilisation", "hand-off link utilisation", rho_l, "exact", "lambda x hand-off", "inference.md: the hand-off link as a queue")
            self.add("link_wait", "hand-off queue wait", w_l, "exact", "lambda E[S^2] / (2 (1 - rho)), M/G/1", PK)
        else:
            sp_, exposed = tp, D.zero(U.TIME)
            if self.pf.chunk is None:
                caps["colocated"] = self.n_entry / (1 / self.prefill_cap + 1 / self.decode_cap)
            else:  # each request: n chunks on decode steps, and (output - 1) / bmax full steps, at least n of them
                n = self.terms_value("prefill_chunks")
                caps["colocated"] = self.n_entry / (D.emax(o1 / bmax, n) * self.df.decode(bmax, self.c) + n * self.piggyback(bmax))
        lam_d = self.lam / self.n_decode
        t0, k1 = self.df.decode_memory_parts(self.c)
        residual = D.zero(U.TIME)
        if self.h is None and self.pf.chunk is not None:
            sp_, free, residual = self.chunked_colocated(lam_p, o1, t0, k1)
        rho_p, w_p = _wait(lam_p, sp_, sp_ * sp_ * (1 + self.cv * self.cv))
        if self.h is not None:
            free = _n(1)
        elif self.pf.chunk is None:
            free = 1 - rho_p
            # a prompt waits for the decode step in progress too (a prefill starts at a step's end): its mean
            # residual T_dec / 2 times the chance one is running, 1 - e^-b (the count decoding Poisson, mean b)
            b0 = lam_d * o1 * (t0 + k1) / (free - lam_d * o1 * k1)
            busy = 1 - DimExpr(sp.exp(-b0.e), U.ONE)
            residual = self.add("step_residual", "wait for the step in progress", busy * self.df.decode(b0 + 1, self.c) / 2, "approximation", "(1 - e^-b) T_dec(1 + b) / 2", "renewal theory, mean residual life; the decode count Poisson (M/G/infinity)")
        w_p = w_p + residual
        self.add("prefill_utilisation", "prefill utilisation (an instance)", rho_p, "exact", "lambda / instances x prefill", PK)
        self.add("prefill_wait", "prefill queue wait", w_p, "approximation", "lambda E[S^2] / (2 (1 - rho)), E[S^2] = T_p^2 (1 + cv_prompt^2)" + ("" if self.h else " (+ the step in progress)"), PK)
        tpot_little = (t0 + k1) / (free - lam_d * o1 * k1)
        b = self.add("decode_batch", "mean decode batch", lam_d * o1 * tpot_little, "approximation", "lambda_d (output - 1) TPOT (Little), TPOT = (t0 + k1) / (1 - lambda_d (output - 1) k1)", LITTLE)
        share = "" if self.h else (", over the share of time not prefilling" if self.pf.chunk is None else ", over 1 - lambda n dT (the chunks riding on decode steps)")
        tpot = self.add("tpot", "TPOT (time per output token)", self.df.decode(b + 1, self.c) / free, "approximation", "decode step at the batch a sequence sees, itself and the mean batch of the others, at context prompt + output / 2" + share, LITTLE)
        ttft = self.add("ttft", "TTFT (mean)", w_p + sp_ + exposed + (self.terms_value("link_wait") or D.zero(U.TIME)), "approximation", "prefill wait + prefill (+ transform) + hand-off wait + hand-off exposed", "inference.md, metrics; " + PK)
        tail = _tail(w_p, rho_p, q)
        if self.h is not None:
            tail = tail + _tail(self.terms_value("link_wait"), self.terms_value("link_utilisation"), q)
        ttft_q = self.add("ttft_p", "TTFT at the percentile", sp_ + exposed + tail, "approximation", "prefill + hand-off + each wait's quantile W / rho ln(max(1, rho / (1 - q)))", TAIL)
        self.add("e2e", "end to end (mean)", ttft + o1 * tpot, "approximation", "TTFT + (output - 1) TPOT", "inference.md, metrics")
        self.add("e2e_p", "end to end at the percentile", ttft_q + o1 * tpot, "approximation", "TTFT at the percentile + (output - 1) TPOT", TAIL)
        self.energy(b, caps)
        return self.terms, caps

    def chunked_colocated(self, lam: DimExpr, o1: DimExpr, t0: DimExpr, k1: DimExpr) -> tuple[DimExpr, DimExpr]:
        """(prefill service, decode's free share) of a colocated instance batching chunked prefill.

        Each decode step carries at most one chunk; a request's n chunks add n dT to the
        instance's time, dT what a chunk adds to a decode step (`piggyback`), so a decode step
        takes T_dec + f dT on average with f = lambda n TPOT chunks a step, and TPOT = T_dec /
        (1 - lambda n dT): 1 - lambda n dT takes the place of 1 - rho_prefill. dT is read at the
        batch a sequence sees, 1 + b, with b Little's batch at dT of one sequence (one refinement).
        A prompt is in prefill for n hybrid steps, its service n (T_dec + dT); a chunk starts
        only when the step in progress ends, so its wait adds that step's mean residual, T_dec / 2
        (a step of nearly constant length), times the chance a step is in progress, 1 - e^-b (the
        number decoding is Poisson of mean b, an M/G/infinity count: Kleinrock vol. 1, section 4.7).
        Returns (service, free share, residual)."""
        lam_d = self.lam / self.n_decode
        n = self.terms_value("prefill_chunks")
        one = _n(1)
        free1 = 1 - lam * n * self.piggyback(one)
        b1 = lam_d * o1 * (t0 + k1) / (free1 - lam_d * o1 * k1)
        d_t = self.add("chunk_added", "a chunk on a decode step", self.piggyback(b1 + 1), "approximation", "hybrid step - decode step at the batch 1 + b", CHUNKED)
        free = 1 - lam * n * d_t
        b = lam_d * o1 * (t0 + k1) / (free - lam_d * o1 * k1)
        t_dec = self.df.decode(b + 1, self.c)
        service = self.add("prefill_chunked", "prefill on decode steps (n hybrid steps)", n * (t_dec + d_t), "approximation", "n (T_dec(1 + b) + dT)", CHUNKED)
        busy = 1 - DimExpr(sp.exp(-b.e), U.ONE)
        residual = self.add("step_residual", "wait for the step in progress", busy * t_dec / 2, "approximation", "(1 - e^-b) T_dec(1 + b) / 2", "renewal theory, mean residual life; the decode count Poisson (M/G/infinity)")
        return service, free, residual

    def energy(self, b: DimExpr, caps: dict[str, DimExpr]) -> DimExpr:
        """Energy per output token at the workload's rate (capped at the sustainable rate)."""
        pf, df, s, c = self.pf, self.df, self.s, self.c
        one = _n(1)
        per_request = pf.energy(pf.prefill_flops(one, s), pf.prefill_bytes(one, s))
        if self.h is not None:
            per_request = per_request + self.terms_value("handoff_bytes") * route_terms(self.ctx, self.h)[2]
        seen = b + 1
        per_token = df.energy(df.decode_flops(seen, c), df.decode_bytes(seen, c)) / seen
        static = pf.static_power * self.n_entry + (df.static_power * self.n_decode if self.h is not None else D.zero(U.POWER))
        served = D.emin(self.lam, D.emin(*caps.values()) if len(caps) > 1 else next(iter(caps.values())))
        tokens = served * self.o
        o = self.o
        total = (per_request + per_token * (o - 1)) / o + static / tokens
        return self.add("energy_per_token", "energy per output token", total, "approximation", "(prefill + hand-off energy) / output + decode step energy / (1 + b) x (output - 1) / output + static power / tokens per second", "the sister's power model: static power + pJ/FLOP + pJ/B (hardware.py); the device's fields")

    def terms_value(self, key: str) -> DimExpr | None:
        return next((t.value for t in self.terms if t.key == key), None)


def route_terms(ctx: Context, h) -> tuple[DimExpr, DimExpr, DimExpr]:
    """(bandwidth, latency, energy per byte) of a hand-off's route, a link per segment, as training
    charges a route (docs/cost-model.md, 'Latency and energy along a route'): the bytes at the narrowest
    segment's bandwidth (the transfer streams through them all); each segment's latency and energy per
    byte once, or, where a link on it is `counted = route`, that link's alone (its figure is the whole
    route's, end to end; each such link once). One link is the route of one segment."""
    links = [ctx.spec.links[n] for n in h.route]
    whole = list({l.name: l for l in links if l.counted is Counted.ROUTE}.values())
    charged = whole or links
    bws = [ctx.field(l, "bandwidth") for l in links]
    bw = D.emin(*bws) if len(bws) > 1 else bws[0]
    lat, energy = ctx.field(charged[0], "latency"), ctx.field(charged[0], "energy_per_byte")
    for l in charged[1:]:
        lat, energy = lat + ctx.field(l, "latency"), energy + ctx.field(l, "energy_per_byte")
    return bw, lat, energy


# ---- evaluation -------------------------------------------------------------------------------


def _quantity(e: DimExpr, env: Env) -> Quantity:
    try:
        v = value(e.e, env)
    except (ArithmeticError, ValueError, TypeError):
        v = math.nan
    return Quantity(e.e, v, e.dim)


def path_result(ctx: Context, path: ServingPath, env: Env) -> PathResult:
    p = _Path(ctx, path)
    terms, caps = p.build()
    rate = DimExpr(ctx.sym(p.w.rate), U.FREQUENCY)
    sub = lambda e: DimExpr(e.e.subs(RATE, rate.e), e.dim)  # noqa: E731  (the forms at the workload's rate)
    cap_q = {k: _quantity(sub(c), env) for k, c in caps.items()}
    binding = min(cap_q, key=lambda k: (cap_q[k].value, k))
    sustainable_e = D.emin(*caps.values()) if len(caps) > 1 else next(iter(caps.values()))
    sustainable = _quantity(sub(sustainable_e), env)
    lam = _quantity(rate, env).value
    values = {t.key: _quantity(sub(t.value), env) for t in terms}
    over = not (lam < sustainable.value and settles({k: q.value for k, q in values.items()}))
    out = {}
    for t in terms:
        q = values[t.key]
        if over and t.key in _QUEUED:
            q = Quantity(q.expr, math.inf, q.dim)
        out[t.key] = ServingTermResult(t.key, t.label, q, t.closed_form, t.formula, t.source)
    served = D.emin(rate, sustainable_e)
    for key, label, e in (("throughput", "throughput", served), ("tokens_per_s", "output tokens per second", served * p.o)):
        out[key] = ServingTermResult(key, label, _quantity(sub(e), env), "exact", "min(rate, sustainable) (x output)", SISTER)
    goodput, gbind = _goodput(p, terms, sustainable.value, binding, env)
    targets = {k: _quantity(field(ctx, p.slo, "slo", k), env) for k in ("ttft", "tpot", "e2e") if p.slo is not None and getattr(p.slo, k) is not None}
    return PathResult(
        path.name, path.workload, path.entry, path.handoff, p.h.display if p.h else None, path.decode, _quantity(rate, env),
        FrozenDict(out), FrozenDict(cap_q), sustainable, binding, over, goodput, gbind,
        FrozenDict(targets), _quantity(p.q, env).value if p.slo is not None else None,
    )


# the terms that are waits or follow from them: infinite at or above the sustainable rate
_QUEUED = ("link_wait", "prefill_wait", "decode_batch", "tpot", "ttft", "ttft_p", "e2e", "e2e_p", "energy_per_token")


# what must hold for the queues to settle: each utilisation below 1, a positive TPOT, the mean batch within the largest
_SETTLE = ("prefill_utilisation", "tpot", "decode_batch", "decode_batch_max")


def settles(v: dict) -> bool:
    """Whether the queues settle at these values of a path's terms (by key)."""
    rhos = [v["prefill_utilisation"]] + ([v["link_utilisation"]] if "link_utilisation" in v else [])
    return all(0 <= r < 1 for r in rhos) and v["tpot"] > 0 and 0 <= v["decode_batch"] <= v["decode_batch_max"]


def _goodput(p: _Path, terms: list[Term], ceiling: float, binding: str, env: Env) -> tuple[Quantity | None, str | None]:
    """The highest rate below the sustainable one at which every target of the SLO holds."""
    if p.slo is None:
        return None, None
    by_key = {t.key: t.value for t in terms}
    targets = [(name, by_key[key], field(p.ctx, p.slo, "slo", name)) for name, key in (("ttft", "ttft_p"), ("tpot", "tpot"), ("e2e", "e2e_p")) if getattr(p.slo, name) is not None]
    best, why = ceiling, binding
    hi = ceiling * (1 - 1e-9)
    watched = {k: real_function(by_key[k].e, RATE, env) for k in _SETTLE + (("link_utilisation",) if "link_utilisation" in by_key else ())}
    settled = lambda x: settles({k: f(x) for k, f in watched.items()})  # noqa: E731
    for name, metric, target in targets:
        limit = value(target.e, env)
        f = real_function(metric.e, RATE, env)
        holds = lambda x, f=f, limit=limit: settled(x) and f(x) <= limit  # noqa: E731
        lo = ceiling * 1e-9
        if not holds(lo):
            return Quantity(sp.Integer(0), 0.0, U.FREQUENCY), name
        if holds(hi):
            continue
        x = roots.bisect(lo, hi, holds, steps=GOODPUT_BISECTIONS)
        if x < best:
            best, why = x, name
    return Quantity(sp.Float(best, 15), best, U.FREQUENCY), why


def path_forms(ctx: Context, path: ServingPath) -> tuple[dict[str, DimExpr], DimExpr]:
    """(each term by its key, the sustainable rate) of a path, at the workload's rate: its closed forms in the params."""
    p = _Path(ctx, path)
    terms, caps = p.build()
    rate = ctx.sym(p.w.rate)
    sub = lambda e: DimExpr(e.e.subs(RATE, rate), e.dim)  # noqa: E731
    sustainable = D.emin(*caps.values()) if len(caps) > 1 else next(iter(caps.values()))
    out = {t.key: sub(t.value) for t in terms}
    out["rate"] = DimExpr(rate, U.FREQUENCY)
    return out, sub(sustainable)


def serving_results(ctx: Context, env: Env) -> tuple[PathResult, ...]:
    sv = ctx.spec.serving
    if not sv:
        return ()
    return tuple(path_result(ctx, path, env) for path in sv.paths)


__all__ = ["RATE", "path_forms", "path_result", "serving_results", "settles"]
