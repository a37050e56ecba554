"""``prefdisco publish``: a built benchmark as a dataset repository researchers load (Parquet, card, Croissant,
citation, eval.yaml), and reading such a folder back (``docs/publish.md``)."""
