"""ctdsl: a hardware co-design modelling language for gradient sync across slow links.

    import ctdsl
    study = ctdsl.load("specs/llama70b_wan.ct")
    print(study.solve())
"""

from __future__ import annotations

from ctdsl.version import __version__


def load(path, overrides=None, scenario=None):
    """Parse and check a spec (in one of its scenarios, when named); see `ctdsl.api.load`."""
    from ctdsl.api import load as _load

    return _load(path, overrides, scenario)


def __getattr__(name):
    if name in ("SpecError", "Study", "check"):
        from ctdsl import api

        return getattr(api, name)
    raise AttributeError(name)


__all__ = ["load", "SpecError", "Study", "check", "__version__"]
