"""Registers the ``openai-lean`` model provider with inspect (import-light: the provider loads on first use).

Imported from ``prefdisco._registry`` (inspect's entry point for this package) so that ``openai-lean/<service>/
<model>`` resolves in ``prefdisco eval`` and in inspect's own CLI.
"""

from inspect_ai.model import modelapi


@modelapi(name="openai-lean")
def openai_lean_provider() -> type:
    from prefdisco.models.openai_lean import OpenAILeanAPI

    return OpenAILeanAPI
