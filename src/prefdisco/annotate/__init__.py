"""Human studies of PrefDisco, one web app whose studies plug into a shared base.

The base, written once: ``task_app`` (the Starlette app: log-in, session cookie, tokens, progress, overview,
error pages, JSON problems, the middleware; the shared templates ``base``, ``login``, ``overview``, ``error``,
``item_page`` and ``static/submit.js``; ``TaskPages`` says what a study's pages call things), ``auth`` (names,
tokens, the signed cookie), ``middleware``, ``database`` (the SQLite file every study's tables live in:
connections, transactions, metadata and each study's ``study_meta``, the write-once item set, upserts,
``Database.open``), ``sampling`` (``sample_scenarios``: the seeded per-task draw of scenarios), ``serve_options``
(the serve commands' options, start-up lines and ``serve_app``), ``export`` (``--out``'s check, the atomic CSV
writer) and ``bench`` (the benchmark folder as the studies read it).

The three studies, each a ``TaskApp`` subclass with its store, service (prepare, serve, export) and commands:

* attribute relevance (``annotate serve`` / ``export`` / ``stats``): ``app``, ``store``, ``service``, ``labels``,
  ``stats``, ``cli``; annotators mark which candidate attributes matter for a task (Fleiss' κ);
* response rating (``annotate serve-ratings`` / ``export-ratings``): the ``rating_*`` modules; annotators score
  one response on one criterion, blind to the judge (``prefdisco calibrate --human``);
* play the user (``annotate serve-play`` / ``export-play``): the ``play_*`` modules; a participant answers, live,
  the model under test's questions through the one dialogue engine, and the scored dialogues are exported as a
  run folder with ``user_type`` human (``prefdisco report``).
"""
