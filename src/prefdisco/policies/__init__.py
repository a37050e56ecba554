"""Elicitation policies: priors over which preference attributes a person has, fitted on training problems.

A policy is fitted from a benchmark's profiles (``fit.py``), on a split by problem (``split.py``), and stored
as one versioned JSON file (``model.py``). The choice math (``choice.py``) turns it into what a solver asks
next: the K most likely attributes (a checklist) or the question with the greatest expected information gain
(PEP's policy), and the profile it then believes in. ``guard.py`` refuses to evaluate a policy on the problems
it was fitted on.
"""
