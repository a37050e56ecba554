"""A dialogue driven by a model: generate the assistant's turn, hand it to the engine, until the dialogue ends.

The one loop of every model-driven dialogue — the condition solvers (``solver.py``), the dry-run planner
(``evaluation/estimate.py``) — with no rule of its own: what each call carries (tools, tool choice, grammar) and
what a turn means are the engine's (``engine.py``).
"""

from __future__ import annotations

from inspect_ai.model import CachePolicy, Model

from prefdisco.dialogue.engine import Dialogue


async def play(
    dialogue: Dialogue, model: Model, *, cache: CachePolicy | bool = False, constrain_protocol: bool = False
) -> Dialogue:
    """Play ``dialogue`` to its end with ``model`` as the assistant (the dialogue's user answers its questions)."""
    if dialogue.user is None and dialogue.rules.needs_user:
        raise ValueError("a dialogue with questions or pushback needs its simulated user to be played by a model")
    while not dialogue.done:
        hints = dialogue.hints(constrain_protocol)
        output = await model.generate(
            dialogue.messages, tools=hints.tools, tool_choice=hints.tool_choice, config=hints.config, cache=cache
        )
        await dialogue.step(output)
    return dialogue
