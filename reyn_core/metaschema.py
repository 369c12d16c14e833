"""The Draft 2020-12 meta-schema as a structural check: the cold-registration fast path.

``jsonschema`` validating a schema against the bundled 2020-12 meta-schema resolves a ``$dynamicRef``
through ``referencing`` at every subschema: about 1.7 ms for a typical tool, 85% of a cold
registration. ``is_valid_schema`` decides the same question in one walk over the schema. It is a
transcription of the meta-schema as jsonschema applies it here — no format assertion (Reyn builds its
validators with ``format_checker=None``), the meta-schema's patterns on Python's ``re`` as jsonschema
runs them (RE2 for a root ``$recursiveAnchor``: see ``_root_recursive_anchor``), and ``#meta``
always meaning the whole 2020-12 meta-schema (the dynamic scope starts there):

* every (sub)schema is an object or a boolean;
* subschema-valued keywords (``items``, ``not``, ``contentSchema``...), maps of subschemas
  (``properties``, ``$defs``, ``definitions``...) and non-empty arrays of them (``allOf``...);
* ``type`` is a simple type or a non-empty array of distinct ones; ``required`` an array of
  distinct strings; ``dependentRequired`` / ``dependencies`` maps of those (``dependencies`` may
  also hold subschemas); ``enum`` and ``examples`` arrays; bounds numbers; lengths and counts
  non-negative integers (``2.0`` is one, ``true`` is not); ``multipleOf`` a number above 0;
* ``$anchor`` / ``$dynamicAnchor`` / ``$recursiveAnchor`` match ``^[A-Za-z_][-A-Za-z0-9._]*$``,
  ``$id`` matches ``^[^#]*#?$``; ``$vocabulary`` maps strings to booleans; the other
  string-valued keywords are strings.

It is a fast path, never the only word: ``True`` means valid; ``False`` means "let jsonschema
decide" — ``metaschema_problems`` then runs the real meta-schema validation, which also words the
problems. A property test (tests/core/test_metaschema_fast_path.py) holds the verdicts equal to
jsonschema's over generated schemas and real ones.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["is_valid_schema"]

SIMPLE_TYPES = frozenset({"array", "boolean", "integer", "null", "number", "object", "string"})
_ANCHOR = "^[A-Za-z_][-A-Za-z0-9._]*$"
_ID = "^[^#]*#?$"
_ANCHOR_FULL = re.compile("[A-Za-z_][-A-Za-z0-9._]*")

# How each keyword's value is checked (keywords not listed are unconstrained by the meta-schema).
_SUBSCHEMA = "subschema"
_SCHEMA_MAP = "schema map"
_SCHEMA_ARRAY = "schema array"
_STRING = "string"
_ANCHOR_STRING = "anchor"
_NUMBER = "number"
_NON_NEGATIVE_INTEGER = "non-negative integer"
_BOOLEAN = "boolean"
_ARRAY = "array"
_KEYWORDS: dict[str, str] = {
    **dict.fromkeys(
        (
            "items",
            "contains",
            "additionalProperties",
            "propertyNames",
            "if",
            "then",
            "else",
            "not",
            "unevaluatedItems",
            "unevaluatedProperties",
            "contentSchema",
        ),
        _SUBSCHEMA,
    ),
    **dict.fromkeys(
        ("properties", "patternProperties", "dependentSchemas", "$defs", "definitions"), _SCHEMA_MAP
    ),
    **dict.fromkeys(("prefixItems", "allOf", "anyOf", "oneOf"), _SCHEMA_ARRAY),
    **dict.fromkeys(
        (
            "$schema",
            "$ref",
            "$dynamicRef",
            "$recursiveRef",
            "$comment",
            "title",
            "description",
            "format",
            "contentEncoding",
            "contentMediaType",
            "pattern",
        ),
        _STRING,
    ),
    **dict.fromkeys(("$anchor", "$dynamicAnchor", "$recursiveAnchor"), _ANCHOR_STRING),
    **dict.fromkeys(("maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum"), _NUMBER),
    **dict.fromkeys(
        (
            "maxLength",
            "minLength",
            "maxItems",
            "minItems",
            "maxContains",
            "minContains",
            "maxProperties",
            "minProperties",
        ),
        _NON_NEGATIVE_INTEGER,
    ),
    **dict.fromkeys(("deprecated", "readOnly", "writeOnly", "uniqueItems"), _BOOLEAN),
    **dict.fromkeys(("enum", "examples"), _ARRAY),
    # Checked by name below.
    **dict.fromkeys(
        ("type", "required", "dependentRequired", "dependencies", "$vocabulary", "$id", "multipleOf"), ""
    ),
}


def is_valid_schema(schema: Any) -> bool:
    """Whether ``schema`` is valid against the Draft 2020-12 meta-schema, as Reyn's jsonschema
    validation decides it. ``False`` also for anything it is not sure of (a value that is not JSON
    data, an odd ``__eq__``): the caller then asks jsonschema."""
    try:
        return _schema(schema, root=True)
    except Exception:  # RecursionError, an odd __eq__ or __hash__: jsonschema decides
        return False


def _number(value: Any) -> bool:
    # JSON numbers only: jsonschema also takes Decimal, Fraction and complex; for those it decides.
    return isinstance(value, int | float) and not isinstance(value, bool)


def _non_negative_integer(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return value >= 0
    return isinstance(value, float) and value.is_integer() and value >= 0


def _string_array(value: Any) -> bool:
    return (
        isinstance(value, list)
        and all(isinstance(item, str) for item in value)
        and len(set(value)) == len(value)
    )


def _matches(pattern: str, value: str) -> bool:
    # Python's ``re``, as jsonschema runs the meta-schema's own patterns: its vocabularies carry a
    # ``$schema``, so jsonschema validates them with its stock class, not Reyn's RE2 one ("abc\n" is
    # an anchor to it: ``$`` matches before a final newline). Two fixed patterns, linear in ``re``.
    return re.search(pattern, value) is not None


def _root_recursive_anchor(value: str) -> bool:
    # The one meta-schema pattern jsonschema runs with Reyn's own validator class, on RE2: the root
    # meta-schema's ``properties`` reach ``$recursiveAnchor``'s ``anchorString`` without passing a
    # resource with its own ``$schema``. RE2's ``$`` is the end of the text: a full match.
    return _ANCHOR_FULL.fullmatch(value) is not None


def _schema(node: Any, root: bool = False) -> bool:
    if isinstance(node, bool):
        return True
    if not isinstance(node, dict):
        return False
    for key, value in node.items():
        kind = _KEYWORDS.get(key) if isinstance(key, str) else None
        if kind is None:
            continue  # not a keyword the meta-schema constrains
        if kind == _SUBSCHEMA:
            ok = _schema(value)
        elif kind == _STRING:
            ok = isinstance(value, str)
        elif kind == _SCHEMA_MAP:
            ok = isinstance(value, dict) and all(_schema(v) for v in value.values())
        elif kind == _SCHEMA_ARRAY:
            ok = isinstance(value, list) and len(value) >= 1 and all(_schema(v) for v in value)
        elif kind == _NUMBER:
            ok = _number(value)
        elif kind == _NON_NEGATIVE_INTEGER:
            ok = _non_negative_integer(value)
        elif kind == _BOOLEAN:
            ok = isinstance(value, bool)
        elif kind == _ARRAY:
            ok = isinstance(value, list)
        elif kind == _ANCHOR_STRING:
            if root and key == "$recursiveAnchor":
                ok = isinstance(value, str) and _root_recursive_anchor(value)
            else:
                ok = isinstance(value, str) and _matches(_ANCHOR, value)
        else:
            ok = _named(key, value)
        if not ok:
            return False
    return True


def _named(key: str, value: Any) -> bool:
    if key == "type":
        if isinstance(value, str):
            return value in SIMPLE_TYPES
        return (
            isinstance(value, list)
            and len(value) >= 1
            and all(isinstance(t, str) and t in SIMPLE_TYPES for t in value)
            and len(set(value)) == len(value)
        )
    if key == "required":
        return _string_array(value)
    if key == "dependentRequired":
        return isinstance(value, dict) and all(_string_array(v) for v in value.values())
    if key == "dependencies":
        return isinstance(value, dict) and all(_schema(v) or _string_array(v) for v in value.values())
    if key == "$vocabulary":
        return isinstance(value, dict) and all(
            isinstance(k, str) and isinstance(v, bool) for k, v in value.items()
        )
    if key == "$id":
        return isinstance(value, str) and _matches(_ID, value)
    if key == "multipleOf":
        return _number(value) and not value <= 0  # as jsonschema compares: NaN passes
    raise AssertionError(f"unhandled meta-schema keyword {key!r}")  # pragma: no cover
