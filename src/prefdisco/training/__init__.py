"""Training data from evaluation runs: a run's dialogues and scores as SFT, DPO or verl RL datasets.

``runs.py`` joins a run's results rows with their transcripts (one trial each); ``export.py`` selects and
writes them in one of the three formats, with a sidecar recording what was kept and why.
"""
