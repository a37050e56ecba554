"""PrefDisco: just-in-time personalization benchmarks for language models, on inspect_ai."""

from __future__ import annotations

from typing import Any

from prefdisco.version import __version__

__all__ = ["__version__", "load_environment"]


def load_environment(**kwargs: Any) -> Any:
    """The verifiers hub's entry point, at the package level as its loaders look for it (``vf-eval prefdisco -a
    '{...}'``; a verifiers environment's workers load it again by this name): ``prefdisco.env.verifiers``'s
    ``load_environment`` (the ``verifiers`` extra), imported only when called."""
    from prefdisco.env.verifiers import load_environment as load

    return load(**kwargs)
