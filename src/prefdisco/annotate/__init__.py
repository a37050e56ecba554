"""Human validation of a benchmark's relevant attributes: a small web app, its SQLite store, agreement stats.

``bench`` reads the benchmark folder (through ``prefdisco.benchio``) and checks its relevant attributes,
``sampling`` fixes the items, ``store`` keeps items and labels, ``auth`` handles names/tokens/cookies, ``app``
serves the pages and the JSON API, ``labels`` is the exported CSV, ``stats`` computes agreement (and is the
``annotate stats`` entry point), ``service`` ties the rest to ``annotate serve`` and ``export`` (``cli``).

The second task kind, response rating (``annotate serve-ratings`` / ``export-ratings``), lives in the ``rating_*``
modules: items sampled from a run (``rating_items``, ``rating_run``), their store, app, service and commands.

What the two kinds share is written once: ``database`` (the SQLite file: connections, transactions, metadata, the
write-once item set, upserts), ``task_app`` (log-in, cookie, progress, overview, error pages, JSON problems, the
middleware; the shared templates and ``static/submit.js``) and ``serve_options`` (the serve commands' options and
start-up lines).
"""
