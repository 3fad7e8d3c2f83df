"""`ctdsl explore`: one offline HTML page that recomputes the solution as the reader moves the params.

The page's numbers come from JavaScript that ctdsl prints from the result
tree's exact sympy expressions (`jsprint`), with their common subexpressions
shared; a value the reader gives is tested against the checker's bounds, whose
expressions ctdsl prints too (`checks`), and refused with the checker's
diagnostic. The page is a list of views (`page.View`), each a section and a
file of script (`view_*.js`) run after `core.js` (the data, the state, numbers
and units, the bounds, the answers of a redraw) in one scope. The equations and
display names are presentation MathML (`mathml`); the series' colours stay
distinct for any number (`palette`); a recorded simulation is embedded
compactly (`simview`). Spec text is HTML-encoded (`ctdsl.report.encode`), and
the JSON the script reads is embedded with `<`, `>` and `&` escaped, so that
nothing in a spec closes the script. The page makes no network request: it
carries everything, and its Content-Security-Policy forbids loading anything
(`default-src 'none'`).

    from ctdsl.report.explore import explorer_html
    html = explorer_html(ctdsl.load("specs/llama70b_wan.ct").solve())
"""

from ctdsl.report.explore.page import explorer_html

__all__ = ["explorer_html"]
