"""What each kind of block takes: its fields, their dimensions and their bounds.

This table drives the checker (unknown, missing and ill-typed fields), the
range checks and the field tables of docs/language.md, so the three never
disagree.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from ctdsl import units as U
from ctdsl.language.enums import Algorithm, Collective, ComputeModel, Counted, Fabric, FragmentOrder, InnerSync, JitterKind, ModuleLatency, Operation, Overlap, Payload, Precision, Readiness, Recompute, Sharing, SimLatency, TransformCharge
from ctdsl.language.serving import serving_kinds
from ctdsl.language.transforms import DEFAULT_COST, PAYLOAD_NEEDS, PAYLOAD_WORDS  # noqa: F401  (re-exported)

OPERATIONS = tuple(Operation)
PAYLOADS = tuple(Payload)
COLLECTIVES = tuple(Collective)
JITTER_KINDS = tuple(JitterKind)
COUNTED = tuple(Counted)
SHARINGS = tuple(Sharing)
MODULE_LATENCIES = tuple(ModuleLatency)
READINESS = tuple(Readiness)
FRAGMENT_ORDERS = tuple(FragmentOrder)
SIM_LATENCIES = tuple(SimLatency)
FABRICS = tuple(Fabric)
RECOMPUTES = tuple(Recompute)
COMPUTE_MODELS = tuple(ComputeModel)
PRECISIONS = tuple(Precision)
OVERLAPS = tuple(Overlap)
INNER_SYNCS = tuple(InnerSync)
ALGORITHMS = tuple(Algorithm)

# fields a block that extends another may drop with `KEY = none` (its own default holds again)
DROPPABLE = {("scheme", "bucket")}

# fields that were renamed: (kind, old name) -> the help line the checker gives (CT104)
RENAMED = {
    ("switch", "rate"): "rate is now total_rate (all the streams it takes in at once, shared) or stream_rate (each stream's own)",
}
TRANSFORM_CHARGES = tuple(TransformCharge)

# scheme fields that belong to one payload kind only
PAYLOAD_FIELDS = {
    "fraction": ("topk", "band"),
    "bits": ("quantise",),
    "block": ("quantise",),
    "scale": ("quantise",),
    "index": ("topk", "demo"),
    "chunk": ("topk", "demo"),
    "k": ("demo",),
}
PAYLOAD_REQUIRES = {
    "quantise": ("bits",),
    "topk": ("fraction",),
    "demo": ("chunk", "k"),
    "band": ("fraction",),
}


@dataclass(frozen=True)
class FieldSpec:
    name: str
    type: str  # quantity | ref | enum | bool | ops | string
    doc: str
    dim: U.Dim | None = None
    bound: str | None = None  # positive | nonneg | fraction | ge1 | count | utilisation | stage
    required: bool = False
    default: object = None  # a Fraction in base units, a bool, a tuple, or a name
    refs: tuple[str, ...] = ()  # for ref: the kinds it may name
    choices: tuple[str, ...] = ()  # for enum
    example: str = ""
    words: tuple[str, ...] = ()  # for quantity: words it also takes instead of a quantity (`bucket = layer`)


def F(name, type, doc, **kw) -> FieldSpec:
    return FieldSpec(name, type, doc, **kw)


Q = "quantity"

KINDS: dict[str, dict[str, FieldSpec]] = {
    "model": {
        f.name: f
        for f in [
            F("params", Q, "parameter count P (or give the shape below)", dim=U.ONE, bound="positive", example="70.55e9"),
            F("layers", Q, "layers L", dim=U.ONE, bound="count", example="80"),
            F("width", Q, "model width d", dim=U.ONE, bound="count", example="8192"),
            F("heads", Q, "attention heads h", dim=U.ONE, bound="count", example="64"),
            F("kv_heads", Q, "key/value heads g", dim=U.ONE, bound="count", example="8"),
            F("mlp", Q, "MLP width f", dim=U.ONE, bound="count", example="28672"),
            F("vocab", Q, "vocabulary V", dim=U.ONE, bound="count", example="128256"),
            F("bytes_per_value", Q, "bytes per value v", dim=U.DATA, bound="positive", required=True, example="2 B"),
            F("tokens", Q, "tokens per step per worker (per replica)", dim=U.ONE, bound="positive", example="16384"),
            F("batch_tokens", Q, "tokens per step of the whole job, split across the replicas in proportion to their compute (instead of tokens)", dim=U.ONE, bound="positive", example="16e6"),
            F("flops_per_token", Q, "training FLOPs per token (default 6P)", dim=U.OPS, bound="positive", example="420 GFLOP"),
            F("step", Q, "a given compute time of one training step, as papers state it (\"the step takes 0.8 s\", from 6N at a stated MFU): the inner step of every scheme of the model is this one block, in place of the FLOPs over peak x efficiency (a scheme's own step wins)", dim=U.TIME, bound="positive", example="0.8 s"),
            F("kv_tokens", Q, "tokens whose KV cache is handed from prefill to decode (needs the shape)", dim=U.ONE, bound="count", example="2048"),
            F("head_dim", Q, "head dimension d_h (default width / heads)", dim=U.ONE, bound="count", example="128"),
            F("attn_params", Q, "attention weights per layer (default 2 d d_h (h + g), Llama-style GQA; give it for other attention, such as MLA)", dim=U.ONE, bound="positive", example="187105280"),
            F("experts", Q, "routed experts E per MoE layer (an MoE model; needs experts_per_token and expert_mlp)", dim=U.ONE, bound="count", example="8"),
            F("experts_per_token", Q, "routed experts k each token uses (top-k)", dim=U.ONE, bound="count", example="2"),
            F("expert_mlp", Q, "MLP width f_e of one routed expert", dim=U.ONE, bound="count", example="14336"),
            F("shared_mlp", Q, "total MLP width f_sh of the shared experts every token uses", dim=U.ONE, bound="nonneg", default=Fraction(0), example="2048"),
            F("moe_layers", Q, "layers whose MLP is the experts (default all; the rest are dense)", dim=U.ONE, bound="count", example="58"),
            F("seq", Q, "sequence length s: with it, the default FLOPs per token are the full form with the attention core", dim=U.ONE, bound="count", example="8192"),
            F("tied", "bool", "input and output embeddings are one matrix (counted once)", default=False, example="true"),
            F("norms", "bool", "count the norm weights, 2dL + d (RMSNorm, as Megatron and Hugging Face do)", default=False, example="true"),
            F("gated", "bool", "the MLPs are gated (SwiGLU: gate, up, down, 3df); false: two matrices (GeLU, 2df)", default=True, example="false"),
            F("causal", "bool", "the attention core counts half the s x s square (c = 1, causal); false: the full square (c = 2)", default=True, example="false"),
        ]
    },
    "device": {
        f.name: f
        for f in [
            F("peak", Q, "peak dense FLOP/s", dim=U.OPS_RATE, bound="positive", required=True, example="989 TFLOP/s"),
            F("peak_fp8", Q, "peak dense FP8 FLOP/s", dim=U.OPS_RATE, bound="positive", example="1979 TFLOP/s"),
            F("efficiency", Q, "achievable fraction of peak", dim=U.ONE, bound="fraction", required=True, example="0.4"),
            F("mfu", Q, "a measured model FLOPs utilisation of a replica's inner step on it: the inner step is then its model FLOPs / (GPUs x peak x mfu), one block that holds the bubble and the model-parallel traffic (instead of the training step's timeline)", dim=U.ONE, bound="fraction", example="0.38"),
            F("mem_bw", Q, "memory bandwidth", dim=U.RATE, bound="positive", example="3.35 TB/s"),
            F("efficiency_fp8", Q, "achievable fraction of peak_fp8 for large FP8 GEMMs (default: efficiency)", dim=U.ONE, bound="fraction", example="0.5"),
            F("gemm_half", Q, "with compute = operations: the GEMM size at which a GEMM reaches half its large-GEMM efficiency, eff(F) = efficiency x F / (F + gemm_half) (default: 0, every GEMM at efficiency)", dim=U.OPS, bound="nonneg", example="0.6 GFLOP"),
            F("mem_efficiency", Q, "with compute = operations: the achieved fraction of mem_bw of a memory-bound operation", dim=U.ONE, bound="fraction", default=Fraction(1), example="0.9"),
            F("sms", Q, "with compute = operations: the streaming multiprocessors a GEMM's output tiles run on, one tile an SM at a time, so that each linear-layer GEMM pays for whole waves of sms tiles of tile_m x tile_n or tile_n x tile_m, whichever wastes less (tile and wave quantisation; needs tile_m and tile_n; default: none, no quantisation)", dim=U.ONE, bound="count", example="108"),
            F("tile_m", Q, "with sms: the rows of the output tile of the device's large GEMM kernels (the tile runs either way round)", dim=U.ONE, bound="count", example="256"),
            F("tile_n", Q, "with sms: the columns of the output tile of the device's large GEMM kernels", dim=U.ONE, bound="count", example="128"),
            F("memory", Q, "memory capacity", dim=U.DATA, bound="positive", example="80 GB"),
            F("static_power", Q, "power drawn whether busy or not", dim=U.POWER, bound="nonneg", default=Fraction(0), example="100 W"),
            F("power", Q, "board power", dim=U.POWER, bound="nonneg", example="700 W"),
            F("energy_per_flop", Q, "energy per FLOP", dim=U.ENERGY_PER_OP, bound="nonneg", default=Fraction(0), example="1 pJ/FLOP"),
            F("energy_per_byte", Q, "energy per memory byte", dim=U.ENERGY_PER_DATA, bound="nonneg", default=Fraction(0), example="60 pJ/B"),
            F("transform_charge", "enum", "how a transform on it is charged: roofline, max(FLOPs / (peak x efficiency), bytes / mem_bw), or flops, the FLOPs alone", choices=TRANSFORM_CHARGES, default="roofline", example="flops"),
            # money and carbon (docs/codesign.md): a price per hour, or a capex spread over the depreciation
            F("price", Q, "price of one device per hour of use (rent); or give capex and depreciation", dim=U.MONEY_RATE, bound="nonneg", example="2.5 USD/h"),
            F("capex", Q, "purchase price of one device, spread over its depreciation", dim=U.MONEY, bound="nonneg", example="30000 USD"),
            F("depreciation", Q, "period its capex and embodied carbon are spread over (and its module's and switch's price, when they give none)", dim=U.TIME, bound="positive", example="4 yr"),
            F("embodied_carbon", Q, "carbon emitted making one device, spread over its depreciation", dim=U.CARBON, bound="nonneg", example="1500 kgCO2e"),
        ]
    },
    "link": {
        f.name: f
        for f in [
            F("bandwidth", Q, "bandwidth, one direction", dim=U.RATE, bound="positive", required=True, example="50 GB/s"),
            F("latency", Q, "latency, charged as `counted` says", dim=U.TIME, bound="nonneg", required=True, example="10 us"),
            F("energy_per_bit", Q, "energy per bit, charged as `counted` says", dim=U.ENERGY_PER_DATA, bound="nonneg", default=Fraction(0), example="15 pJ/bit"),
            F("efficiency", Q, "achieved fraction of the line rate (a collective's bus bandwidth over the bandwidth, as nccl-tests measures it): every transfer on the link runs at bandwidth x efficiency", dim=U.ONE, bound="fraction", default=Fraction(1), example="0.82"),
            F("channels", Q, "the streaming multiprocessors a collective on the link holds while it runs (NCCL's channels: a thread block, one SM, each): with compute = operations and a device that gives sms, a GEMM that runs beside a tensor-parallel collective on the link (tp_async_backward) has the other sms - channels of them (default: none, an overlapped collective costs its GEMM nothing)", dim=U.ONE, bound="count", example="24"),
            F("in_network", "bool", "its switch can reduce in the network (NVLink SHARP on NVSwitch 3): a model-parallel all-reduce inside one scale-up domain on it may run in-switch", default=False, example="true"),
            F("counted", "enum", "latency and energy per bit once per transfer (end to end over consecutive edges of the link), per hop (every edge), or route: the figure is the whole route's, end to end, paid once by a transfer that crosses the link in place of every link's on its route", choices=COUNTED, default="transfer", example="hop"),
            F("distance", Q, "length of the link", dim=U.LENGTH, bound="positive", example="800 km"),
            F("load", Q, "background utilisation rho of the link, in [0, 1)", dim=U.ONE, bound="utilisation", example="0.5"),
            F("transfer", Q, "size of one background transfer", dim=U.DATA, bound="positive", example="1 GB"),
            F("sharing", "enum", "how a loaded link shares its capacity: fair, processor sharing, every active transfer at an equal share at once (as TCP flows share a bottleneck; Ben Fredj, Bonald, Proutiere, Regnie and Roberts, SIGCOMM 2001), or fifo, one whole transfer at a time, first come, first served (M/D/1)", choices=SHARINGS, default="fair", example="fifo"),
            F("price", Q, "rent of its capacity per rate and time, for each connection (a WAN statement, a worker's link): price x bandwidth x time", dim=U.MONEY_PER_DATA, bound="nonneg", example="2000 USD/month / 1 Gb/s"),
        ]
    },
    "pluggable": {
        f.name: f
        for f in [
            F("latency", Q, "latency of the module: the fill of its pipelined stages, charged as `counted` says", dim=U.TIME, bound="nonneg", default=Fraction(0), example="1 us"),
            F("counted", "enum", "its latency once, in its own time (the transform's stream through it; a port crossing adds none: the link's end-to-end figure holds it), or at every crossing of its port too", choices=MODULE_LATENCIES, default="once", example="crossing"),
            F("power", Q, "power of the module", dim=U.POWER, bound="nonneg", default=Fraction(0), example="5 W"),
            F("ops", "ops", "operations the module can do", required=True, example="[fft, dct, mac, add]"),
            F("price", Q, "price of one module, spread over its depreciation", dim=U.MONEY, bound="nonneg", example="800 USD"),
            F("depreciation", Q, "period its price is spread over (default: the depreciation of the device it serves)", dim=U.TIME, bound="positive", example="3 yr"),
        ]
    },
    "switch": {
        f.name: f
        for f in [
            F("sum", "bool", "can sum the streams through it (in-network aggregation)", default=False, example="true"),
            F("loopback", "bool", "can return a worker's own contribution to it", default=False, example="true"),
            F("ops", "ops", "operations it can apply to a stream", default=(), example="[dct, add]"),
            F("total_rate", Q, "rate at which it processes all the streams it takes in at once (shared)", dim=U.RATE, bound="positive", example="400 GB/s"),
            F("stream_rate", Q, "rate at which it processes each stream (per stream)", dim=U.RATE, bound="positive", example="100 GB/s"),
            F("latency", Q, "latency of a stream into the switch (through it, or summed at it)", dim=U.TIME, bound="nonneg", default=Fraction(0), example="1 us"),
            F("power", Q, "power of the switch", dim=U.POWER, bound="nonneg", default=Fraction(0), example="500 W"),
            F("price", Q, "price of one switch, spread over its depreciation", dim=U.MONEY, bound="nonneg", example="40000 USD"),
            F("depreciation", Q, "period its price is spread over (default: the depreciation of its dc's device)", dim=U.TIME, bound="positive", example="5 yr"),
        ]
    },
    "dc": {
        f.name: f
        for f in [
            F("workers", Q, "workers in the data centre (or give replica and replicas)", dim=U.ONE, bound="count", required=True, example="4"),
            F("replica", "ref", "the model-parallel group that is one data-parallel worker", refs=("replica",), example="tp8pp16"),
            F("replicas", Q, "replicas in the data centre (a param may set it)", dim=U.ONE, bound="count", example="800"),
            F("sites", Q, "alike sites the dc stands for, each with its own replicas, in a ring joined by wan NAME <-> NAME (a param may set it)", dim=U.ONE, bound="count", default=Fraction(1), example="4"),
            F("fabric", "enum", "the scale-out fabric of a dc of replicas: rail (GPU j of every node on rail j) or leaf_spine (oversubscribed above the leaves)", choices=FABRICS, default="rail", example="leaf_spine"),
            F("oversubscription", Q, "a leaf_spine fabric's oversubscription: NIC capacity over spine capacity", dim=U.ONE, bound="ge1", default=Fraction(1), example="2"),
            F("device", "ref", "each worker's device", refs=("device",), required=True, example="h100"),
            F("link", "ref", "each worker's link to the switch", refs=("link",), required=True, example="ib_ndr"),
            F("switch", "ref", "the data centre's switch", refs=("switch",), required=True, example="tor"),
            F("pluggable", "ref", "a module in each worker's port", refs=("pluggable",), example="qsfp"),
            F("jitter", Q, "scale of each worker's random extra compute time per step", dim=U.TIME, bound="nonneg", example="2 s"),
            F("jitter_kind", "enum", "distribution of the extra time: jitter x Exp(1), x U(0, 1) or x LogNormal(0, sigma^2)", choices=JITTER_KINDS, default="exponential", example="lognormal"),
            F("jitter_sigma", Q, "sigma of the log of a lognormal jitter (lognormal only)", dim=U.ONE, bound="positive", example="0.5"),
            F("power_price", Q, "price of grid energy at the site", dim=U.MONEY_PER_ENERGY, bound="nonneg", example="0.08 USD/kWh"),
            F("pue", Q, "power usage effectiveness: grid energy per unit of energy the hardware draws", dim=U.ONE, bound="ge1", default=Fraction(1), example="1.2"),
            F("carbon_intensity", Q, "carbon emitted per unit of grid energy at the site", dim=U.CARBON_PER_ENERGY, bound="nonneg", example="400 gCO2e/kWh"),
        ]
    },
    # a data-parallel worker made of tp x pp x cp GPUs, each holding a shard of the model
    "replica": {
        f.name: f
        for f in [
            F("tp", Q, "tensor-parallel degree: the dense layers split tp ways", dim=U.ONE, bound="count", default=Fraction(1), example="8"),
            F("pp", Q, "pipeline-parallel degree: the layers split into pp stages", dim=U.ONE, bound="count", default=Fraction(1), example="16"),
            F("first_stage_layers", Q, "layers of the first pipeline stage, when the stages are uneven (the rest split evenly)", dim=U.ONE, bound="count", example="7"),
            F("last_stage_layers", Q, "layers of the last pipeline stage, when the stages are uneven", dim=U.ONE, bound="count", example="7"),
            F("cp", Q, "context-parallel degree: the sequence split cp ways (weights replicated)", dim=U.ONE, bound="count", default=Fraction(1), example="2"),
            F("ep", Q, "expert-parallel degree: the experts of a MoE layer split ep ways", dim=U.ONE, bound="count", default=Fraction(1), example="8"),
            F("gpus_per_node", Q, "GPUs in one node (server)", dim=U.ONE, bound="count", default=Fraction(8), example="8"),
            F("scaleup", Q, "GPUs in one scale-up domain (NVLink or NVSwitch); default: a node", dim=U.ONE, bound="count", example="72"),
            F("scaleup_link", "ref", "the scale-up domain's link, per GPU", refs=("link",), example="nvlink4"),
            F("nics", Q, "scale-out NICs per node, on the dc's link; default: one per GPU", dim=U.ONE, bound="count", example="8"),
            F("zero", Q, "ZeRO stage of the data-parallel optimiser, 0 to 3 (1: Megatron's distributed optimizer), over the replicas of a dc", dim=U.ONE, bound="stage", default=Fraction(1), example="3"),
            F("recompute", "enum", "activation recomputation: none, selective (attention scores) or full (each layer's input kept)", choices=RECOMPUTES, default="selective", example="full"),
            F("recompute_share", Q, "the share of each stage's layers that recompute applies to (Megatron's --recompute-num-layers over a stage's layers, --recompute-method block); the rest store their activations; a param may set it", dim=U.ONE, bound="fraction", default=Fraction(1), example="0.5"),
            F("micro_batch", Q, "sequences in one micro-batch", dim=U.ONE, bound="count", default=Fraction(1), example="2"),
            F("sequence_parallel", "bool", "sequence parallelism beside tp (activations split tp ways)", default=True, example="false"),
            F("compute", "enum", "how the compute is timed: block (the step's FLOPs / (peak x efficiency)) or operations (each operation of a layer by its roofline, GEMMs at the device's size-dependent efficiency, the embedding on the first stage and the LM head on the last)", choices=COMPUTE_MODELS, default="block", example="operations"),
            F("flash", "bool", "with compute = operations: the attention core is one fused kernel (FlashAttention: the s x s scores never reach memory); false: scores, softmax and dropout each pass through memory", default=True, example="false"),
            F("gemm_precision", "enum", "with compute = operations: the precision of the linear layers' GEMMs (fp8: at peak_fp8 x efficiency_fp8)", choices=PRECISIONS, default="bf16", example="fp8"),
            F("attention_precision", "enum", "with compute = operations: the precision of the attention core's GEMMs", choices=PRECISIONS, default="bf16", example="bf16"),
            F("capacity_factor", Q, "with compute = operations, a MoE model: each expert takes at most capacity_factor x its balanced share of tokens (the rest dropped); default: dropless", dim=U.ONE, bound="ge1", example="1.25"),
            F("pad_to_capacity", "bool", "with capacity_factor: every expert computes its whole capacity (Megatron's --moe-pad-expert-input-to-capacity)", default=False, example="true"),
            F("moe_imbalance", Q, "with compute = operations, a MoE model: the most-loaded rank's experts take (1 + moe_imbalance) x the balanced tokens (at most the capacity)", dim=U.ONE, bound="nonneg", default=Fraction(0), example="0.1"),
            F("grouped_gemm", "bool", "with compute = operations, a MoE model: a rank's experts run as one grouped GEMM; false: one GEMM per expert, each paying gemm_half", default=True, example="false"),
            F("tp_comm_overlap", "bool", "the tensor-parallel collectives pipelined with the GEMMs (Megatron's --tp-comm-overlap, Transformer Engine's userbuffers; needs sequence_parallel): a micro-batch waits for max(t_tp / tp, t_tp - its compute)", default=False, example="true"),
            F("tp_async_backward", "bool", "with compute = operations: the backward pass's tensor-parallel collectives of the column-parallel layers (QKV, MLP up) run beside their weight-gradient GEMMs (Megatron's asynchronous all-reduce, or reduce-scatter with sequence_parallel); the forward's are waited for", default=False, example="true"),
            F("loss_scaling", "bool", "fp16 training with a loss scale (Megatron's --fp16): the optimiser step also copies the 16-bit gradients to fp32 main gradients and unscales them with the overflow check (+14 B a parameter updated), and zeroes a 16-bit gradient buffer (2 B a parameter held, not 4)", default=False, example="true"),
            F("overlap_p2p", "bool", "the pipeline's point-to-point transfers overlapped with compute (Megatron's --overlap-p2p-communication): the steady state's hide behind the micro-batches' compute, the bubble's stay exposed", default=False, example="true"),
            F("algorithm", "enum", "how a model-parallel group's all-reduce runs: auto (the fastest the links offer, as NCCL's tuner chooses), ring, tree or in_network", choices=ALGORITHMS, default="auto", example="ring"),
            F("virtual_stages", Q, "model chunks per pipeline rank v (interleaved 1F1B): the bubble is (pp - 1)/v micro-batches, the point-to-point transfers v times as many; v splits every stage into chunks of whole layers, an uneven end stage as v - 1 chunks of the others' size and one shorter, which may hold only the embedding or the LM head, as Llama 3's (CT440)", dim=U.ONE, bound="count", default=Fraction(1), example="4"),
        ]
    },
    # a variant of the sites: a field here applies to every dc, in a stage named after a dc to
    # that dc only; `pluggable = none` removes the module; none of them is required
    "variant": {
        f.name: f
        for f in [
            F("workers", Q, "workers in each data centre", dim=U.ONE, bound="count", example="8"),
            F("device", "ref", "each worker's device", refs=("device",), example="h100"),
            F("link", "ref", "each worker's link to the switch", refs=("link",), example="ib_ndr"),
            F("switch", "ref", "the data centre's switch", refs=("switch",), example="tor"),
            F("pluggable", "ref", "a module in each worker's port; none: no module", refs=("pluggable",), example="none"),
        ]
    },
    "scheme": {
        f.name: f
        for f in [
            F("payload", "enum", "what a worker sends", choices=PAYLOADS, required=True, example="band"),
            F("fraction", Q, "fraction of values kept (topk, band)", dim=U.ONE, bound="fraction", example="1/16"),
            F("bits", Q, "width of a quantised value (quantise)", dim=U.DATA, bound="positive", example="2 b"),
            F("block", Q, "values per scale block (quantise)", dim=U.ONE, bound="count", example="128"),
            F("scale", Q, "size of one block scale (quantise)", dim=U.DATA, bound="positive", example="2 B"),
            F("index", Q, "size of one position (topk, demo)", dim=U.DATA, bound="positive", example="8 B"),
            F("chunk", Q, "values per chunk (topk, demo)", dim=U.ONE, bound="count", example="4096"),
            F("k", Q, "values kept per chunk (demo)", dim=U.ONE, bound="count", example="32"),
            F("collective", "enum", "how the payloads are combined", choices=COLLECTIVES, required=True, example="hier_allreduce"),
            F("at", "ref", "where the transform runs: gpu, a pluggable or a switch", refs=("gpu", "pluggable", "switch"), default="gpu", example="qsfp"),
            F("sum_at", "ref", "where an in-network sum runs (default: each dc's switch)", refs=("switch",), example="tor"),
            F("loopback", "bool", "return each worker's own contribution (innet_sum)", default=False, example="true"),
            F("period", Q, "sync period H: steps between syncs", dim=U.ONE, bound="ge1", default=Fraction(1), example="100"),
            F("steps", Q, "steps to the target loss", dim=U.ONE, bound="positive", example="12000"),
            F("step", Q, "a given compute time of one training step (compute only, \"the step takes 0.8 s\"): the inner step is this one block, in place of the model's FLOPs over peak x efficiency; the syncs are added as usual", dim=U.TIME, bound="positive", example="0.8 s"),
            F("overlap", "enum", "what the sync overlaps: false (it follows the compute), true (it runs alongside the next H steps: max(compute, sync / H)) or backward (bucket by bucket with the backward pass of the step's last micro-batch)", choices=OVERLAPS, default="false", example="backward"),
            F("overlap_param_gather", "bool", "the distributed optimizer's parameter all-gather (the all-gather phases of hier_allreduce) overlapped with the next step's first forward pass, bucket by bucket (Megatron's --overlap-param-gather): max(T_ag / B, T_ag - t_f) stays exposed", default=False, example="true"),
            F("bucket", Q, "gradient bytes per bucket of a sync that overlaps the backward pass (a GPU's dense gradient shard is cut into ceil(shard / bucket) buckets; PyTorch DDP's default 25 MB); layer: one bucket per layer the GPU holds; none (in a scheme that extends another): drop the bucket it inherits", dim=U.DATA, bound="positive", default=Fraction(25_000_000), example="40 MB", words=("layer",)),
            F("fragments", Q, "Streaming DiLoCo: the model synced in F fragments, each every H steps on its own staggered schedule (one fragment sync every H / F steps)", dim=U.ONE, bound="count", default=Fraction(1), example="4"),
            F("fragment_layers", Q, "Streaming DiLoCo: a fragment's size in layers (the papers' \"fragments of 3 layers\"), instead of fragments: F = ceil(layers / fragment_layers); needs the model's shape", dim=U.ONE, bound="count", example="3"),
            F("ready", "enum", "when a fragment's outer gradient is ready to sync: step (at the end of the step's compute, the worst case) or layer (once the backward pass has passed its layers, as the Streaming DiLoCo paper's simulator schedules it); needs the model's layers", choices=READINESS, default="step", example="layer"),
            F("fragment_order", "enum", "which layers a fragment holds: strided (fragment j: layers j, j + F, ..., the paper's) or sequential (a run of consecutive layers); matters with ready = layer", choices=FRAGMENT_ORDERS, default="strided", example="sequential"),
            F("delay", Q, "inner steps a sync may take while training goes on (Streaming DiLoCo's overlap tau; 1: one-step delayed updates); only what outlasts them is exposed", dim=U.ONE, bound="nonneg", default=Fraction(0), example="5"),
            F("inner", "enum", "with period H > 1: none (every replica is a DiLoCo worker: the whole sync every H steps) or dc (each dc's replicas are one data-parallel group that syncs the dense gradient inside the dc every step; across dcs every H steps)", choices=INNER_SYNCS, default="none", example="dc"),
            F("overhead", Q, "fixed time per sync: software, kernel launches, pipeline fill", dim=U.TIME, bound="nonneg", default=Fraction(0), example="2 ms"),
            F("cost", Q, "transform FLOPs per input byte (DCT: 10 by default)", dim=U.OPS_PER_DATA, bound="nonneg", example="10 FLOP/B"),
            F("transform_charge", "enum", "how its transform on the GPU is charged: roofline or flops (default: the device's)", choices=TRANSFORM_CHARGES, example="flops"),
            F("model", "ref", "the model trained (default: the only one in the file)", refs=("model",), example="llama70b"),
            F("sites", "ref", "the variant of the sites it runs on (default: the sites as declared)", refs=("variant",), example="bare"),
            F("label", "string", "a display name", example='"band in the module"'),
        ]
    },
    "simulation": {
        f.name: f
        for f in [
            F("steps", Q, "steps measured per seed, after the warm-up", dim=U.ONE, bound="count", default=Fraction(100), example="200"),
            F("seeds", Q, "independent runs, one seed each", dim=U.ONE, bound="count", default=Fraction(10), example="10"),
            F("warmup", Q, "steps run and discarded at the start of each run", dim=U.ONE, bound="nonneg", default=Fraction(10), example="20"),
            F("latency", "enum", "a loaded link is held during a transfer's latency (hold) or only for its bytes (propagate)", choices=SIM_LATENCIES, default="propagate", example="hold"),
        ]
    },
}

# the serving kinds (ctdsl/language/serving.py, docs/serving.md)
KINDS.update(serving_kinds(F, Q))

# pluggable stages: name -> fields
STAGES: dict[str, dict[str, FieldSpec]] = {
    "port": {
        f.name: f
        for f in [
            F("rate", Q, "the module's line rate", dim=U.RATE, bound="positive", required=True, example="25 GB/s"),
            F("host", Q, "rate of the host port it sits in", dim=U.RATE, bound="positive", example="50 GB/s"),
        ]
    },
    "optics": {
        f.name: f
        for f in [
            F("rate", Q, "the optics' sample rate", dim=U.RATE, bound="positive", required=True, example="14 GB/s"),
            F("performs", "ops", "transforms the optics performs at no compute cost", default=(), example="[dct]"),
        ]
    },
    "compute": {
        f.name: f
        for f in [
            F("budget", Q, "FLOP/s that charged arithmetic draws on", dim=U.OPS_RATE, bound="positive", required=True, example="50 GFLOP/s"),
        ]
    },
    "fpga": {
        f.name: f
        for f in [
            F("rate", Q, "rate of framing and band selection", dim=U.RATE, bound="positive", required=True, example="40 GB/s"),
        ]
    },
}

# what a break-even may compare (`breakeven x vs y over p on cost`): the first is the default
BREAKEVEN_ON = ("time", "energy", "cost", "co2e")
# what a break-even of two hand-offs may compare (`breakeven h1 vs h2 over p on ttft_p`): a serving path's
# term at the workload's rate (energy: per output token); the first is the default
SERVING_BREAKEVEN_ON = ("ttft", "ttft_p", "e2e", "e2e_p", "energy")

# the fields that price a spec or give its carbon: a spec that sets none gets no cost or CO2e to target
MONEY_FIELDS = {
    "device": ("price", "capex", "embodied_carbon"),
    "link": ("price",),
    "pluggable": ("price",),
    "switch": ("price",),
    "dc": ("power_price", "carbon_intensity"),
}

SHAPE_FIELDS = ("layers", "width", "heads", "kv_heads", "mlp", "vocab")
# the optional parts of a shape, each a count the parameter and FLOP formulas read (ctdsl.model.payload)
SHAPE_OPTIONS = ("head_dim", "attn_params", "experts", "experts_per_token", "expert_mlp", "shared_mlp", "moe_layers", "seq")
MOE_FIELDS = ("experts", "experts_per_token", "expert_mlp")  # an MoE model gives all three
SHAPE_SWITCHES = ("tied", "norms", "gated", "causal")  # the shape's bool fields
