"""The paper's persona object → :class:`Persona`.

Big Five scores 1-5 become levels (1-2 low, 3 medium, 4-5 high); ``minimal_necessary_description`` is the
summary, ``educational_profile.knowledge_level`` the education, ``domain_expertise`` items the expertise
(level ``"expert"``). Everything else (family context, hobbies, the whole educational profile, trait
descriptions, the raw expertise list, usage count, unknown keys) is kept in ``persona.extra`` so that export
(:func:`prefdisco.release.exporter.persona_to_release`) loses nothing.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from prefdisco.errors import UserError
from prefdisco.release.format import int_like
from prefdisco.release.record_error import RecordModelError
from prefdisco.schema import BIG_FIVE, Persona, TraitScore, persona_id, trait_level

_PERSONA_MAPPED = {
    "name",
    "minimal_necessary_description",
    "demographics",
    "educational_profile",
    "personality_big5",
    "domain_expertise",
    "backstory",
    "id",
    "usage_count",
}


def persona_from_release(obj: Any, where: str) -> Persona:
    """Build a Persona from the paper's persona object, keeping every unmapped field in ``extra``."""
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
    big5 = obj.get("personality_big5")
    if not isinstance(big5, dict):
        raise UserError(f"{where}: persona.personality_big5 must be an object with the five traits")
    big_five: dict[str, TraitScore] = {}
    trait_rest: dict[str, Any] = {}
    for trait in BIG_FIVE:
        entry = big5.get(trait)
        score = entry.get("score") if isinstance(entry, dict) else None
        if isinstance(score, bool) or not isinstance(score, int | float) or not 1 <= score <= 5:
            raise UserError(f"{where}: persona.personality_big5.{trait}.score must be a number 1-5, got {score!r}")
        big_five[trait] = TraitScore(level=trait_level(score), score=float(score))
        trait_rest[trait] = {k: v for k, v in entry.items() if k != "score"}  # type: ignore[union-attr]
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
    extra: dict[str, Any] = {
        "demographics": {k: v for k, v in demo.items() if k not in ("age", "occupation", "location")},
        "personality_big5": trait_rest,
    }
    for key in ("educational_profile", "domain_expertise", "usage_count"):
        if key in obj:
            extra[key] = obj[key]
    if "minimal_necessary_description" not in obj:
        extra["no_minimal_necessary_description"] = True
    unmapped = {k: v for k, v in obj.items() if k not in _PERSONA_MAPPED}
    if unmapped:
        extra["unmapped"] = unmapped
    pid = obj.get("id")
    try:
        return Persona(
            id=pid if isinstance(pid, str) and pid.strip() else persona_id(name, description),
            name=name,
            age=age,
            occupation=str(demo.get("occupation") or "").strip() or "unspecified",
            location=str(demo.get("location") or ""),
            education=knowledge if isinstance(knowledge, str) else "",
            summary=description or name,
            big_five=big_five,
            expertise=expertise,
            backstory=str(obj.get("backstory") or ""),
            extra=extra,
        )
    except ValidationError as e:
        raise RecordModelError(where, "persona", e) from e
