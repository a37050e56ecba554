"""inspect_ai extension entry point: registers the ``prefdisco`` model provider,
the ``prefdisco/prefdisco`` task and the ``prefdisco/checklist`` / ``prefdisco/infogain`` solvers.

Imported by inspect through ``[project.entry-points.inspect_ai]``; keep it import-light.
"""

from inspect_ai.model import modelapi


@modelapi(name="prefdisco")
def prefdisco_provider() -> type:
    from prefdisco.models.llama_cpp import LlamaCppAPI

    return LlamaCppAPI


from prefdisco.dialogue.strategies import checklist, infogain  # noqa: E402,F401  (the strategy solvers)
from prefdisco.evaluation.task import prefdisco  # noqa: E402,F401  (registers the task for `inspect eval`)
