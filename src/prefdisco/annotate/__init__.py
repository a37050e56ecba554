"""Human studies of PrefDisco: one web app whose studies plug into a shared base.

The plug-in (``study.Study``, the registry ``STUDIES``), the one server (``task_app.StudyServer``,
``serve_options.serve_studies``) and the shared base (``auth``, ``middleware``, ``database``, ``sampling``,
``export``, ``bench``) are mapped in docs/architecture.md; the three studies — attribute relevance
(``service.RelevanceStudy``), response rating (``rating_service.RatingStudy``: the ``rating_*`` modules) and play
the user (``play_service.PlayUserStudy``: the ``play_*`` modules) — and their commands are described in
docs/evaluation.md, "Human studies: one app".
"""
