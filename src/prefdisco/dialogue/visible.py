"""The visible text of a model's turn: what it *said*, without what it *thought*.

Reasoning models return their thinking beside their answer, in one of two forms:

* as reasoning content blocks (inspect's ``ContentReasoning``; Anthropic extended thinking, OpenAI reasoning
  items), which providers expect back, unchanged, in a multi-turn history — so the speaker's own history keeps
  the whole message (``output.message``);
* inline, as ``<think>…</think>`` (or ``<thinking>…</thinking>``) in the text. Also handled: a turn cut off
  while thinking (an opening tag never closed: everything from it is reasoning) and a turn whose opening tag
  was part of the prompt's chat template (a closing tag with no opening one: everything before it is
  reasoning).

Everything that *reads* a turn — the protocol parser, the simulated user, the audit, the judged response —
reads ``visible_text`` of it, and nothing else.
"""

from __future__ import annotations

import re

from inspect_ai.model import ChatMessage, ModelOutput

_TAG = r"think(?:ing)?"
_BLOCK = re.compile(rf"<(?P<tag>{_TAG})\b[^>]*>.*?</(?P=tag)\s*>", re.IGNORECASE | re.DOTALL)
_OPEN = re.compile(rf"<{_TAG}\b[^>]*>", re.IGNORECASE)
_CLOSE = re.compile(rf"</{_TAG}\s*>", re.IGNORECASE)


def strip_reasoning(text: str) -> str:
    """``text`` without inline reasoning (closed, unclosed or leading ``<think>`` sections), stripped."""
    text = _BLOCK.sub("", text)
    closes = list(_CLOSE.finditer(text))
    if closes:  # a closing tag left over has no opening one: what precedes it was reasoning
        text = text[closes[-1].end() :]
    opened = _OPEN.search(text)
    if opened:  # an opening tag left over was never closed: the rest is reasoning
        text = text[: opened.start()]
    return text.strip()


def visible_text(turn: ChatMessage | ModelOutput | str) -> str:
    """The text a reader of ``turn`` may see: its text content blocks (never reasoning blocks, images or tool
    calls), inline reasoning removed."""
    if isinstance(turn, ModelOutput):
        text = turn.message.text if turn.choices else turn.completion
    elif isinstance(turn, str):
        text = turn
    else:
        text = turn.text  # inspect's .text joins the text blocks only; reasoning blocks are left out
    return strip_reasoning(text)
