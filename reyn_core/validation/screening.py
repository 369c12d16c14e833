"""Screening a schema before any validator is built: only local ``#/...`` references, no
``$dynamicRef``/``$recursiveRef``, no embedded ``$id``, a ``$schema`` that is a known dialect URI,
patterns RE2 can run, a valid Draft 2020-12 schema (checked by ``jsonschema_rs.meta``, the library's own
meta-schema check), and one the validator library compiles. Each finding is a ``SchemaProblem``."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from ..errors import exception_message
from ..jsondata import depth_within, follow_pointer
from .compiled import SchemaNotCompiled, SchemaValidator, schema_body
from .messages import escape_token, json_pointer, show_value
from .patterns import UnusablePattern, compile_pattern
from .walk import subschemas, walk_containers

# Dialect URIs whose meta-schemas ship with jsonschema (never fetched). Whatever ``$schema`` says, a
# schema is validated as Draft 2020-12.
KNOWN_DIALECTS = frozenset(
    {
        "https://json-schema.org/draft/2020-12/schema",
        "https://json-schema.org/draft/2019-09/schema",
        "http://json-schema.org/draft-07/schema",
        "http://json-schema.org/draft-06/schema",
        "http://json-schema.org/draft-04/schema",
    }
)

ProblemKind = Literal["reference", "pattern", "metaschema"]


@dataclass(frozen=True, slots=True)
class SchemaProblem:
    """Why a schema is refused: ``kind`` is "reference", "pattern" or "metaschema"."""

    kind: ProblemKind
    message: str
    pointer: str = ""

    def render(self) -> str:
        return f"{self.message} (at {self.pointer})" if self.pointer else self.message


def _local_ref_resolves(root: Mapping[str, Any], ref: str) -> bool:
    """Whether a local ``$ref`` (``#`` or ``#/json/pointer``) names a schema inside ``root``."""
    from urllib.parse import unquote

    fragment = unquote(ref[1:])
    if not fragment:
        return True
    found, node = follow_pointer(root, fragment)
    return found and isinstance(node, Mapping | bool)


_REFERENCE_KEYWORDS = frozenset({"$ref", "$dynamicRef", "$recursiveRef", "$id", "$schema"})


def reference_problems(schema: Mapping[str, Any]) -> list[SchemaProblem]:
    """Every reference that is not a resolvable local JSON pointer, and every keyword that could make
    a reference resolve elsewhere: ``$dynamicRef``/``$recursiveRef``, an embedded ``$id``, a
    ``$schema`` that is not a JSON Schema dialect URI (or is not at the root)."""
    out: list[SchemaProblem] = []
    for ptr, node in walk_containers(schema):
        if not isinstance(node, Mapping) or not node.keys() & _REFERENCE_KEYWORDS:
            continue
        ref = node.get("$ref")
        if isinstance(ref, str):
            if not ref.startswith("#"):
                out.append(
                    SchemaProblem(
                        "reference",
                        f"$ref {ref!r} is not local; only '#/...' references are allowed "
                        "(no remote or file retrieval)",
                        f"{ptr}/$ref",
                    )
                )
            elif ref != "#" and not ref.startswith("#/"):
                out.append(
                    SchemaProblem(
                        "reference",
                        f"$ref {ref!r} uses an anchor; only JSON-pointer references "
                        "('#/$defs/...') are allowed",
                        f"{ptr}/$ref",
                    )
                )
            elif not _local_ref_resolves(schema, ref):
                out.append(
                    SchemaProblem(
                        "reference",
                        f"$ref {ref!r} points at nothing in this schema (every call would fail)",
                        f"{ptr}/$ref",
                    )
                )
        for key in ("$dynamicRef", "$recursiveRef"):
            if key in node:
                out.append(
                    SchemaProblem(
                        "reference",
                        f"{key} {node[key]!r} is not supported in tool schemas "
                        "(use a local '#/$defs/...' $ref)",
                        f"{ptr}/{key}",
                    )
                )
        if "$id" in node and ptr:
            out.append(
                SchemaProblem(
                    "reference",
                    f"embedded $id {node['$id']!r} changes the reference base; remove it",
                    f"{ptr}/$id",
                )
            )
        if "$schema" in node:
            dialect = node["$schema"]
            known = isinstance(dialect, str) and dialect.rstrip("#") in KNOWN_DIALECTS
            if ptr:
                out.append(
                    SchemaProblem(
                        "reference", "$schema is only allowed at the root of a schema", f"{ptr}/$schema"
                    )
                )
            elif not known:
                out.append(
                    SchemaProblem(
                        "reference",
                        f"$schema {dialect!r} is not a JSON Schema dialect Reyn knows; "
                        "meta-schemas are never "
                        "retrieved: omit $schema or use 'https://json-schema.org/draft/2020-12/schema'",
                        "/$schema",
                    )
                )
    return out


def pattern_problems(schema: Mapping[str, Any]) -> list[SchemaProblem]:
    """Every ``pattern`` and ``patternProperties`` key that RE2 cannot run (or that is too long)."""
    out: list[SchemaProblem] = []
    for ptr, sub in subschemas(schema):
        found: list[tuple[Any, str]] = []
        if "pattern" in sub:
            found.append((sub["pattern"], f"{ptr}/pattern"))
        props = sub.get("patternProperties")
        if isinstance(props, Mapping):  # their keys are regexes run on model input too
            found.extend((key, f"{ptr}/patternProperties/{escape_token(str(key))}") for key in props)
        for pattern, where in found:
            if not isinstance(pattern, str):
                continue  # the meta-schema check reports it
            try:
                compile_pattern(pattern)
            except UnusablePattern as exc:
                out.append(SchemaProblem("pattern", str(exc), where))
    return out


def metaschema_problems(schema: Mapping[str, Any]) -> list[SchemaProblem]:
    """Where ``schema`` is not a valid Draft 2020-12 schema: ``jsonschema_rs.meta`` decides (whatever
    ``$schema`` says, Reyn validates as 2020-12) and its first error is worded here (the library
    reports one)."""
    import jsonschema_rs

    body = schema_body(schema)
    try:
        if jsonschema_rs.meta.is_valid(body):
            return []
        jsonschema_rs.meta.validate(body)
    except jsonschema_rs.ValidationError as error:
        return [
            SchemaProblem(
                "metaschema",
                f"not a valid JSON Schema 2020-12: {_meta_message(error)}",
                json_pointer(error.instance_path),
            )
        ]
    except (ValueError, TypeError, OverflowError, RecursionError, jsonschema_rs.ReferencingError) as exc:
        return [SchemaProblem("metaschema", f"the schema cannot be checked: {exception_message(exc)}")]
    return [SchemaProblem("metaschema", "not a valid JSON Schema 2020-12")]  # is_valid said no


def compile_problems(validator: SchemaValidator) -> list[SchemaProblem]:
    """The validator library's refusal to compile ``validator``'s schema (empty when it compiles: the
    compiled form stays in ``validator``, which is what the caller then validates with)."""
    try:
        validator.compile()
    except SchemaNotCompiled as exc:
        return [SchemaProblem("metaschema", str(exc))]
    return []


JSON_TYPES = ("array", "boolean", "integer", "null", "number", "object", "string")
# What newcomers write for a JSON Schema type: Python's and other languages' names.
_TYPE_ALIASES = {
    "str": "string",
    "text": "string",
    "int": "integer",
    "float": "number",
    "double": "number",
    "decimal": "number",
    "bool": "boolean",
    "dict": "object",
    "map": "object",
    "list": "array",
    "tuple": "array",
    "none": "null",
    "nonetype": "null",
    "nil": "null",
}


def did_you_mean(word: str, choices: Any, aliases: Mapping[str, str] | None = None) -> str | None:
    """The choice ``word`` most likely meant (a known alias, a case slip or a close spelling), or None."""
    import difflib

    lowered = word.lower()
    if aliases and lowered in aliases:
        return aliases[lowered]
    by_lower = {str(c).lower(): str(c) for c in choices}
    if lowered in by_lower:
        return by_lower[lowered]
    close = difflib.get_close_matches(lowered, list(by_lower), n=1, cutoff=0.75)
    return by_lower[close[0]] if close else None


def _meta_message(error: Any) -> str:
    """A meta-schema violation; a misspelt ``type`` names the type it most likely meant."""
    path = list(error.instance_path)
    value = error.instance
    names = value if isinstance(value, list) else [value]
    if path and path[-1] == "type" and type(error.kind).__name__ == "AnyOf":
        unknown = [n for n in names if not (isinstance(n, str) and n in JSON_TYPES)]
        if unknown:
            hints = []
            for name in unknown:
                guess = did_you_mean(name, JSON_TYPES, _TYPE_ALIASES) if isinstance(name, str) else None
                hints.append(f"{show_value(name)}" + (f" (did you mean {guess!r}?)" if guess else ""))
            return (
                f"{', '.join(hints)} "
                f"{'is not a JSON Schema type' if len(hints) == 1 else 'are not JSON Schema types'}; "
                f"the types are {', '.join(JSON_TYPES)}"
            )
    from .messages import describe_error

    return describe_error(error)


def screened(schema: Any) -> tuple[SchemaValidator | None, list[SchemaProblem]]:
    """``schema`` screened and compiled: ``(its validator, [])``, or ``(None, what is wrong)``."""
    if not isinstance(schema, Mapping):
        refused = f"a schema must be a JSON object, got {type(schema).__name__}"
        return None, [SchemaProblem("metaschema", refused)]
    if not depth_within(dict(schema), MAX_SCHEMA_NESTING):
        refused = f"the schema nests more than {MAX_SCHEMA_NESTING} levels"
        return None, [SchemaProblem("metaschema", refused)]
    problems = reference_problems(schema)
    problems += metaschema_problems(schema)
    problems += pattern_problems(schema)
    if problems:
        return None, problems
    validator = SchemaValidator(schema, deferred=True)
    problems = compile_problems(validator)
    return (None, problems) if problems else (validator, [])


def schema_problems(schema: Any) -> list[SchemaProblem]:
    """Everything that makes ``json_schema_validator`` refuse ``schema`` (empty: it is usable)."""
    return screened(schema)[1]


MAX_SCHEMA_NESTING = 64
