"""max() and min() of cost terms, without sympy's pairwise comparisons.

sympy's Max compares every pair of arguments through its assumption system,
which dominates solve time. Cost terms are positive, so terms that differ only
by a positive numeric factor (2/b and 3/b, or two plain numbers) can be settled
exactly here; what is left is wrapped unevaluated.
"""

from __future__ import annotations

from collections import Counter
from fractions import Fraction

import sympy as sp


def _key(c: sp.Expr) -> Fraction | float:
    if c.is_Rational:
        return Fraction(int(c.p), int(c.q))
    return float(c)


def _pick(args, largest: bool) -> sp.Expr:
    uniq = list(dict.fromkeys(args))
    if len(uniq) == 1:
        return uniq[0]
    groups: dict[sp.Expr, tuple] = {}
    order: list[sp.Expr] = []
    split = [a.as_coeff_Mul() for a in uniq]
    # rest.is_positive asks sympy's assumptions of the whole of rest (0.3 of the flagship's
    # solve, step times in a max); it decides only between two arguments with the same rest:
    # an argument alone with its rest is kept as it is either way
    alone = Counter(rest for coeff, rest in split if coeff.is_Number and coeff > 0)
    for a, (coeff, rest) in zip(uniq, split):
        if coeff.is_Number and coeff > 0 and (rest == 1 or alone[rest] == 1 or rest.is_positive):
            k = _key(coeff)
            prev = groups.get(rest)
            if prev is None:
                order.append(rest)
                groups[rest] = (k, a)
            elif (k > prev[0]) if largest else (k < prev[0]):
                groups[rest] = (k, a)
        else:
            order.append(a)
            groups[a] = (None, a)
    kept = [groups[r][1] for r in order]
    if len(kept) == 1:
        return kept[0]
    return (sp.Max if largest else sp.Min)(*kept, evaluate=False)


def emax(*args: sp.Expr) -> sp.Expr:
    return _pick(args, True)


def emin(*args: sp.Expr) -> sp.Expr:
    return _pick(args, False)
