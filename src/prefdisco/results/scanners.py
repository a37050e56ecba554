"""The simulated-user hygiene checks as an inspect-scout scanner: scan any PrefDisco log, an old one too, for broken
simulated turns, without rerunning anything.

    pip install "prefdisco[scout]"
    scout scan prefdisco/simulated_turns -T RUN/logs

``simulated_turns`` reads a transcript's model events of the ``user`` role: each call of the simulated user that
answered a question (a system prompt, the persona, then the dialogue; the pushback challenges — one prompt, no
system message — are left out, as a run leaves them out), its raw output (reasoning blocks included) and its stop
reason. Each reply is checked against the sample's scenario exactly as a run checks it (``dialogue/hygiene.py``),
and every fault found is one result: ``label`` the fault, ``value`` True, ``explanation`` the reply as the assistant
received it, ``metadata`` the scenario and the question. A transcript whose replies are all clean gets one result
``label`` ``clean``, ``value`` False (so a scan says what it read); one with no simulated reply (baseline, oracle)
none. A flagged draw that ``--user-retry`` replaced is in the log too, so it is reported as well. ``faults`` keeps
only some of ``hygiene.FAULTS``.

Needs the optional ``scout`` extra (``inspect-scout``); registered with inspect through ``prefdisco._registry``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from inspect_ai.event import ModelEvent
from inspect_scout import Result, Scanner, Transcript, scanner

from prefdisco.dialogue.hygiene import FAULTS, Screen
from prefdisco.dialogue.scenario import SCENARIO_KEY
from prefdisco.dialogue.user_reply import UserReply, clean_reply
from prefdisco.dialogue.visible import visible_text
from prefdisco.errors import UserError
from prefdisco.schema import Scenario

USER_ROLE = "user"


def transcript_scenario(metadata: Mapping[str, Any]) -> Scenario | None:
    """The scenario a transcript's sample carried (``dialogue/scenario.py``), under the sample's metadata as scout
    gives it (flat from a live eval, nested under ``sample_metadata`` from a log read back); None for a sample of
    another task."""
    for where in (metadata, metadata.get("sample_metadata") or {}):
        if isinstance(where, Mapping) and isinstance(where.get(SCENARIO_KEY), Mapping):
            return Scenario.model_validate(where[SCENARIO_KEY])
    return None


def _replies(transcript: Transcript) -> list[ModelEvent]:
    """The simulated user's reply calls, in order: ``user``-role model events whose input opens with the persona."""
    return [
        e
        for e in transcript.events
        if isinstance(e, ModelEvent) and e.role == USER_ROLE and e.input and e.input[0].role == "system"
    ]


@scanner(events=["model"])
def simulated_turns(faults: list[str] | None = None) -> Scanner[Transcript]:
    """Every simulated-user reply with a hygiene fault (module docstring); ``faults``: only these (default all)."""
    wanted = tuple(FAULTS if faults is None else faults)
    unknown = [f for f in wanted if f not in FAULTS]
    if unknown:
        raise UserError(f"simulated_turns faults: unknown {', '.join(unknown)}; expected some of {', '.join(FAULTS)}")

    async def scan(transcript: Transcript) -> list[Result]:
        scenario = transcript_scenario(transcript.metadata)
        if scenario is None:
            return []
        screen = Screen(scenario)
        found = []
        replies = _replies(transcript)
        for event in replies:
            reply = UserReply(clean_reply(visible_text(event.output)), event.output)
            question = event.input[-1].text
            for fault in screen.check(reply).reasons:
                if fault in wanted:
                    found.append(
                        Result(
                            label=fault,
                            value=True,
                            explanation=reply.text,
                            metadata={"scenario_id": scenario.id, "question": question},
                        )
                    )
        if replies and not found:
            clean = f"{len(replies)} simulated replies, none flagged"
            return [Result(label="clean", value=False, explanation=clean, metadata={"scenario_id": scenario.id})]
        return found

    return scan
