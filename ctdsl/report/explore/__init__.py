"""`ctdsl explore`: one offline HTML page that recomputes the solution as the reader moves the params.

The page's numbers come from JavaScript that ctdsl prints from the result
tree's exact sympy expressions (`jsprint`), with their common subexpressions
shared; the page's script only evaluates those functions, scans them for
break-evens, formats and draws (`explorer.js`, `explorer.css`, inlined). The
equations are presentation MathML (`mathml`). Spec text is HTML-encoded
(`ctdsl.report.encode`), and the JSON the script reads is embedded with `<`,
`>` and `&` escaped, so that nothing in a spec closes the script. The page
makes no network request: it carries everything, and its Content-Security-Policy
forbids loading anything (`default-src 'none'`).

    from ctdsl.report.explore import explorer_html
    html = explorer_html(ctdsl.load("specs/llama70b_wan.ct").solve())
"""

from ctdsl.report.explore.page import explorer_html

__all__ = ["explorer_html"]
