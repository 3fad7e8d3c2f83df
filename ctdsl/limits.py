"""Bounds on what a spec can make the machine do. Each breach is a diagnostic."""

MAX_FILE_BYTES = 256 * 1024  # one spec file (Lark reads about 60k tokens a second: 256 KiB is a few seconds at worst)
MAX_NESTING = 4  # block -> stage -> ... levels
MAX_EXPR_DEPTH = 200  # nesting of one expression (a long sum is a deep tree)
MAX_LIST_DEPTH = 4  # lists inside lists (a field takes a flat list)
MAX_STRING_CHARS = 256  # characters of one string: a label or a param's display name (CT609)
MAX_NAME_CHARS = 128  # characters of one name (CT609)
MAX_EXPR_NODES = 50_000  # expression nodes in one file
MAX_EXPANDED_NODES = 200_000  # nodes of one checked expression once references are expanded
MAX_EXPONENT = 64  # |e| in x ^ e
MAX_DECIMAL_EXPONENT = 300  # |e| in 1e300, and the magnitude of any literal
MAX_DIGITS = 64  # digits of one number literal
MAX_EXACT_BITS = 8192  # bits of an exact number that folding a spec's constants makes, numerator and denominator (about 2,466 digits), sized by logarithms before it is computed (CT610)
MAX_DEGREE = 64  # degree of one expression in the params: (x ^ 8) ^ 8 and x ^ 32 * y ^ 32 are 64 (CT611)
MAX_EXPANDED_TERMS = 4096  # terms of one expression once multiplied out: (a + b + c + d + e) ^ 8 is 495, ^ 64 is 814,385 (CT612)
MAX_INHERITANCE_DEPTH = 64  # a : b : c ... (each block's base chain)
MAX_REFERENCE_DEPTH = 32  # a field that reads a field that reads a field ... (a.bandwidth = b.bandwidth ...)
MAX_STATEMENTS = 4096  # params, blocks, WANs and break-evens, over the spec and its imports
MAX_TARGETS = 256  # roots the `target` statements ask for (values x schemes), each a solve (CT628)
MAX_DIST_SAMPLES = 10_000  # samples in one table of samples, `~ samples([...])` (CT629)
MAX_SAMPLE_NODES = 32  # expression nodes of one sample of a table: a number with its unit, or a short constant expression (CT629)
MAX_IMPORT_DEPTH = 16  # a imports b imports c ...
MAX_IMPORTS = 256  # files read for one spec
MAX_IMPORT_STATEMENTS = 1024  # import statements followed in one load (CT505)
MAX_LOAD_BYTES = 256 * 1024  # bytes of all the files one spec reads, the root included (CT505)
MAX_WORKERS_PER_DC = 1024  # workers in one dc
MAX_WORKERS = 4096  # workers in all dcs together
MAX_DCS = 64  # data centres
MAX_VARIANTS = 16  # variants of the sites, each with a graph of its own (CT623)
MAX_SWEEP_POINTS = 100_000  # points of one param's sweep
MAX_GRID_POINTS = 1_000_000  # points of `ctdsl sweep`'s default grid, the product of every declared sweep (CT607)
MAX_SEARCH_POINTS = 100_000  # grid points of one design search, per choice of scheme (CT607)
MAX_SIM_STEPS = 100_000  # steps (or warm-up steps) of one simulated run, and a scheme's period when simulated (CT608)
MAX_SIM_SEEDS = 1_000  # simulated runs per scheme
MAX_SIM_EVENTS = 2_000_000  # background transfers on a link in one simulated run, estimated before it runs (CT608)
MAX_SIM_SWEEP_POINTS = 1_000  # grid points of one `ctdsl simulate --sweep` (each a whole simulation) (CT608)
MAX_SIM_WALL_SECONDS = 600  # wall time of one simulate command's runs; past it the seeds done are shown (CT608 warning)

# the diagnostic each limit gives where a spec (or the command line) passes it
CODES: dict[str, str] = {
    "MAX_FILE_BYTES": "CT601",
    "MAX_NESTING": "CT602",
    "MAX_EXPR_DEPTH": "CT602",
    "MAX_LIST_DEPTH": "CT602",
    "MAX_STRING_CHARS": "CT609",
    "MAX_NAME_CHARS": "CT609",
    "MAX_EXPR_NODES": "CT603",
    "MAX_EXPANDED_NODES": "CT603",
    "MAX_EXPONENT": "CT604",
    "MAX_DECIMAL_EXPONENT": "CT605",
    "MAX_DIGITS": "CT605",
    "MAX_EXACT_BITS": "CT610",
    "MAX_DEGREE": "CT611",
    "MAX_EXPANDED_TERMS": "CT612",
    "MAX_INHERITANCE_DEPTH": "CT620",
    "MAX_REFERENCE_DEPTH": "CT622",
    "MAX_STATEMENTS": "CT621",
    "MAX_IMPORT_DEPTH": "CT505",
    "MAX_IMPORTS": "CT505",
    "MAX_IMPORT_STATEMENTS": "CT505",
    "MAX_LOAD_BYTES": "CT505",
    "MAX_WORKERS_PER_DC": "CT606",
    "MAX_WORKERS": "CT606",
    "MAX_DCS": "CT606",
    "MAX_SWEEP_POINTS": "CT607",
    "MAX_SEARCH_POINTS": "CT607",
    "MAX_GRID_POINTS": "CT607",
    "MAX_SIM_STEPS": "CT608",
    "MAX_SIM_SEEDS": "CT608",
    "MAX_SIM_EVENTS": "CT608",
    "MAX_SIM_SWEEP_POINTS": "CT608",
    "MAX_SIM_WALL_SECONDS": "CT608",
    "MAX_VARIANTS": "CT623",
    "MAX_TARGETS": "CT628",
    "MAX_DIST_SAMPLES": "CT629",
    "MAX_SAMPLE_NODES": "CT629",
}
