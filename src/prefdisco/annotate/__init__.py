"""Human studies of PrefDisco: one web app whose studies plug into a shared base.

The plug-in and the one server: ``study`` (``Study``: a study's name, pages, serve options, store, and its
prepare / handlers / export; ``ServeOptions``; the registry ``STUDIES``), ``task_app`` (``StudyServer``: log-in,
session cookie, tokens, the overview of every hosted study, error pages, the middleware, each study's routes under
its own path; ``TaskApp``: a study's item pages, progress and JSON API; the shared templates ``base``, ``login``,
``overview``, ``error``, ``item_page`` and ``static/submit.js``; ``TaskPages`` says what a study's pages call
things), ``serve_options`` (``serve_studies``: ``annotate serve --study ...`` hosts any set of studies from one
database; ``serve_app``), ``cli`` (``annotate serve`` and its one-study aliases ``serve-ratings`` / ``serve-play``,
``export --study`` and its aliases ``export-ratings`` / ``export-play``, ``stats``).

The shared base: ``auth`` (names, tokens, the signed cookie), ``middleware``, ``database`` (the SQLite file every
study's tables live in: connections, transactions, metadata and each study's ``study_meta``, the write-once item
set, upserts, ``Database.open``), ``sampling`` (``sample_scenarios``: the seeded per-task draw of scenarios),
``export`` (``--out``'s check, the atomic CSV writer) and ``bench`` (the benchmark folder as the studies read it).

The three studies, each a ``Study`` plug-in (in its service module) with its store, pages and export:

* attribute relevance (``--study relevance``, the default; ``service.RelevanceStudy``): ``app``, ``store``,
  ``service``, ``labels``, ``stats``; annotators mark which candidate attributes matter for a task (Fleiss' κ);
* response rating (``--study rating``; ``rating_service.RatingStudy``): the ``rating_*`` modules; annotators
  score one response on one criterion, blind to the judge (``prefdisco calibrate --human``);
* play the user (``--study play``; ``play_service.PlayUserStudy``): the ``play_*`` modules; a participant answers,
  live, the model under test's questions through the one dialogue engine, and the scored dialogues are exported as
  a run folder with ``user_type`` human (``prefdisco report``).
"""
