"""A preset's fixed settings against the flags a user gave (``--preset default|paper``; ``dialogue/presets.py``).

``preset_settings`` makes ``RunConfig``'s keyword arguments of a preset and the given flags, refusing a flag that
contradicts a setting the preset fixes; ``RunConfig.validate`` applies the same rule (``contradiction``) to a
configuration built any other way. ``check_ask`` refuses an ask channel a preset cannot follow.
"""

from __future__ import annotations

from typing import Any

from prefdisco.dialogue.presets import PRESET_NAMES, preset_named
from prefdisco.dialogue.tool_protocol import ASK_CHANNELS
from prefdisco.errors import UserError
from prefdisco.scoring.deferred import JUDGE_LATER

_PRESET_FLAGS = (
    "user_type",
    "temperature",
    "user_temperature",
    "judge",
    "logprobs",
    "grader_temperature",
    "max_questions",
)
_FLAG_NAMES = {"grader_temperature": "--judge-temperature"}


def preset_settings(preset: str, given: dict[str, Any]) -> dict[str, Any]:
    """``RunConfig`` keyword arguments for ``preset``: the settings it fixes, then those the user gave (``given``;
    None = not given, so ``RunConfig``'s default applies). A given setting that contradicts a fixed one is refused:
    a run that records a preset ran it (``default`` fixes nothing, so every flag is free)."""
    if preset not in PRESET_NAMES:
        raise UserError(f"--preset: unknown {preset!r}; expected one of {', '.join(PRESET_NAMES)}")
    fixed = preset_named(preset).settings
    chosen = {name: value for name, value in given.items() if value is not None}
    for name, value in chosen.items():
        if name in fixed and value != fixed[name] and not defers(name, value):
            raise UserError(contradiction(preset, name, value, fixed[name]))
    return {**fixed, **chosen, "preset": preset}


def defers(name: str, value: Any) -> bool:
    """``--judge later`` under a preset that fixes the judge: not a contradiction, the judging is deferred
    (``prefdisco judge`` then judges with the run's recorded grader settings)."""
    return name == "judge" and value == JUDGE_LATER


def contradiction(preset: str, name: str, value: Any, fixed: Any) -> str:
    flag = _FLAG_NAMES.get(name, "--" + name.replace("_", "-")) if name in _PRESET_FLAGS else name  # others: no flag
    return (
        f"{flag} {value} contradicts --preset {preset}, which fixes it to {fixed}; "
        "drop the flag, or use --preset default to choose it yourself"
    )


def check_ask(ask: str, preset: str, constrain_ask: bool, solver: str | None) -> None:
    """Refuse an ask channel this run cannot follow: an unknown one, the ``ask_user`` tool (or a ``--solver``,
    which asks through its tool) under a preset with its own text prompts, or the text grammar with the tool."""
    if ask not in ASK_CHANNELS:
        raise UserError(f"--ask: unknown {ask!r}; expected one of {', '.join(ASK_CHANNELS)}")
    uses_tools = "--ask tools" if ask == "tools" else f"--solver {solver}" if solver else None
    if uses_tools and preset != "default":
        raise UserError(
            f"{uses_tools} asks through the ask_user tool, whose prompts are --preset default's; "
            f"--preset {preset} asks in its own text prompts"
        )
    if ask == "tools" and constrain_ask:
        raise UserError("--constrain-ask sends the text ask channel's grammar; drop it with --ask tools")
