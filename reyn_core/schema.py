"""Load-time schema checks, provider lints and the OpenAI strict-mode transform.

``check_tool_schema`` is run for every tool at registration. Errors keep the tool out of the
registry; warnings (provider lints) are reported but do not. Every issue has a stable code listed in
docs/diagnostics.md.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from .errors import StrictSchemaError
from .jsondata import JSON_SCALAR_TYPES, depth_within
from .validation.patterns import MAX_PATTERN_LENGTH
from .validation.walk import subschemas as _subschemas

MAX_SCHEMA_BYTES = 64 * 1024
MAX_SCHEMA_DEPTH = 32
__all__ = ["MAX_PATTERN_LENGTH", "MAX_SCHEMA_BYTES", "MAX_SCHEMA_DEPTH", "SchemaIssue", "check_tool_schema"]

Severity = Literal["error", "warning"]


@dataclass(frozen=True, slots=True)
class SchemaIssue:
    """One finding about a tool's parameters schema."""

    code: str
    severity: Severity
    message: str
    pointer: str = ""


def copy_json(value: Any) -> Any:
    """A deep copy of JSON-shaped data (mappings, lists, scalars), several times faster than
    ``copy.deepcopy`` — it matters when a thousand schemas are rendered per request. Other mappings
    and tuples become dicts and lists; any other object is shared, not copied."""
    t = type(value)
    if t is dict or (t not in JSON_SCALAR_TYPES and isinstance(value, Mapping)):
        return {k: v if type(v) in JSON_SCALAR_TYPES else copy_json(v) for k, v in value.items()}
    if t is list or t is tuple:
        return [v if type(v) in JSON_SCALAR_TYPES else copy_json(v) for v in value]
    return value


def check_tool_schema(parameters: Any, *, phase_usable: bool) -> list[SchemaIssue]:
    """All problems with a tool's parameters schema. ``error`` issues refuse the tool.

    Checks, in order: JSON-serialisable mapping; bounded size and depth; object root; only local
    ``#/...`` references and nothing that could make one resolve elsewhere; a valid Draft 2020-12
    schema; patterns RE2 can run (linear time; no backreferences or lookaround) and at most
    ``MAX_PATTERN_LENGTH`` long; no ``kind`` property on a phase-usable tool (a phase op is flat:
    ``kind`` plus the arguments). Then provider lints.
    """
    if not isinstance(parameters, Mapping):
        return [
            SchemaIssue(
                "RS001", "error", f"parameters must be a JSON Schema object, got {type(parameters).__name__}"
            )
        ]
    # Depth first, iteratively: a schema nested thousands of levels (or a cyclic dict) must be an
    # RS002 for this one tool, never a RecursionError that takes the whole load down.
    # The root sits at level 0 here (jsondata counts it as 1): a schema may nest MAX_SCHEMA_DEPTH
    # levels below its root.
    if not depth_within(parameters, MAX_SCHEMA_DEPTH + 1):
        return [
            SchemaIssue(
                "RS002", "error", f"schema nests more than {MAX_SCHEMA_DEPTH} levels (or contains itself)"
            )
        ]
    try:
        encoded = json.dumps(parameters, sort_keys=True)
    except (TypeError, ValueError, RecursionError) as exc:
        return [SchemaIssue("RS001", "error", f"parameters are not JSON-serialisable: {exc}")]
    issues: list[SchemaIssue] = []
    if len(encoded) > MAX_SCHEMA_BYTES:
        issues.append(
            SchemaIssue("RS002", "error", f"schema is {len(encoded)} bytes; the limit is {MAX_SCHEMA_BYTES}")
        )
        return issues
    if parameters.get("type") != "object":
        issues.append(
            SchemaIssue(
                "RS003", "error", 'the root must be {"type": "object"} (tool arguments are a JSON object)'
            )
        )
    # One screening for every schema in the project (reyn_core.validation): references that could be
    # retrieved (RS004), the meta-schema (RS005), patterns RE2 cannot run or too long (RS007).
    # RS004 is only ever about a key starting with "$" and RS007 about a "pattern..." key, and a key
    # appears in ``encoded`` as its JSON string: where the text has no '"$' (no '"pattern'), the walk
    # would find nothing, and is skipped (a property test holds this; it is most schemas).
    # Imported here: a warm load answers every check from the cache and never needs the screening.
    from .validation.screening import metaschema_problems, pattern_problems, reference_problems

    if '"$' in encoded:
        issues.extend(
            SchemaIssue("RS004", "error", p.message, p.pointer) for p in reference_problems(parameters)
        )
    issues.extend(
        SchemaIssue("RS005", "error", p.message, p.pointer) for p in metaschema_problems(parameters)
    )
    if '"pattern' in encoded:
        issues.extend(
            SchemaIssue("RS007", "error", p.message, p.pointer) for p in pattern_problems(parameters)
        )
    if not any(i.severity == "error" for i in issues):
        # The validator library compiles what passed the screening (a pattern past its size bound,
        # say, is refused here, at registration, never on a call).
        from .validation.screening import compile_problems

        issues.extend(
            SchemaIssue("RS005", "error", p.message, p.pointer) for p in compile_problems(parameters)
        )
    if (
        phase_usable
        and isinstance(parameters.get("properties"), Mapping)
        and "kind" in parameters["properties"]
    ):
        issues.append(
            SchemaIssue(
                "RS006",
                "error",
                "a phase-usable tool may not have a parameter called 'kind' (phase ops are flat: kind plus "
                "the arguments); rename it or deny the phase gate",
                "/properties/kind",
            )
        )
    if not any(i.severity == "error" for i in issues):
        issues.extend(provider_lints(parameters))
    return issues


