"""The fuzz campaign: input generators, an in-process harness over every command, a shrinker.

- `generators`: sentences of the grammar (hypothesis.extra.lark), mutations of the
  specs and examples, random expressions put in every field, and real specs with
  payloads planted where their text reaches an output (`payloads`);
- `harness`: runs one input through every command (`commands`) with typer's
  CliRunner, each under a time limit, measures its peak memory, reads its outputs
  with an oracle per sink (`sinks`) and classifies the outcome as ok, crash
  (exception type and innermost ctdsl frame), hang, memory, leak or slow;
- `shrink`: deletes lines while the same crash (or leak) reproduces;
- `cases`: the regression files (crashes/*.ct, hostile/*.ct) and their expectations.

The short run is tests/fuzz/test_fuzz_short.py; the long one is bench/fuzz.py.
"""
