"""The paper's persona object ↔ :class:`Persona`.

Import: Big Five scores 1-5 become levels (1-2 low, 3 medium, 4-5 high); ``minimal_necessary_description`` is
the summary, ``educational_profile.knowledge_level`` the education, ``domain_expertise`` items the expertise
(level ``"expert"``); a persona without ``id`` gets the builder's hash id. The object itself is kept as written
in ``persona.extra["release"]``.

Export (:func:`persona_to_release`): the stored object, with every field our model maps overwritten only where
the Persona no longer says what the object says, so an unchanged persona is written back exactly (a missing id
stays missing, ``"34"`` stays a string). A persona of our own builder gets the paper's full shape, with
"unspecified" for unknown educational-profile leaves and the trait level as trait description.
"""

from __future__ import annotations

import copy
from typing import Any

from pydantic import ValidationError

from prefdisco.errors import UserError
from prefdisco.release.format import int_like
from prefdisco.release.record_error import RecordModelError
from prefdisco.schema import BIG_FIVE, Persona, TraitScore, persona_id, trait_level

RELEASE_KEY = "release"
"""``persona.extra`` key of the paper's persona object as written."""
UNSPECIFIED = "unspecified"
EDUCATIONAL_PROFILE_SHAPE: dict[str, tuple[str, ...]] = {
    "cognitive_features": ("learning_style", "attention_span", "memory_strengths", "problem_solving", "collaboration"),
    "affective_features": ("confidence", "anxiety_triggers", "motivation", "challenge_attitude"),
    "metacognitive_features": ("self_awareness", "self_regulation", "reflection", "self_assessment"),
}


def _big_five(big5: Any, where: str) -> dict[str, TraitScore]:
    if not isinstance(big5, dict):
        raise UserError(f"{where}: persona.personality_big5 must be an object with the five traits")
    out: dict[str, TraitScore] = {}
    for trait in BIG_FIVE:
        entry = big5.get(trait)
        score = entry.get("score") if isinstance(entry, dict) else None
        if isinstance(score, bool) or not isinstance(score, int | float) or not 1 <= score <= 5:
            raise UserError(f"{where}: persona.personality_big5.{trait}.score must be a number 1-5, got {score!r}")
        out[trait] = TraitScore(level=trait_level(score), score=float(score))
    return out


def persona_from_release(obj: Any, where: str) -> Persona:
    """Build a Persona from the paper's persona object, keeping the object in ``extra["release"]``."""
    if not isinstance(obj, dict):
        raise UserError(f"{where}: persona must be an object")
    name = obj.get("name")
    if not isinstance(name, str) or not name.strip():
        raise UserError(f"{where}: persona.name must be a non-empty string")
    demo = obj.get("demographics")
    if not isinstance(demo, dict):
        raise UserError(f"{where}: persona.demographics must be an object")
    age = int_like(demo.get("age"))
    if age is None:
        raise UserError(f"{where}: persona.demographics.age must be an integer, got {demo.get('age')!r}")
    big_five = _big_five(obj.get("personality_big5"), where)
    description = obj.get("minimal_necessary_description")
    description = description.strip() if isinstance(description, str) else ""
    edu = obj.get("educational_profile")
    knowledge = edu.get("knowledge_level") if isinstance(edu, dict) else None
    expertise_list = obj.get("domain_expertise")
    expertise = (
        {str(d): "expert" for d in expertise_list if isinstance(d, str) and d.strip()}
        if isinstance(expertise_list, list)
        else {}
    )
    pid = obj.get("id")
    try:
        return Persona(
            id=pid if isinstance(pid, str) and pid.strip() else persona_id(name, description),
            name=name,
            age=age,
            occupation=str(demo.get("occupation") or "").strip() or UNSPECIFIED,
            location=str(demo.get("location") or ""),
            education=knowledge if isinstance(knowledge, str) else "",
            summary=description or name,
            big_five=big_five,
            expertise=expertise,
            backstory=str(obj.get("backstory") or ""),
            extra={RELEASE_KEY: obj},
        )
    except ValidationError as e:
        raise RecordModelError(where, "persona", e) from e


def _expertise_list(persona: Persona) -> list[str]:
    return [d if lvl in ("", "expert") else f"{d} ({lvl})" for d, lvl in persona.expertise.items()]


def _score(ts: TraitScore) -> int | float:
    return int(ts.score) if float(ts.score).is_integer() else ts.score


def _overlay(raw: dict[str, Any], persona: Persona) -> dict[str, Any]:
    """``raw`` with each mapped field the Persona changed written from the Persona."""
    try:
        was = persona_from_release(raw, "")
    except UserError:
        return _built(persona)
    obj = copy.deepcopy(raw)
    demo = obj["demographics"]
    simple = {"name": "name", "summary": "minimal_necessary_description", "backstory": "backstory", "id": "id"}
    for field, key in simple.items():
        if getattr(was, field) != getattr(persona, field):
            obj[key] = getattr(persona, field)
    for field in ("age", "occupation", "location"):
        if getattr(was, field) != getattr(persona, field):
            demo[field] = getattr(persona, field)
    if was.education != persona.education:
        edu = obj.get("educational_profile")
        obj["educational_profile"] = {**(edu if isinstance(edu, dict) else {}), "knowledge_level": persona.education}
    for trait in BIG_FIVE:
        ts = persona.big_five[trait]  # type: ignore[index]
        if was.big_five[trait].score != ts.score:  # type: ignore[index]
            obj["personality_big5"][trait] = {**obj["personality_big5"][trait], "score": _score(ts)}
    if was.expertise != persona.expertise:
        obj["domain_expertise"] = _expertise_list(persona)
    return obj


def _built(persona: Persona) -> dict[str, Any]:
    """The paper's persona shape for a persona of our own (keys in the paper's order)."""
    edu: dict[str, Any] = {"knowledge_level": persona.education or UNSPECIFIED, "common_errors": UNSPECIFIED}
    for group, keys in EDUCATIONAL_PROFILE_SHAPE.items():
        edu[group] = dict.fromkeys(keys, UNSPECIFIED)
    big5 = {
        t: {"score": _score(persona.big_five[t]), "description": f"{persona.big_five[t].level} {t}"}  # type: ignore[index]
        for t in BIG_FIVE
    }
    return {
        "name": persona.name,
        "minimal_necessary_description": persona.summary,
        "demographics": {
            "age": persona.age,
            "occupation": persona.occupation,
            "location": persona.location,
            "family_context": "",
            "hobbies": [],
        },
        "educational_profile": edu,
        "personality_big5": big5,
        "backstory": persona.backstory,
        "domain_expertise": _expertise_list(persona),
        "id": persona.id,
    }


def persona_to_release(persona: Persona) -> dict[str, Any]:
    """The paper's persona object for a Persona (see the module docstring)."""
    raw = persona.extra.get(RELEASE_KEY)
    return _overlay(raw, persona) if isinstance(raw, dict) else _built(persona)
