"""Pass 4, the sites: data centres (of workers or of replicas) and replicas, built once.

A mixin of `Builder` (build.py), which gives it `_get`, `_common`, `_error_once`,
`sink` and `draft`.
"""

from __future__ import annotations

from ctdsl.check.names import MergedBlock
from ctdsl.diagnostics import Label
from ctdsl.language import schema as S
from ctdsl.language.enums import Fabric, JitterKind, Recompute
from ctdsl.model import entities as M
from ctdsl.model import expr as E


class SiteBuilder:
    # ---- data centres ---------------------------------------------------------------

    def _replica(self, b: MergedBlock) -> None:
        g = lambda k: self._get(b, k)  # noqa: E731
        one, eight = E.num(1), E.num(8)
        self.draft.replicas[b.name] = M.Replica(
            **self._common(b),
            tp=g("tp") or one,
            pp=g("pp") or one,
            cp=g("cp") or one,
            ep=g("ep") or one,
            gpus_per_node=g("gpus_per_node") or eight,
            scaleup=g("scaleup"),
            scaleup_link=g("scaleup_link"),
            nics=g("nics"),
            first_stage_layers=g("first_stage_layers"),
            last_stage_layers=g("last_stage_layers"),
            zero=g("zero"),
            recompute=Recompute(g("recompute") or Recompute.SELECTIVE),
            micro_batch=g("micro_batch"),
            sequence_parallel=g("sequence_parallel") if g("sequence_parallel") is not None else True,
            virtual_stages=g("virtual_stages"),
        )

    def _dc(self, b: MergedBlock) -> None:
        replica = self._get(b, "replica")
        if replica is not None:
            return self._replica_dc(b, replica)
        if "sites" in b.fields:
            self.sink.error(
                "CT423",
                f"dc '{b.name}' counts alike sites but holds single-device workers, which are unrolled one by one",
                b.fields["sites"].span,
                help=f"give dc '{b.name}' a replica and replicas (a replica whose tp and pp are 1 is one GPU), or declare each site as a dc",
            )
        workers = self._get(b, "workers")
        if E.symbols(workers) if workers is not None else False:
            self.sink.error(
                "CT309",
                f"dc '{b.name}': workers must be a constant; the topology cannot depend on a param",
                b.fields["workers"].value.span,
            )
        self._centre(b, self._at_defaults(workers, 0))

    def _replica_dc(self, b: MergedBlock, replica: str) -> None:
        """A dc of `replicas` replicas, in `sites` alike sites: the counts may be params (nothing is unrolled)."""
        count = self._get(b, "replicas")
        sites = self._get(b, "sites") if "sites" in b.fields else None
        self._centre(
            b, self._at_defaults(count, 0), replica=replica, replicas=count,
            fabric=Fabric(self._get(b, "fabric") or Fabric.RAIL), oversubscription=self._get(b, "oversubscription"),
            sites=sites, n_sites=self._at_defaults(sites, 1),
        )

    def _at_defaults(self, count: E.Expr | None, absent: int) -> int:
        """A count at the params' defaults: `absent` where it is not given or cannot be evaluated (reported)."""
        if count is None:
            return absent
        try:
            return int(round(E.evaluate(count, self.draft.defaults())))
        except E.EvalError:
            return absent

    def _centre(self, b: MergedBlock, workers: int, **replicas) -> None:
        """The dc's entity: its hardware, jitter and prices, and (`replicas`) the fields of a dc of replicas."""
        jitter, kind, sigma = self._dc_jitter(b)
        self.draft.dcs[b.name] = M.DataCentre(
            **self._common(b),
            workers=workers,
            device=self._get(b, "device") or "",
            link=self._get(b, "link") or "",
            switch=self._get(b, "switch") or "",
            pluggable=self._get(b, "pluggable"),
            jitter=jitter,
            jitter_kind=kind,
            jitter_sigma=sigma,
            **replicas,
            **self._money(b),
        )

    def _money(self, b: MergedBlock) -> dict:
        """A site's power price, PUE and grid carbon intensity (docs/codesign.md)."""
        return {k: self._get(b, k) for k in ("power_price", "pue", "carbon_intensity")}

    def _dc_jitter(self, b: MergedBlock) -> tuple[E.Expr | None, JitterKind | None, E.Expr | None]:
        """Per-worker variability: jitter (the scale), its kind, and a lognormal's sigma."""
        f = b.fields
        if "jitter" not in f:
            if "jitter_kind" in f or "jitter_sigma" in f:
                key = "jitter_kind" if "jitter_kind" in f else "jitter_sigma"
                self._error_once(
                    "CT105",
                    f"dc '{b.name}' sets {key} but no jitter, the scale of the extra time",
                    f[key].key.span,
                    secondary=(Label(b.definition.span, f"dc '{b.name}' defined here"),),
                    help="add jitter = 2 s (each worker's step takes its compute time plus jitter x a random draw)",
                )
            return None, None, None
        written = self._get(b, "jitter_kind") if "jitter_kind" in f else None
        kind = JitterKind(written or S.KINDS["dc"]["jitter_kind"].default)
        sigma = None
        if kind is JitterKind.LOGNORMAL:
            if "jitter_sigma" not in f:
                self._error_once(
                    "CT105",
                    f"dc '{b.name}': lognormal jitter needs jitter_sigma",
                    f["jitter_kind"].value.span,
                    secondary=(Label(b.definition.span, f"dc '{b.name}' defined here"),),
                    help="add jitter_sigma = 0.5 (the sigma of the log of the draw)",
                )
            sigma = self._get(b, "jitter_sigma")
        elif "jitter_sigma" in f:
            shown = f["jitter_kind"].value.span if "jitter_kind" in f else f["jitter"].key.span
            self._error_once(
                "CT113",
                f"dc '{b.name}': jitter_sigma does not apply to {kind} jitter",
                f["jitter_sigma"].key.span,
                label="only for jitter_kind = lognormal",
                secondary=(Label(shown, f"jitter is {kind}"),),
                help="remove jitter_sigma, or set jitter_kind = lognormal",
            )
        return self._get(b, "jitter"), kind, sigma

