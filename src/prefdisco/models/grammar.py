"""JSON schema → GBNF grammar for the embedded model, with string lengths bounded natively.

llama-cpp-python's converter (``llama_cpp.llama_grammar.SchemaConverter``) handles ``$ref``, ``enum``,
``const``, ``anyOf``, ``pattern`` and ``minItems``/``maxItems``, but it writes ``maxLength: 400`` as 400 nested
optional rules, which made every sampled token slow and, in our runs, left the tiny model's output effectively
unconstrained; and a string with no ``maxLength`` may run to the token limit (SmolLM2 repeats a sentence until
it is cut off). Nor can it stop a list from repeating one item (SmolLM2 fills an 8-item list with one name
8 times). This
subclass writes every string as ``"\\"" char{min,max} "\\""`` (llama.cpp's grammar engine
supports bounded repetition directly) with ``max`` the smaller of the schema's ``maxLength`` and
``max_string_chars``. The cap is a property of the embedded provider, not of the schema: a pydantic validator
still checks the real limits, and a reply cut short by the cap is re-asked like any other invalid reply.
"""

from __future__ import annotations

import json
from typing import Any

from llama_cpp.llama_grammar import PRIMITIVE_RULES, SchemaConverter

DEFAULT_MAX_STRING_CHARS = 240
MAX_ENUMERATED_INTEGERS = 1000
"""An integer with ``minimum`` and ``maximum`` at most this far apart is written as the alternatives it may take
(the stock converter ignores both bounds)."""


class _BoundedStrings(SchemaConverter):
    def __init__(self, max_string_chars: int) -> None:
        super().__init__(prop_order={}, allow_fetch=False, dotall=False, raw_pattern=False)
        self.max_string_chars = max_string_chars

    def visit(self, schema: dict[str, Any], name: str) -> str:
        bounded_int = (
            schema.get("type") == "integer"
            and isinstance(schema.get("minimum"), int)
            and isinstance(schema.get("maximum"), int)
            and 0 <= schema["maximum"] - schema["minimum"] <= MAX_ENUMERATED_INTEGERS
        )
        if schema.get("type") == "array" and schema.get("uniqueItems") and isinstance(schema.get("items"), dict):
            members = _members(schema["items"])
            if members is not None:
                return self._unique_subsequence(schema, members, name or "root")
        if bounded_int:
            values = " | ".join(f'"{v}"' for v in range(schema["minimum"], schema["maximum"] + 1))
            return self._add_rule(name or "root", f"({values}) space")
        plain_string = (
            schema.get("type") == "string"
            and not {"pattern", "format", "enum", "const", "$ref", "anyOf", "oneOf"} & schema.keys()
        )
        if not plain_string:
            return super().visit(schema, name)
        lo = int(schema.get("minLength", 0))
        hi = min(int(schema.get("maxLength", self.max_string_chars)), self.max_string_chars)
        hi = max(hi, lo)
        char = self._add_primitive("char", PRIMITIVE_RULES["char"])
        rule_name = name or "root"
        return self._add_rule(rule_name, f'"\\"" {char}{{{lo},{hi}}} "\\"" space')

    def _unique_subsequence(self, schema: dict[str, Any], members: list[dict[str, Any]], name: str) -> str:
        """Distinct items as a subsequence of ``members`` in their listed order, ``minItems``..``maxItems`` long:
        rule ``S(i, c)`` reads the rest of the list after ``c`` items, the next one taken from member ``i`` on."""
        n = len(members)
        lo = min(int(schema.get("minItems", 0)), n)
        hi = min(int(schema.get("maxItems", n)), n)
        if lo > hi:
            raise ValueError(f"{name}: minItems {lo} exceeds maxItems {hi} (or the {n} distinct items)")
        items = [self.visit(member, f"{name}-item{i}") for i, member in enumerate(members)]
        rules: dict[tuple[int, int], str] = {}

        def state(i: int, c: int) -> str | None:
            if c == hi or (i == n and c >= lo):
                return '""'
            if n - i < lo - c:
                return None
            key = (i, c)
            if key not in rules:
                rules[key] = f"{name}-seq-{i}-{c}"
                sep = '"," space ' if c else ""
                take, skip = state(i + 1, c + 1), state(i + 1, c)
                alternatives = [f"{sep}{items[i]} {take}" if take != '""' else f"{sep}{items[i]}"]
                if skip is not None:
                    alternatives.append(skip)
                self._add_rule(rules[key], " | ".join(alternatives))
            return rules[key]

        body = state(0, 0)
        return self._add_rule(name, f'"[" space {body if body != chr(34) * 2 else ""} "]" space')


def _members(items: dict[str, Any]) -> list[dict[str, Any]] | None:
    """The distinct alternatives of an array's item schema: an ``enum``'s values or an ``anyOf``'s members."""
    if isinstance(items.get("enum"), list):
        return [{"const": v} for v in items["enum"]]
    if isinstance(items.get("anyOf"), list):
        return list(items["anyOf"])
    return None


JSON_CHAR = r'[^"\\\x7F\x00-\x1F] | "\\" (["\\/bfnrt] | "u" [0-9a-fA-F]{4})'
"""A character of a JSON string. The stock rule (``[^"\\]``) lets raw newlines and other control characters
into strings, which JSON forbids: SmolLM2 wrote them and the reply did not parse."""


def schema_to_gbnf(schema: dict[str, Any], max_string_chars: int = DEFAULT_MAX_STRING_CHARS) -> str:
    """A GBNF grammar (root rule ``root``) accepting exactly the JSON documents of ``schema``, with every free
        string at most ``max_string_chars`` characters long, every small bounded integer range enforced, and a
    ``uniqueItems`` array of enum values or ``anyOf`` members written so that no item can repeat (items come in the
    order the schema lists them)."""
    if max_string_chars < 1:
        raise ValueError("max_string_chars must be >= 1")
    converter = _BoundedStrings(max_string_chars)
    resolved = converter.resolve_refs(json.loads(json.dumps(schema)), "input")
    converter.visit(resolved, "")
    if "char" in converter._rules:
        converter._rules["char"] = JSON_CHAR
    return converter.format_grammar()
