"""Human validation of a benchmark's relevant attributes: a small web app, its SQLite store, agreement stats.

``bench`` reads the benchmark folder, ``sampling`` fixes the items, ``store`` keeps items and labels,
``auth`` handles names/tokens/cookies, ``app`` serves the pages and the JSON API, ``labels`` is the exported
CSV, ``stats`` computes agreement, ``service`` ties them to the ``prefdisco annotate`` commands (``cli``).
"""
