"""Figures of a solved spec, with matplotlib, deterministic to the byte.

`sweep_figure(solution, curves)` (`figure.py`) draws one figure of three panels:

1. time to target against the spec's first ranged data-rate param (the WAN
   bandwidth in the flagship), log-log, one curve per scheme (a colour, a line
   style and a marker each, so that it reads in grey); break-evens marked and
   labelled with their values; numbered marks where the component that binds a
   scheme's step changes along its curve, explained in a list under the plot
   (`curves.py`, labels placed by `placement.py`; `sweep_notes` gives that list
   as text, for a document that shows the figure without it);
2. each scheme's step time at the defaults, as stacked bars of its components
   (compute, transform, sync inside a dc, sync across dcs), the binding one
   outlined (`steps.py`);
3. the pluggable module's stage times for the dense stream, the bottleneck
   highlighted (`steps.py`).

The curves, break-evens and regime changes come computed, as data
(`ctdsl.numeric.crossings.sweep_curves`): nothing here evaluates a form.
`topology_figure(spec, graph)` (`topology.py`) draws the graph by data centre.

Determinism: the Agg renderer, DejaVu Sans (bundled with matplotlib), a fixed
`svg.hashsalt`, and no dates, software names or versions in the files' metadata
(`canvas.save`). The same spec gives the same bytes.
"""

from ctdsl.report.plots.canvas import png_bytes, save
from ctdsl.report.plots.figure import sweep_figure, sweep_notes
from ctdsl.report.plots.topology import topology_figure

__all__ = ["png_bytes", "save", "sweep_figure", "sweep_notes", "topology_figure"]
