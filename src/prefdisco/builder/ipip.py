"""IPIP-NEO item files: the questionnaire items that can ground a persona's Big Five levels in its prompt.

A file is a JSON list of ``{text, keyed, domain[, facet]}`` (``domain`` one of O, C, E, A, N; ``keyed`` plus or
minus), as in the shared IPIP-NEO-120 and -50 files. Without a file the builder describes trait levels by the
short packaged hints of :mod:`prefdisco.builder.blueprints`, so the default needs no shared data.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from prefdisco.errors import UserError, describe_validation_error
from prefdisco.schema import BIG_FIVE

DOMAIN_LETTERS = {
    "O": "openness",
    "C": "conscientiousness",
    "E": "extraversion",
    "A": "agreeableness",
    "N": "neuroticism",
}


class IpipItem(BaseModel):
    model_config = ConfigDict(extra="ignore")

    text: str = Field(min_length=1)
    keyed: Literal["plus", "minus"]
    domain: Literal["O", "C", "E", "A", "N"]
    facet: int | None = None


def load_ipip(path: Path) -> dict[str, list[IpipItem]]:
    """IPIP-NEO items (a JSON list of ``{text, keyed, domain[, facet]}``) grouped by Big Five trait."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UserError(f"{path}: IPIP item file not found") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise UserError(f"{path}: cannot read IPIP items as JSON ({err})") from None
    if not isinstance(data, list) or not data:
        raise UserError(f"{path}: expected a non-empty JSON list of IPIP items")
    grouped: dict[str, list[IpipItem]] = {t: [] for t in BIG_FIVE}
    for row, entry in enumerate(data):
        try:
            item = IpipItem.model_validate(entry)
        except ValidationError as err:
            raise UserError(describe_validation_error(err, f"{path}: item {row}")) from None
        grouped[DOMAIN_LETTERS[item.domain]].append(item)
    empty = [t for t, items in grouped.items() if not items]
    if empty:
        raise UserError(f"{path}: no IPIP items for trait(s) {', '.join(empty)}")
    return grouped
