"""Every diagnostic code ctdsl emits, with a name and a summary.

Codes are stable: a code keeps its meaning for good, and a retired code is not
reused. The hundreds say which phase found the problem:

- CT0xx  reading and syntax
- CT1xx  names: definitions, fields, references
- CT2xx  units and dimensions
- CT3xx  values: bounds at the defaults and at the ends of every range
- CT4xx  topology and where each scheme's work runs
- CT5xx  imports
- CT6xx  limits that keep a hostile file from making the machine work hard
- CT7xx  solving: what a spec that checks clean still asks the solver in vain
  (raised by the back ends after checking, as `ctdsl.failure.Failure`)
- CT8xx  running: the processes or the Dask cluster a simulation runs on, and
         the optional packages a feature needs (CT890, ctdsl/extras.py)

docs/diagnostics.md lists them with an example each; `tools/gen_diagnostics_doc.py`
writes it, and a test keeps it, this table and the source in step.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Code:
    code: str
    name: str  # kebab-case, for people and for `# noqa`-style references
    summary: str  # one line


_TABLE = [
    # reading and syntax
    Code("CT001", "unreadable-file", "the spec file cannot be read: missing, not a regular file (a directory, FIFO or device), a bad path, a link out of the linted directory, or not UTF-8 text"),
    Code("CT002", "unexpected-token", "a word, number or symbol where the grammar does not allow it"),
    Code("CT003", "unexpected-character", "a character that is not part of the language"),
    Code("CT004", "unexpected-end-of-file", "the file ends in the middle of a statement, e.g. a '{' never closed"),
    Code("CT005", "missing-separator", "two fields or statements on one line without a ';' between them"),
    Code("CT006", "unterminated-string", "a string whose closing '\"' is missing on its line"),
    # names
    Code("CT101", "unknown-name", "a name, field value, base or param that is not defined"),
    Code("CT102", "wrong-kind", "a name of the wrong kind of definition, e.g. a device where a link is needed"),
    Code("CT103", "duplicate-definition", "a name defined twice, a built-in name redefined, or a second baseline"),
    Code("CT104", "unknown-field", "a field or stage that the block's kind does not have"),
    Code("CT105", "missing-field", "a required field, stage or shape that what uses the definition needs"),
    Code("CT106", "duplicate-field", "a field or stage set twice in one block"),
    Code("CT107", "unknown-function", "a call to a function other than min, max, ceil and log2"),
    Code("CT108", "unknown-choice", "an operation, payload or collective that is not one of the choices"),
    Code("CT109", "inheritance-cycle", "a block whose chain of bases leads back to itself"),
    Code("CT110", "reference-cycle", "a field whose value depends on itself through references"),
    Code("CT111", "bad-reference", "a dotted reference to a field or stage that does not exist or is not set"),
    Code("CT112", "wrong-argument-count", "a function called with too few or too many arguments"),
    Code("CT113", "field-not-applicable", "a field that does not apply given another field: a scheme's payload, a dc's jitter_kind"),
    Code("CT114", "not-a-dc", "a stage of a variant that does not name a data centre of the sites"),
    Code("CT115", "cannot-remove", "none given to a field that cannot be removed (a dc's device, link or switch), or outside a variant"),
    Code("CT116", "price-and-capex", "a device with both a price per hour (rented) and a capex (bought)"),
    Code("CT117", "scenario-not-values", "a scenario that holds something other than param = value: a stage or a WAN statement"),
    Code("CT118", "observation-without-source", "an observed value that does not say where it was measured (source \"...\")"),
    Code("CT119", "observation-without-scheme", "an observation without `of SCHEME` in a spec with several schemes, or with none"),
    Code("CT120", "fit-needs-one-observation", "a fit on a scenario with no observation, or with several"),
    Code("CT121", "fit-param-not-free", "a fit of a param without a range, of a count (a whole number), or of one a scenario sets"),
    Code("CT122", "second-fit", "a second fit statement: a spec fits one param"),
    Code("CT123", "fragment-size", "fragment_layers on a scheme whose model gives no layers, or beside fragments"),
    Code("CT124", "per-layer-without-layers", "ready = layer or bucket = layer on a scheme whose model gives no layers"),
    Code("CT130", "bad-search", "a design search that cannot be posed: an objective that is not a weighted sum of time, energy, cost and co2e, cost or CO2e where nothing is priced, a param without a range, a scheme without steps, a Pareto front of other than 2 or 3 objectives"),
    Code("CT140", "pool-without-instance", "a serving pool that names no instance"),
    Code("CT141", "slo-without-target", "an slo block that sets none of ttft, tpot and e2e"),
    Code("CT142", "instance-incomplete", "a serving instance whose device lacks peak, efficiency, mem_bw or memory, or whose model has no shape"),
    Code("CT143", "instance-layout", "a serving instance whose tp, pp or ep the model does not divide into"),
    # units and dimensions
    Code("CT201", "dimension-mismatch", "quantities of different dimensions added, subtracted or compared by min or max"),
    Code("CT202", "wrong-dimension", "a field or --set value whose dimension is not the one it takes"),
    Code("CT203", "bad-exponent", "an exponent that is not a constant number, or a unit raised to a fractional power"),
    Code("CT204", "needs-plain-number", "a quantity with a unit given to ceil or log2, which take plain numbers"),
    Code("CT205", "unknown-unit", "a unit ctdsl does not know, often with the spelling to use"),
    Code("CT206", "wrong-value-type", "a value of the wrong type: a number where a name, string, list or bool is needed, or the reverse"),
    Code("CT207", "range-dimension", "a param's range ends with a different dimension from its default"),
    Code("CT208", "distribution-dimension", "a param's distribution argument with a different dimension from its default (lognormal's sigma: a plain number)"),
    # values
    Code("CT301", "not-positive", "a bandwidth, rate, count or size that is zero or negative"),
    Code("CT302", "not-a-fraction", "a fraction outside (0, 1], or a utilisation outside [0, 1)"),
    Code("CT303", "below-one", "a sync period H below 1"),
    Code("CT304", "negative", "a latency, power or energy below zero"),
    Code("CT305", "not-whole", "a count (workers, layers, chunk, k) that is not a whole number"),
    Code("CT306", "cannot-evaluate", "a value that cannot be computed: division by zero, overflow, log2 of zero"),
    Code("CT307", "bad-range", "a param range that is reversed, excludes its default, or cannot be swept"),
    Code("CT308", "inconsistent-model", "a model with both params and a shape, or a shape that does not divide"),
    Code("CT309", "not-constant", "a param default, a dc's workers, a scenario's value or an observed value that depends on another name"),
    Code("CT310", "unsafe-display-name", "a param's display name with characters or commands LaTeX output cannot use safely"),
    Code("CT311", "set-outside-range", "a --set value outside the param's declared range (a warning: the value is used)"),
    Code("CT312", "stream-above-total", "a switch whose stream_rate (each stream's) is above its total_rate (all streams', shared)"),
    Code("CT313", "unknown-distribution", "a param's `~` naming no known distribution, or with the wrong number or shape of arguments (a table of samples where a value is asked for, or the reverse)"),
    Code("CT314", "bad-distribution", "a distribution outside its bounds: lo >= hi, a mode outside lo..hi, sd, median or sigma not positive, or outside the param's range; a table of samples with fewer than two, or a sample that is not a number or lies outside the param's range"),
    Code("CT315", "not-a-zero-stage", "a replica's ZeRO stage (zero) that is not 0, 1, 2 or 3"),
    Code("CT316", "scenario-outside-range", "a scenario's value outside the param's declared range (an error: unlike --set, the spec declares both)"),
    Code("CT317", "fit-no-root", "a fit with no value of the param in its range at which the prediction meets the observation (found when solving)"),
    Code("CT318", "too-many-observed-scenarios", "observations naming more scenarios than the limit: each is checked and solved in full"),
    Code("CT360", "kv-cannot-fit", "a serving instance whose weights, or whose weights and one request's KV cache, do not fit its memory share"),
    # topology and placement
    Code("CT401", "unsupported-operation", "a transform placed where its operations do not exist, e.g. top-k on a pluggable"),
    Code("CT402", "sum-not-at-switch", "an in-network sum placed on something that is not a switch, or without innet_sum"),
    Code("CT403", "switch-cannot-sum", "an in-network sum through a switch that does not sum"),
    Code("CT404", "no-loopback", "loopback asked of a switch that does not loop a worker's contribution back"),
    Code("CT405", "payload-cannot-be-summed", "top-k or DeMo payloads given to a collective that sums position by position"),
    Code("CT406", "not-in-path", "a scheme routed through a module or switch that is not in every worker's path"),
    Code("CT408", "unequal-dcs", "a hierarchical collective over dcs with different numbers of workers"),
    Code("CT409", "switch-needs-innet-sum", "a transform at a switch with a collective other than innet_sum"),
    Code("CT410", "no-dcs", "schemes but no data centre to run them on"),
    Code("CT411", "ambiguous-model", "a scheme that names no model when the spec does not define exactly one"),
    Code("CT412", "unreachable", "workers of one dc that cannot reach another dc over the WAN links, or the sites of one dc that no WAN joins"),
    Code("CT413", "wan-self-loop", "a WAN link from a dc to itself"),
    Code("CT414", "duplicate-wan", "the same direction of a WAN link declared twice"),
    Code("CT415", "self-breakeven", "a break-even of a scheme against itself"),
    Code("CT416", "unknown-wan-connection", "a variant that replaces the link of a WAN connection the sites do not have"),
    Code("CT417", "wan-outside-variant", "a WAN statement inside a block other than a variant, or inside a stage"),
    Code("CT418", "replica-does-not-divide", "a replica whose degrees do not divide its model: layers by pp, heads by tp, experts by ep"),
    Code("CT419", "nodes-not-filled", "a replica's GPUs that neither fill whole nodes nor divide one, or replicas that leave a node part-filled"),
    Code("CT420", "mixed-workers", "a dc of replicas that also counts workers, or dcs of replicas beside dcs of single-device workers"),
    Code("CT421", "shards-cannot-pair", "dcs whose replicas shard the model differently, so that GPU j of one has no counterpart in another"),
    Code("CT422", "sites-below-two", "a dc whose sites a WAN joins in a ring, with a count of sites that is below 2 at its default or an end of its range"),
    Code("CT423", "sites-of-workers", "a count of sites in a dc of single-device workers, which are unrolled one by one (sites needs replicas)"),
    Code("CT424", "route-through-sites", "a WAN route between two other dcs that passes through a dc of several sites: which of its sites it crosses is not modelled"),
    Code("CT425", "shard-does-not-fit", "a GPU whose shard of the model, its gradients, optimiser states and activations exceed its memory (a warning)"),
    Code("CT426", "gather-into-sites", "a hier_allgather into a dc of several sites from a dc with other GPUs a site: its first site would receive what the others do not"),
    Code("CT430", "target-unranged", "a target over a param with no range to look for the target in"),
    Code("CT431", "target-not-constant", "a target value that names a param or a field instead of a constant"),
    Code("CT435", "sync-overlap-twice", "a sync schedule that counts an overlap twice (overlap = true with a delay, fragments or an inner sync) or syncs more fragments than steps between syncs"),
    Code("CT436", "inner-sync-cannot-apply", "inner = dc without dcs of replicas, with a sync period of 1, or with a collective that has no phase across dcs"),
    Code("CT440", "virtual-stages-do-not-divide", "interleaved virtual stages that do not split the layers of every pipeline stage into whole chunks (an uneven end stage: v - 1 chunks of the others' size and one of 0 to that size, which may hold only the embedding or the LM head)"),
    Code("CT441", "operations-cannot-be-timed", "a replica with compute = operations whose model gives no full shape with seq or whose device gives no mem_bw, or an FP8 precision on a device without peak_fp8, or a device with sms but no tile_m and tile_n"),
    Code("CT442", "operations-field-unread", "a replica field that only compute = operations reads (flash, the precisions, tp_async_backward, the MoE execution's) with compute = block, or the MoE execution's on a dense model, where it would change nothing"),
    Code("CT450", "tp-overlap-needs-sequence-parallel", "tp_comm_overlap on a replica without sequence parallelism (Megatron's overlap pipelines the all-gather and reduce-scatter that sequence parallelism makes of each all-reduce)"),
    Code("CT470", "workload-at-decode", "a workload whose requests enter a decode pool"),
    Code("CT471", "prefill-without-handoff", "a workload entering a prefill pool that no hand-off leaves"),
    Code("CT472", "handoff-roles", "a hand-off that does not go from a prefill pool to a decode pool"),
    Code("CT473", "handoff-models-differ", "a hand-off between pools that serve different models"),
    Code("CT474", "handoff-link-and-route", "a hand-off that names both a link and a route"),
    Code("CT475", "handoff-breakeven-measure", "a break-even of two hand-offs on a measure of training (time, cost or co2e to target)"),
    Code("CT476", "scheme-vs-handoff", "a break-even of a training scheme against a serving hand-off"),
    Code("CT477", "handoffs-of-different-workloads", "a break-even of two hand-offs that no one workload's requests can take"),
    Code("CT478", "scheme-breakeven-serving-measure", "a break-even of two schemes on a serving measure (ttft, ttft_p, e2e, e2e_p)"),
    Code("CT479", "self-breakeven-handoff", "a break-even of a hand-off against itself"),
    Code("CT490", "plot-axes-dropped", "sweep --plot over three or more swept params: a figure draws at most two (a winner map), and does not drop the others silently"),
    # imports
    Code("CT501", "import-not-found", "an imported file that does not exist, cannot be read, is not a regular file or is not a .ct file"),
    Code("CT502", "import-outside", "an import that leaves the importing file's directory, or one from a library file"),
    Code("CT503", "import-cycle", "files that import each other"),
    Code("CT504", "unknown-library-module", "an `import std.NAME` of a library module that does not exist"),
    Code("CT505", "too-many-imports", "imports nested too deep, or too many import statements, files or bytes for one spec"),
    # limits
    Code("CT601", "file-too-large", "a spec file (or a --set value) larger than the limit"),
    Code("CT602", "nesting-too-deep", "blocks or an expression nested deeper than the limit"),
    Code("CT603", "expression-too-large", "too many expression nodes in a file, or in one expression once references expand"),
    Code("CT604", "exponent-too-large", "an exponent in x ^ e beyond the limit"),
    Code("CT605", "number-out-of-range", "a number literal with too many digits or too large a magnitude"),
    Code("CT606", "too-many-workers", "more workers or dcs than are modelled"),
    Code("CT607", "too-many-sweep-points", "a param sweep with more points than the limit"),
    Code("CT608", "simulation-too-large", "a simulation with more steps, seeds or background transfers per run than the limit"),
    Code("CT609", "text-too-long", "a string (a label, a display name) or a name longer than the limit"),
    Code("CT610", "exact-value-too-large", "a constant whose exact value (a power, product or quotient of numbers) would be larger than the limit: its size is found by logarithms and it is never computed"),
    Code("CT611", "degree-too-high", "an expression whose degree in the params (nested powers multiply their exponents, a product adds them) is beyond the limit"),
    Code("CT612", "expansion-too-large", "a power or product of sums that would multiply out into more terms than the limit"),
    Code("CT620", "inheritance-too-deep", "a block whose chain of bases is longer than the limit"),
    Code("CT621", "too-many-statements", "more params, blocks, WANs and break-evens than the limit, imports included"),
    Code("CT622", "references-too-deep", "a field reached through a longer chain of field references than the limit"),
    Code("CT623", "too-many-variants", "more variants of the sites than the limit: each is checked and gets a graph of its own"),
    Code("CT628", "too-many-targets", "target statements asking for more targets (values x schemes) than the limit"),
    Code("CT629", "sample-table-too-large", "a table of samples (`~ samples([...])`) with more samples than the limit, or a sample written with more expression nodes than the limit"),
    # solving
    Code("CT701", "too-many-regimes", "a break-even whose times split into more max/min regimes than the solver enumerates"),
    Code("CT702", "breakeven-not-evaluable", "a break-even whose times cannot be computed at an end of the param's range"),
    Code("CT703", "search-infeasible", "a design search whose constraints no choice meets at any point of the params' ranges"),
    # running: where the simulation's runs go
    Code("CT801", "scheduler-unreachable", "no Dask scheduler answered at the address given to --scheduler"),
    Code("CT802", "simulation-run-failed", "a simulated run raised, or the process or Dask worker running it died"),
    Code("CT890", "extra-not-installed", "a feature of an optional extra (Parquet, netCDF, Dask, the language server) whose package is not installed"),
]

CODES: dict[str, Code] = {c.code: c for c in _TABLE}
BY_NAME: dict[str, Code] = {c.name: c for c in _TABLE}

PHASES = {
    "0": "Reading and syntax",
    "1": "Names",
    "2": "Units and dimensions",
    "3": "Values",
    "4": "Topology and placement",
    "5": "Imports",
    "6": "Limits",
    "7": "Solving",
    "8": "Running",
}


def lookup(code_or_name: str) -> Code | None:
    """A code by its number (`CT202`) or its name (`wrong-dimension`)."""
    return CODES.get(code_or_name.upper()) or BY_NAME.get(code_or_name.lower())


def phase(code: str) -> str:
    return PHASES[code[2]]


__all__ = ["Code", "CODES", "BY_NAME", "PHASES", "lookup", "phase"]
