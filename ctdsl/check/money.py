"""Which prices and carbon fields go together (docs/codesign.md, "Cost and carbon").

A device is paid for one way: rented by the hour (`price`), or bought
(`capex`) and spread over its `depreciation`; both at once is CT116. What is
spread over a period needs one: a device's capex or embodied carbon its own
`depreciation`, a module's or switch's price its own or, failing that, the
depreciation of the device of each dc that uses it (CT105 otherwise). The
checks run on the declared sites and on every variant of them, since a variant
may put another device, module or switch in a dc.
"""

from __future__ import annotations

from ctdsl.check.draft import Draft
from ctdsl.diagnostics import DiagnosticSink, Label
from ctdsl.model import entities as M


def check_money(draft: Draft, sink: DiagnosticSink) -> None:
    for dev in draft.devices.values():
        _device(dev, sink)
    reported: set[str] = set()
    dcs = [*draft.dcs.values(), *(d for v in draft.variants.values() for d in v.dcs.values())]
    for dc in dcs:
        dev = draft.devices.get(dc.device)
        if dev is None:  # written wrong: reported already
            continue
        spread = dev.depreciation is not None
        for kind, name, table in (("pluggable", dc.pluggable, draft.pluggables), ("switch", dc.switch, draft.switches)):
            part = table.get(name) if name else None
            if part is None or part.price is None or part.depreciation is not None or spread or name in reported:
                continue
            reported.add(name)
            sink.error(
                "CT105",
                f"{kind} '{name}' has a price but no depreciation to spread it over",
                part.spans["price"],
                secondary=(Label(dc.span, f"used by dc '{dc.name}', whose device '{dc.device}' gives none either"),),
                help=f"add depreciation = 3 yr to {kind} '{name}' (or to device '{dc.device}')",
            )


def _device(dev: M.Device, sink: DiagnosticSink) -> None:
    if dev.price is not None and dev.capex is not None:
        sink.error(
            "CT116",
            f"device '{dev.name}' has both a price per hour and a capex",
            dev.spans["capex"],
            secondary=(Label(dev.spans["price"], "price per hour given here"),),
            help="a device is rented (price = 2.5 USD/h) or bought (capex = 30000 USD, depreciation = 4 yr), not both",
        )
    for key in ("capex", "embodied_carbon"):
        if getattr(dev, key) is not None and dev.depreciation is None:
            sink.error(
                "CT105",
                f"device '{dev.name}' has {key} but no depreciation to spread it over",
                dev.spans[key],
                help="add depreciation = 4 yr (the period over which one device's purchase and making are counted)",
            )
