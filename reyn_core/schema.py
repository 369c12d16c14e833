"""Load-time schema checks, provider lints and the OpenAI strict-mode transform.

``check_tool_schema`` is run for every tool at registration. Errors keep the tool out of the
registry; warnings (provider lints) are reported but do not. Every issue has a stable code listed in
docs/diagnostics.md.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from .errors import StrictSchemaError
from .jsondata import depth_within
from .provider_schemas import adapt_parameters, copy_json, to_strict
from .unicode_text import describe_lone_surrogate, json_text_unsendable_at
from .validation.patterns import MAX_PATTERN_LENGTH
from .validation.walk import subschemas as _subschemas

if TYPE_CHECKING:
    from .validation.compiled import SchemaValidator

MAX_SCHEMA_BYTES = 64 * 1024
MAX_SCHEMA_DEPTH = 32
__all__ = [
    "MAX_PATTERN_LENGTH",
    "MAX_SCHEMA_BYTES",
    "MAX_SCHEMA_DEPTH",
    "SchemaIssue",
    "check_tool_schema",
    "copy_json",
    "to_strict",
]

Severity = Literal["error", "warning"]


@dataclass(frozen=True, slots=True)
class SchemaIssue:
    """One finding about a tool's parameters schema."""

    code: str
    severity: Severity
    message: str
    pointer: str = ""


def check_tool_schema(
    parameters: Any, *, phase_usable: bool, validator: SchemaValidator | None = None
) -> list[SchemaIssue]:
    """All problems with a tool's parameters schema. ``error`` issues refuse the tool.

    ``validator`` (the registry's, made for exactly this ``parameters`` object, not compiled yet) is
    the one the library compiles here, so the registry keeps the compiled form it checked; without
    it, a validator is made for the check alone.

    Checks, in order: JSON-serialisable mapping; bounded depth; nothing JSON in UTF-8 cannot carry
    (``RT012``: a lone surrogate, a ``NaN`` or ``Infinity``); bounded size; object root; only local
    ``#/...`` references and nothing that could make one resolve elsewhere; a valid Draft 2020-12
    schema; patterns RE2 can run (linear time; no backreferences or lookaround) and at most
    ``MAX_PATTERN_LENGTH`` long; no ``kind`` property on a phase-usable tool (a phase op is flat:
    ``kind`` plus the arguments). Then provider lints.
    """
    if type(parameters) is not dict and not isinstance(parameters, Mapping):  # a dict without the ABC
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
    # The text bounds the size and tells which walks can find anything (below); neither depends on
    # the order of the keys, so they are not sorted. A key JSON has no text for fails here (RS001); a
    # non-string key JSON writes as a string is refused by the compile (RS005).
    # The same one encoding says where the schema holds what JSON in UTF-8 cannot carry (RT012: a
    # lone surrogate, a NaN or Infinity), before the compile, which fails on one without saying where.
    try:
        encoded, unsendable = json_text_unsendable_at(parameters)
    except (TypeError, ValueError, RecursionError) as exc:
        return [SchemaIssue("RS001", "error", f"parameters are not JSON-serialisable: {exc}")]
    if unsendable is not None:
        return [SchemaIssue("RT012", "error", unsendable_words(unsendable, "parameters"), unsendable[0])]
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
    # Imported here, at the first check: importing reyn_core alone never pays for the screening.
    # A plain import of the module: ``from <module> import names`` looks the module up as a package
    # too (a failed ``__path__`` lookup, an exception made and dropped), several times the cost, and
    # this runs for every tool.
    import reyn_core.validation.screening as screening

    refs = screening.reference_problems(parameters) if '"$' in encoded else []
    patterns = screening.pattern_problems(parameters) if '"pattern' in encoded else []
    if validator is not None and validator.source is not parameters:
        raise TypeError("check_tool_schema: the validator was made for another schema object")
    compiled: list[Any] = []
    if issues or refs or patterns:
        meta = screening.metaschema_problems(parameters)
    else:
        # Nothing refused so far: the validator library compiles the schema (a pattern past its size
        # bound, say, is refused here, at registration, never on a call). Compiling validates the
        # schema against the Draft 2020-12 meta-schema first (a schema the meta-schema refuses never
        # compiles: tests/core/test_schema_checks.py holds it), so the meta-schema check runs only
        # to word a refusal: its problem, when it has one, is the one reported.
        if validator is None:
            from .validation.compiled import SchemaValidator

            validator = SchemaValidator(parameters, deferred=True)
        compiled = screening.compile_problems(validator)
        meta = screening.metaschema_problems(parameters) if compiled else []
        if meta:
            compiled = []
    for code, found in (("RS004", refs), ("RS005", meta), ("RS007", patterns), ("RS005", compiled)):
        for p in found:
            issues.append(SchemaIssue(code, "error", p.message, p.pointer))
    properties = parameters.get("properties")
    if (
        phase_usable
        and (type(properties) is dict or isinstance(properties, Mapping))
        and "kind" in properties
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
    if not issues:  # every issue so far is an error
        issues.extend(provider_lints(parameters))
    return issues


def unsendable_words(found: tuple[str, str], field: str) -> str:
    """``RT012``'s words for ``found`` (``unsendable_at``'s answer) in a definition's ``field`` schema."""
    what = (
        "a number JSON cannot carry (NaN or Infinity)"
        if found[1] == "number"
        else "text that UTF-8 cannot carry (a lone surrogate)"
    )
    return f"{what} in its {field} schema {describe_lone_surrogate(found)}"


# --------------------------------------------------------------------------- provider lints

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
    issues: list[SchemaIssue] = []
    for ptr, sub in _subschemas(parameters):
        if sub.keys() <= KNOWN_KEYWORDS:
            continue
        for key in sub:
            if not isinstance(key, str) or key in KNOWN_KEYWORDS:
                continue
            from .validation.screening import did_you_mean  # only for an unknown keyword

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
    # Only what the gemini render target cannot adapt (a pydantic Enum's $ref is inlined, a type
    # array becomes nullable, ...): the same function the renderer uses, so lint and render agree.
    for problem in adapt_parameters(parameters, "gemini").problems:
        issues.append(SchemaIssue("RS102", "warning", problem))
    return issues
