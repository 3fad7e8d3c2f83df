"""The ct language, defined once: kinds of block and their fields, the enums of
payloads, collectives, placements and jitter, the operations each transform needs,
the binding rule and the named numeric tolerances.

The checker, the back ends, lint and the doc generators read it; it imports
nothing of ctdsl but `units`.
"""
