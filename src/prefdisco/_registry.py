"""inspect_ai extension entry point: registers the ``prefdisco`` model provider,
the ``prefdisco/prefdisco`` task, the ``prefdisco/checklist`` / ``prefdisco/infogain`` solvers and, where the
``scout`` extra is installed, the ``prefdisco/simulated_turns`` inspect-scout scanner.

Imported by inspect through ``[project.entry-points.inspect_ai]``; keep it import-light.
"""

from importlib.util import find_spec

from inspect_ai.model import modelapi


@modelapi(name="prefdisco")
def prefdisco_provider() -> type:
    from prefdisco.models.llama_cpp import LlamaCppAPI

    return LlamaCppAPI


from prefdisco.dialogue.strategies import checklist, infogain  # noqa: E402,F401  (the strategy solvers)
from prefdisco.evaluation.task import prefdisco  # noqa: E402,F401  (registers the task for `inspect eval`)

if find_spec("inspect_scout") is not None:  # the optional scout extra: `scout scan prefdisco/simulated_turns`
    from prefdisco.results.scanners import simulated_turns  # noqa: F401
