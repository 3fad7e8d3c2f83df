"""What `solve` returns: a frozen tree of results with every number computed.

Each quantity holds its exact expression (sympy, in base units), its value at
the params' defaults and its dimension. The solver (ctdsl.symbolic) builds the
tree; tables, JSON, LaTeX, plots and documents (ctdsl.report) only read it, and
never import the solver. Notebook display (`_repr_html_`, `_repr_latex_`, `str`,
`to_json`) is looked up in `display`, where the report layer registers its
renderers.
"""
