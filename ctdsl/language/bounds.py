"""The bounds on a field's value, defined once: what each allows, its code and the words of its diagnostic.

A quantity field of the schema names a bound (`FieldSpec.bound`: positive,
fraction, ...). The checker tests each bounded field at the params' defaults
(the `--set` values) and at each end of each param's declared range
(`ctdsl.check.fields.check_bound`), and the explorer's page tests what a reader
types against the same bounds, with the same messages: both read them here.

Each bound is data (an interval, or a set of values), so that the page can
carry it as JSON; a message is a template with named places, filled by the
checker with `str.format` and by the page's script with the same names:

- `{owner}`: the field (`accel.efficiency`), `{words}`: the bound's words;
- `{shown}`: the value as `ctdsl.units.format_quantity` prints it, `{value}`:
  the value as `{:g}` prints it;
- `{when}`: empty at the defaults, else `WHEN` with `{param}` and `{end}`;
- `{error}`: why the value cannot be evaluated (`ctdsl.model.expr.MESSAGES`).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Bound:
    """A bound on a value: an interval (an end None is open to infinity), or a set of values."""

    code: str
    words: str  # "must be a fraction in (0, 1]"
    low: float | None = None
    low_closed: bool = True
    high: float | None = None
    high_closed: bool = True
    values: tuple[int, ...] | None = None  # a value must be one of these
    whole: bool = False  # a count: also a whole number (to within REL) of at least 1
    counts_only: bool = False  # tested only where the value is a count (> 0, whole) at every point: else its field's bound reports it
    message: str = "{owner} {words}, but it is {shown}{when}"

    def ok(self, v: float) -> bool:
        if self.values is not None:
            return v in self.values
        if self.low is not None and not (v >= self.low if self.low_closed else v > self.low):
            return False
        if self.high is not None and not (v <= self.high if self.high_closed else v < self.high):
            return False
        return True


BOUNDS: dict[str, Bound] = {
    "positive": Bound("CT301", "must be positive", low=0, low_closed=False),
    "count": Bound("CT301", "must be positive", low=0, low_closed=False, whole=True),
    "nonneg": Bound("CT304", "must not be negative", low=0),
    "fraction": Bound("CT302", "must be a fraction in (0, 1]", low=0, low_closed=False, high=1),
    "utilisation": Bound("CT302", "must be a utilisation in [0, 1)", low=0, high=1, high_closed=False),
    "ge1": Bound("CT303", "must be at least 1", low=1),
    "stage": Bound("CT315", "must be a ZeRO stage: 0, 1, 2 or 3", values=(0, 1, 2, 3)),
    # not a field's bound: a dc whose sites a WAN joins in a ring has 2 or more (the owner is the dc)
    "ring_sites": Bound(
        "CT422",
        "needs at least 2 sites",
        low=2,
        counts_only=True,
        message="dc '{owner}' joins its sites in a ring (wan {owner} <-> {owner}), which {words}, but it has {value}{when}",
    ),
}

WHEN = " when {param} is at the {end} end of its range"

# a count's further checks, after its bound
NOT_WHOLE = ("CT305", "{owner} must be a whole number, but it is {value}{when}", "counts of workers, layers, chunks and values are whole numbers")
BELOW_ONE = ("CT301", "{owner} must be at least 1, but it is {value}{when}", "a count is a whole number of at least 1")
NOT_EVALUATED = ("CT306", "{owner} cannot be evaluated{when}: {error}")

# a `--set` value outside the param's declared range: a warning, and the value is used
OUTSIDE_RANGE = (
    "CT311",
    "--set {param} = {shown} lies outside its declared range {low} .. {high}; the value is used",
    "widen the param's range in the spec if the value is meant",
)


def bound_help(bound: str, key: str, example: str | None) -> str | None:
    """The help line of a bound's diagnostic, for field `key` (its schema example, if any)."""
    if bound == "fraction":
        return f"a fraction lies in (0, 1], e.g. {key} = {example if example is not None else '1/16'}"
    if bound == "ge1":
        return "H counts steps between syncs: 1 syncs every step"
    if bound == "nonneg" and key == "latency":
        return "a latency is a time of zero or more, e.g. 10 us"
    if bound == "ring_sites":
        return "give sites a value and a range of 2 or more, or drop the WAN from the dc to itself for one site"
    return f"e.g. {key} = {example}" if example else None


__all__ = ["BELOW_ONE", "BOUNDS", "Bound", "NOT_EVALUATED", "NOT_WHOLE", "OUTSIDE_RANGE", "WHEN", "bound_help"]
