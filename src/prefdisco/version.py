"""The package's version (pyproject.toml's), in a module of its own: a module that records which version wrote a
file imports it from here, never from the package root (whose ``load_environment`` reaches into ``env/``)."""

from __future__ import annotations

__version__ = "0.1.0"
