"""One walk over checked expressions; evaluators and printers are tables of handlers.

Every consumer of the checked form (float and exact evaluation, the symbols an
expression uses, its expanded size, text, LaTeX, sympy, and later JavaScript)
needs the same walk: children before parents, each shared node once. The walk
lives here, once; a consumer says only what to do at each kind of node, as
brian2's renderers do with `render_<Node>`. A `Visitor` is built from a table
with one handler per kind:

    Num Sym Add Sub Mul Div Neg Pow      node classes
    min max ceil log2                    calls, by function

A handler is called as `handler(ctx, node, *kids)`: `ctx` is whatever the
caller passes along (an environment of values, a naming function, a table of
sympy symbols), `node` the node itself, and `kids` the results already computed
for its children, in order (`a, b` of a binary node, `base` of a power, the
arguments of a call). Handlers are plain functions, so a new printer is a new
table, or an old one with a few entries replaced (`TEXT.replace(Pow=...)`).

Why iterative: a long sum is a deep left-leaning chain, and references expand
into deeper ones; a recursive walk would hit Python's recursion limit long
before the checker's size bounds. The walk keeps its own stack.

Why memoise by identity: a field used twice is one shared node, and a chain of
such references is a DAG whose tree is exponentially larger. The memo maps
`id(node) -> (node, result)`; holding the node keeps its id from being given to
another object while the memo lives, so a caller may share one memo across
calls (the sympy conversion does).
"""

from __future__ import annotations

from typing import Any, Callable, Container, Generic, Iterator, Mapping, TypeVar

from ctdsl.model.nodes import FUNCTIONS, Add, Call, Div, Expr, Mul, Neg, Num, Pow, Sub, Sym

R = TypeVar("R")
Handler = Callable[..., Any]
Memo = dict[int, tuple[Expr, Any]]

NODE_KINDS = {"Num": Num, "Sym": Sym, "Add": Add, "Sub": Sub, "Mul": Mul, "Div": Div, "Neg": Neg, "Pow": Pow}
KINDS: tuple[str, ...] = (*NODE_KINDS, *FUNCTIONS)
_UNKNOWN: Any = object()  # what a node of no known kind dispatches to


class Visitor(Generic[R]):
    """A post-order fold over a checked expression with one handler per kind."""

    __slots__ = ("handlers", "_by_type", "_by_fn")

    def __init__(self, handlers: Mapping[str, Handler]):
        missing = [k for k in KINDS if k not in handlers]
        extra = [k for k in handlers if k not in KINDS]
        if missing or extra:
            raise TypeError(f"a visitor needs one handler per kind: missing {missing}, unknown {extra}")
        self.handlers = dict(handlers)
        self._by_type: dict[type, Handler | None] = {cls: self.handlers[k] for k, cls in NODE_KINDS.items()}
        self._by_type[Call] = None  # by function: _by_fn
        self._by_fn: dict[str, Handler] = {fn: self.handlers[fn] for fn in FUNCTIONS}

    @classmethod
    def every(cls, handler: Handler, **specific: Handler) -> "Visitor":
        """`handler` for every kind except those named in `specific`."""
        return cls({k: specific.get(k, handler) for k in KINDS})

    def replace(self, **specific: Handler) -> "Visitor":
        """This visitor with some handlers replaced."""
        return Visitor({**self.handlers, **specific})

    def __call__(self, expr: Expr, ctx: Any = None, memo: Memo | None = None) -> R:
        """The fold of `expr`; `memo` (id -> (node, result)) is read and filled.

        This is the walk of `post_order` written out, because every evaluation
        and conversion runs through it: no generator and no seen set (the memo
        is one: a node cannot be met again before it is done, as that would be
        a cycle), leaves done as soon as they are met, and the results of one
        or two children passed without building a list.
        """
        memo = {} if memo is None else memo
        by_type, by_fn = self._by_type, self._by_fn
        # a node not yet expanded is on the stack as itself; one whose children
        # are above it, as (node, handler, children)
        stack: list[Any] = [expr]
        push, pop = stack.append, stack.pop
        while stack:
            item = pop()
            if type(item) is tuple:
                e, handler, kids = item
                n = len(kids)
                if n == 2:
                    r = handler(ctx, e, memo[id(kids[0])][1], memo[id(kids[1])][1])
                elif n == 1:
                    r = handler(ctx, e, memo[id(kids[0])][1])
                else:
                    r = handler(ctx, e, *[memo[id(c)][1] for c in kids])
                memo[id(e)] = (e, r)
                continue
            key = id(item)
            if key in memo:
                continue
            handler = by_type.get(type(item), _UNKNOWN)
            if handler is None:
                handler = by_fn.get(item.fn, _UNKNOWN)
            if handler is _UNKNOWN:
                raise TypeError(f"cannot visit {item!r}")
            kids = item.children()
            if not kids:
                memo[key] = (item, handler(ctx, item))
                continue
            push((item, handler, kids))
            for c in reversed(kids):
                push(c)
        return memo[id(expr)][1]


def post_order(expr: Expr, done: Container[int] = ()) -> Iterator[tuple[Expr, tuple[Expr, ...]]]:
    """Each node of `expr` once, with its children, after them; nodes whose id is in `done` are skipped.

    The walk keeps its own stack. A node is expanded the first time it is met
    (its children go above it, in reverse, so that they come out left to right)
    and comes out when met again; in a DAG every child then has come out before
    its parent, whichever parent met it first.
    """
    seen: set[int] = set()
    stack: list[tuple[Expr, tuple[Expr, ...] | None]] = [(expr, None)]
    push, pop = stack.append, stack.pop
    while stack:
        e, kids = pop()
        if kids is None:
            key = id(e)
            if key in seen or key in done:
                continue
            seen.add(key)
            kids = e.children()
            if kids:
                push((e, kids))
                for c in reversed(kids):
                    push((c, None))
                continue
        yield e, kids
