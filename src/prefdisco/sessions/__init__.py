"""Sessions: one person, a chain of problems (the model, the planner, the ``prefdisco sessions`` command)."""