# --------------------------------------------------------------------------- provider lints

_GEMINI_UNSUPPORTED = (
    "$ref",
    "oneOf",
    "allOf",
    "not",
    "patternProperties",
    "const",
    "if",
    "then",
    "else",
    "additionalProperties",
    "unevaluatedProperties",
    "prefixItems",
    "$defs",
)
_GEMINI_UNSUPPORTED_SET = frozenset(_GEMINI_UNSUPPORTED)


# Every keyword of JSON Schema 2020-12 (and the older drafts' names jsonschema still honours).
KNOWN_KEYWORDS = frozenset(
    {
        *("$schema", "$id", "$ref", "$anchor", "$dynamicRef", "$dynamicAnchor", "$vocabulary", "$comment"),
        *("$defs", "definitions", "$recursiveRef", "$recursiveAnchor", "dependencies", "additionalItems"),
        *("prefixItems", "items", "contains", "additionalProperties", "properties", "patternProperties"),
        *("dependentSchemas", "propertyNames", "if", "then", "else", "allOf", "anyOf", "oneOf", "not"),
        *("unevaluatedItems", "unevaluatedProperties", "type", "const", "enum", "multipleOf", "maximum"),
        *("exclusiveMaximum", "minimum", "exclusiveMinimum", "maxLength", "minLength", "pattern"),
        *("maxItems", "minItems", "uniqueItems", "maxContains", "minContains", "maxProperties"),
        *("minProperties", "required", "dependentRequired", "title", "description", "default"),
        *("deprecated", "readOnly", "writeOnly", "examples", "format", "contentEncoding"),
        *("contentMediaType", "contentSchema"),
    }
)


def keyword_lints(parameters: Mapping[str, Any]) -> list[SchemaIssue]:
    """RS103: a keyword JSON Schema does not know but that is close to one it does (``maxLenght``,
    ``propertes``, ``Required``). JSON Schema ignores unknown keywords, so the constraint the author
    meant silently does not apply. Unknown keywords far from every known one (``x-internal``) are
    extensions and pass."""
    from .validation.screening import did_you_mean

    issues: list[SchemaIssue] = []
    for ptr, sub in _subschemas(parameters):
        if sub.keys() <= KNOWN_KEYWORDS:
            continue
        for key in sub:
            if not isinstance(key, str) or key in KNOWN_KEYWORDS:
                continue
            guess = did_you_mean(key, sorted(KNOWN_KEYWORDS))
            if guess is not None:
                issues.append(
                    SchemaIssue(
                        "RS103",
                        "warning",
                        f"unknown keyword {key!r} (did you mean {guess!r}?): JSON Schema ignores unknown "
                        "keywords, so it has no effect",
                        f"{ptr}/{key}",
                    )
                )
    return issues


