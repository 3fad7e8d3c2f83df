"""The lint rules: specs that parse and check, but look physically wrong.

Each rule is a function over a `Context` (a checked spec, its syntax trees and its
text) that yields `Hit`s; the runner gives them the rule's code and severity.
A rule's docstring is its explanation in docs/lint-rules.md, and says how its
numbers are judged. Numbers are taken at the params' defaults. Definitions from
the standard library (`<std>/...`) are presets, correct by construction, and are
never reported themselves; a user's definition that extends one is.

One module per subject: `definitions` (CTL001), `modules` (CTL002, CTL003),
`links` (CTL004, CTL005), `bit_byte` (CTL006), `payloads` (CTL007), `schemes`
(CTL008, CTL010), `sweeps` (CTL009), `suppressions` (CTL011, which the runner
applies), `replicas` (CTL012, CTL013), `serving` (CTL014-CTL016); `shared` holds what they share. `ctdsl.lint.catalogue` gathers them.
Constants a rule compares against are named in its module, with where they come
from; tolerances come from `ctdsl.language.tolerances`.
"""
