"""PrefDisco: just-in-time personalization benchmarks for language models, on inspect_ai."""

__version__ = "0.1.0"