def provider_lints(parameters: Mapping[str, Any]) -> list[SchemaIssue]:
    """Warnings about providers that would reject or silently ignore parts of this schema."""
    issues: list[SchemaIssue] = keyword_lints(parameters)
    try:
        to_strict(parameters, tool="(lint)")
    except StrictSchemaError as exc:
        issues.append(SchemaIssue("RS101", "warning", f"cannot be used in OpenAI strict mode: {exc.reason}"))
    seen: set[str] = set()
    for ptr, sub in _subschemas(parameters):
        if not sub.keys() & _GEMINI_UNSUPPORTED_SET:
            continue
        for key in _GEMINI_UNSUPPORTED:
            if key in sub and key not in seen and not (key == "additionalProperties" and sub[key] is False):
                seen.add(key)
                issues.append(
                    SchemaIssue(
                        "RS102",
                        "warning",
                        f"Gemini's schema subset does not support {key!r}; it may be dropped or rejected",
                        f"{ptr}/{key}",
                    )
                )
    return issues


# --------------------------------------------------------------------------- strict mode

_STRICT_UNSUPPORTED = (
    "patternProperties",
    "unevaluatedProperties",
    "if",
    "then",
    "else",
    "not",
    "dependentSchemas",
    "dependentRequired",
    "propertyNames",
    "contains",
    "prefixItems",
)


def to_strict(parameters: Mapping[str, Any], *, tool: str) -> dict[str, Any]:
    """Transform a schema to OpenAI strict mode, or raise ``StrictSchemaError`` saying why not.

    Strict mode needs every object closed (``additionalProperties: false``) with every property
    required; optional properties become required but nullable (``type: [T, "null"]``), which is
    how OpenAI documents optional fields. ``oneOf`` becomes ``anyOf``; ``default`` is dropped.
    """
    schema = copy_json(parameters)

    def fix(node: Any, ptr: str) -> Any:
        if not isinstance(node, dict):
            return node
        for key in _STRICT_UNSUPPORTED:
            if key in node:
                raise StrictSchemaError(tool, f"{key!r} at {ptr or '/'} is not supported in strict mode")
        node.pop("default", None)
        if "oneOf" in node:
            node["anyOf"] = node.pop("oneOf")
        if node.get("type") == "object" or "properties" in node:
            extra = node.get("additionalProperties", False)
            if extra not in (False, None) and extra != {}:
                raise StrictSchemaError(
                    tool,
                    f"object at {ptr or '/'} allows additional properties; strict mode needs closed objects",
                )
            if ptr and not node.get("properties") and "additionalProperties" not in node:
                # Closing a free-form object would silently make it always empty.
                raise StrictSchemaError(
                    tool,
                    f"object at {ptr} declares no properties (a free-form object); "
                    "strict mode needs every property declared",
                )
            props = node.setdefault("properties", {})
            required = set(node.get("required", []))
            for name, sub in list(props.items()):
                sub = fix(sub, f"{ptr}/properties/{name}")
                if name not in required:
                    sub = _nullable(sub)
                props[name] = sub
            node["additionalProperties"] = False
            node["required"] = list(props)
        for key in ("items",):
            if isinstance(node.get(key), dict):
                node[key] = fix(node[key], f"{ptr}/{key}")
        for key in ("anyOf", "allOf"):
            if isinstance(node.get(key), list):
                node[key] = [fix(s, f"{ptr}/{key}/{i}") for i, s in enumerate(node[key])]
        for key in ("$defs", "definitions"):
            if isinstance(node.get(key), dict):
                node[key] = {k: fix(v, f"{ptr}/{key}/{k}") for k, v in node[key].items()}
        return node

    return fix(schema, "")


def _nullable(sub: dict[str, Any]) -> dict[str, Any]:
    typ = sub.get("type")
    if isinstance(typ, str):
        if typ != "null":
            sub["type"] = [typ, "null"]
        if "enum" in sub and None not in sub["enum"]:
            sub["enum"] = [*sub["enum"], None]
        return sub
    if isinstance(typ, list):
        if "null" not in typ:
            sub["type"] = [*typ, "null"]
        return sub
    if "anyOf" in sub:
        if not any(isinstance(s, dict) and s.get("type") == "null" for s in sub["anyOf"]):
            sub["anyOf"] = [*sub["anyOf"], {"type": "null"}]
        return sub
    return {"anyOf": [sub, {"type": "null"}]}
