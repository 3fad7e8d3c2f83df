"""The fuzz campaign: input generators, an in-process harness over every command, a shrinker.

- `generators`: sentences of the grammar (hypothesis.extra.lark), mutations of the
  specs and examples, random expressions put in every field;
- `harness`: runs one input through check, lint, solve, export, graph, report, sweep
  and simulate with typer's CliRunner, each under a wall-clock limit, and classifies
  the outcome as ok, crash (exception type and innermost ctdsl frame) or slow;
- `shrink`: deletes lines while the same crash reproduces;
- `cases`: the regression files (crashes/*.ct, hostile/*.ct) and their expectations.

The short run is tests/fuzz/test_fuzz_short.py; the long one is bench/fuzz.py.
"""
