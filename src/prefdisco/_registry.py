"""inspect_ai extension entry point: registers the ``prefdisco`` model provider,
the ``prefdisco/prefdisco`` task, the ``prefdisco/checklist`` / ``prefdisco/infogain`` solvers and, where the
``scout`` extra runs, the ``prefdisco/simulated_turns`` inspect-scout scanner.

Imported by inspect through ``[project.entry-points.inspect_ai]``; keep it import-light.
"""

import sys

from inspect_ai.model import modelapi


@modelapi(name="prefdisco")
def prefdisco_provider() -> type:
    from prefdisco.models.llama_cpp import LlamaCppAPI

    return LlamaCppAPI


from prefdisco.dialogue.strategies import checklist, infogain  # noqa: E402,F401  (the strategy solvers)
from prefdisco.evaluation.running.task import prefdisco  # noqa: E402,F401  (registers the task for `inspect eval`)

# The optional scout extra: `scout scan prefdisco/simulated_turns`. Registered only in a process that runs scout
# (inspect_scout imported before inspect reads its entry points, as the `scout` command does): importing scout
# costs every `prefdisco eval` process 0.7 s otherwise. Code that scans in a process of its own imports
# prefdisco.results.scanners itself.
if "inspect_scout" in sys.modules:
    from prefdisco.results.scanners import simulated_turns  # noqa: F401
