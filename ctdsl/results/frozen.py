"""A read-only dict for the mappings of frozen results."""

from __future__ import annotations


class FrozenDict(dict):
    """A dict that cannot be changed after it is made (it still pickles and compares as a dict)."""

    __slots__ = ()

    def _readonly(self, *args, **kw):
        raise TypeError("a result cannot be changed")

    __setitem__ = __delitem__ = clear = pop = popitem = setdefault = update = _readonly  # type: ignore[assignment]
    __ior__ = _readonly  # type: ignore[assignment]

    def __reduce__(self):
        return (FrozenDict, (dict(self),))

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(tuple(self.items()))
