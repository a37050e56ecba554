"""A dialogue driven by a model: generate the assistant's turn, hand it to the engine, until the dialogue ends.

The one loop of every model-driven dialogue — the condition solvers (``solver.py``), the dry-run planner
(``evaluation/estimate/plan.py``), the play study (``annotate/play_session.py``: it stops where a person must reply and
stores the dialogue after every step) — with no rule of its own: what each call carries (tools, tool choice,
grammar) and what a turn means are the engine's (``engine.py``).
"""

from __future__ import annotations

from collections.abc import Callable

from inspect_ai.model import CachePolicy, Model

from prefdisco.dialogue.engine import Dialogue


async def play(
    dialogue: Dialogue,
    model: Model,
    *,
    cache: CachePolicy | bool = False,
    constrain_ask: bool = False,
    until_pending: bool = False,
    after_step: Callable[[Dialogue], None] | None = None,
) -> Dialogue:
    """Play ``dialogue`` with ``model`` as the assistant (the dialogue's user answers its questions) to its end, or
    with ``until_pending`` until a question waits for a reply no model gives (a person's, ``Dialogue.reply``);
    ``after_step``: called after every step (the play study stores the dialogue there)."""
    if dialogue.user is None and dialogue.rules.needs_user and not until_pending:
        raise ValueError("a dialogue with questions or pushback needs its simulated user to be played by a model")
    while not dialogue.done and not (until_pending and dialogue.state.pending is not None):
        hints = dialogue.hints(constrain_ask)
        output = await model.generate(
            dialogue.messages, tools=hints.tools, tool_choice=hints.tool_choice, config=hints.config, cache=cache
        )
        await dialogue.step(output)
        if after_step is not None:
            after_step(dialogue)
    return dialogue
