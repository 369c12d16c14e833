"""The one JSON-Schema validator factory of Reyn: no retrieval, patterns on RE2, problems as pointers.

Every JSON-Schema validator in the project is built here, and only here (a test scans the source of
the core, the packs and the example plugin for any other construction):

* ``json_schema_validator(schema)`` (public) screens a schema first (``schema_problems``: only local
  ``#/...`` references, no ``$dynamicRef``/``$recursiveRef``, no embedded ``$id``, a ``$schema`` that is
  a JSON Schema dialect URI, patterns RE2 can run, a valid Draft 2020-12 schema) and raises
  ``SchemaRefused`` naming what is wrong, else returns a validator.
* ``compile_validator(schema)`` (internal, for schemas the registry already screened) builds it.

Simple flat schemas (an object of scalar / enum / array-of-scalar properties, which is what most tools
have) compile to a small closure that checks exactly what JSON Schema would; anything else goes to
``jsonschema``'s Draft 2020-12 validator, extended so that ``pattern`` and ``patternProperties`` (also
where ``additionalProperties``/``unevaluatedProperties`` consult them) run on RE2 — linear time, no
catastrophic backtracking — with a reference registry that refuses every retrieval. ``jsonschema``
and ``re2`` are imported only when needed.
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal

from .errors import ArgumentProblem
from .errors import exception_message as exc_text

Validator = Callable[[Any], list[ArgumentProblem]]

_SCALAR_TYPES = {"string", "integer", "number", "boolean", "null"}
_FAST_KEYWORDS = {
    "type",
    "description",
    "title",
    "default",
    "enum",
    "const",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "minLength",
    "maxLength",
    "pattern",
    "examples",
}
_FAST_ARRAY_KEYWORDS = {
    "type",
    "description",
    "title",
    "default",
    "items",
    "minItems",
    "maxItems",
    "examples",
}


def json_type_of(value: Any) -> str:
    """The JSON Schema type name of a Python value decoded from JSON."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "integer" if value.is_integer() else "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list | tuple):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def _type_ok(value: Any, expected: str | list[str]) -> bool:
    actual = json_type_of(value)
    names = [expected] if isinstance(expected, str) else expected
    return actual in names or (actual == "integer" and "number" in names)


def _escape(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


# --------------------------------------------------------------------------- problem messages
# One wording for both validators (the fast closure and the jsonschema path): short, saying what was
# expected and what came, so a model can correct the call. A test holds the two paths to the same
# messages wherever both apply.

_SHOW_LIMIT = 60
_ENUM_SHOWN = 12


def show_value(value: Any) -> str:
    """``value`` as a model would write it, shortened: strings quoted, JSON literals for the rest."""
    if isinstance(value, str):
        text = repr(value)
    else:
        try:
            text = json.dumps(value, ensure_ascii=False, sort_keys=True)
        except (TypeError, ValueError, RecursionError):
            text = repr(value)
    return text if len(text) <= _SHOW_LIMIT else text[: _SHOW_LIMIT - 3] + "..."


def _type_names(expected: Any) -> list[str]:
    return [expected] if isinstance(expected, str) else [str(t) for t in expected]


def type_message(expected: Any, value: Any) -> str:
    """``expected integer or null, got string``."""
    return f"expected {' or '.join(_type_names(expected))}, got {json_type_of(value)}"


def _one_of(values: Any) -> str:
    shown = [show_value(v) for v in list(values)[:_ENUM_SHOWN]]
    more = f" (and {len(values) - _ENUM_SHOWN} more)" if len(values) > _ENUM_SHOWN else ""
    return shown[0] if len(shown) == 1 and not more else f"one of {', '.join(shown)}{more}"


def enum_message(values: Any, value: Any) -> str:
    """``expected one of 'a', 'b', got 'c'``."""
    return f"expected {_one_of(values)}, got {show_value(value)}"


def const_message(const: Any, value: Any) -> str:
    """``expected 'a', got 'c'``."""
    return f"expected {show_value(const)}, got {show_value(value)}"


_BOUNDS = {"minimum": ">=", "maximum": "<=", "exclusiveMinimum": ">", "exclusiveMaximum": "<"}


def bound_message(keyword: str, bound: Any, value: Any) -> str:
    """``must be >= 1, got 0``."""
    return f"must be {_BOUNDS[keyword]} {show_value(bound)}, got {show_value(value)}"


def length_message(keyword: str, limit: Any, value: Any) -> str:
    """``must be at least 3 characters, got 2`` / ``must have at most 4 items, got 5``."""
    side = "at least" if keyword.startswith("min") else "at most"
    if keyword.endswith("Length"):
        return f"must be {side} {limit} characters, got {len(value)}"
    return f"must have {side} {limit} items, got {len(value)}"


def pattern_message(pattern: Any, value: Any) -> str:
    return f"{value!r} does not match {pattern!r}"


MISSING_MESSAGE = "is a required property and is missing"


def unexpected_message(allowed: Any) -> str:
    return f"unexpected property (allowed: {', '.join(sorted(allowed)) or 'none'})"


def not_an_object_message(value: Any) -> str:
    return f"arguments must be a JSON object, got {json_type_of(value)}"


def _scalar_checker(schema: Mapping[str, Any]) -> Callable[[Any, str, list[ArgumentProblem]], None] | None:
    if not isinstance(schema, Mapping) or not set(schema) <= _FAST_KEYWORDS:
        return None
    typ = schema.get("type")
    if typ is not None and not (
        (isinstance(typ, str) and typ in _SCALAR_TYPES)
        or (isinstance(typ, list) and all(t in _SCALAR_TYPES for t in typ))
    ):
        return None
    enum = schema.get("enum")
    has_const = "const" in schema
    const = schema.get("const")
    lo, hi = schema.get("minimum"), schema.get("maximum")
    xlo, xhi = schema.get("exclusiveMinimum"), schema.get("exclusiveMaximum")
    min_len, max_len = schema.get("minLength"), schema.get("maxLength")
    regex: Any = None
    if "pattern" in schema:
        try:
            regex = compile_pattern(schema["pattern"])
        except UnusablePattern:
            return None  # the jsonschema path reports the schema as unusable
    pattern = schema.get("pattern")

    def check(value: Any, ptr: str, out: list[ArgumentProblem]) -> None:
        if typ is not None and not _type_ok(value, typ):
            out.append(ArgumentProblem(ptr, type_message(typ, value)))
            return  # the type is the first thing to fix; the other checks would only add noise
        if enum is not None and not any(_json_equal(value, e) for e in enum):
            out.append(ArgumentProblem(ptr, enum_message(enum, value)))
        if has_const and not _json_equal(value, const):
            out.append(ArgumentProblem(ptr, const_message(const, value)))
        if isinstance(value, int | float) and not isinstance(value, bool):
            if isinstance(value, float) and not math.isfinite(value):
                out.append(ArgumentProblem(ptr, "must be a finite number"))
            if lo is not None and value < lo:
                out.append(ArgumentProblem(ptr, bound_message("minimum", lo, value)))
            if hi is not None and value > hi:
                out.append(ArgumentProblem(ptr, bound_message("maximum", hi, value)))
            if xlo is not None and value <= xlo:
                out.append(ArgumentProblem(ptr, bound_message("exclusiveMinimum", xlo, value)))
            if xhi is not None and value >= xhi:
                out.append(ArgumentProblem(ptr, bound_message("exclusiveMaximum", xhi, value)))
        if isinstance(value, str):
            if min_len is not None and len(value) < min_len:
                out.append(ArgumentProblem(ptr, length_message("minLength", min_len, value)))
            if max_len is not None and len(value) > max_len:
                out.append(ArgumentProblem(ptr, length_message("maxLength", max_len, value)))
            if regex is not None and regex.search(value) is None:
                out.append(ArgumentProblem(ptr, pattern_message(pattern, value)))

    return check


def _json_equal(a: Any, b: Any) -> bool:
    # JSON equality, recursively: True is not 1, 1 equals 1.0, [True] is not [1].
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(_json_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        return a.keys() == b.keys() and all(_json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple | Mapping) or isinstance(b, list | tuple | Mapping):
        return False
    return bool(a == b)


def _property_checker(schema: Any) -> Callable[[Any, str, list[ArgumentProblem]], None] | None:
    if not isinstance(schema, Mapping):
        return None
    if schema.get("type") == "array":
        if not set(schema) <= _FAST_ARRAY_KEYWORDS:
            return None
        items = schema.get("items", {})
        if not isinstance(items, Mapping):  # ``items: false`` / ``true``: leave it to jsonschema
            return None
        item_check = _scalar_checker(items)
        if item_check is None:
            return None
        min_items, max_items = schema.get("minItems"), schema.get("maxItems")

        def check_array(value: Any, ptr: str, out: list[ArgumentProblem]) -> None:
            if not isinstance(value, list):
                out.append(ArgumentProblem(ptr, type_message("array", value)))
                return
            if min_items is not None and len(value) < min_items:
                out.append(ArgumentProblem(ptr, length_message("minItems", min_items, value)))
            if max_items is not None and len(value) > max_items:
                out.append(ArgumentProblem(ptr, length_message("maxItems", max_items, value)))
            for i, item in enumerate(value):
                item_check(item, f"{ptr}/{i}", out)

        return check_array
    return _scalar_checker(schema)


def _compile_fast(schema: Mapping[str, Any]) -> Validator | None:
    allowed = {"type", "properties", "required", "additionalProperties", "description", "title"}
    if schema.get("type") != "object" or not set(schema) <= allowed:
        return None
    extra = schema.get("additionalProperties", True)
    if not isinstance(extra, bool):
        return None
    props = schema.get("properties", {})
    required = tuple(schema.get("required", ()))
    if not isinstance(props, Mapping):
        return None
    checkers: dict[str, Callable[[Any, str, list[ArgumentProblem]], None]] = {}
    for key, sub in props.items():
        checker = _property_checker(sub)
        if checker is None:
            return None
        checkers[key] = checker

    def validate(args: Any) -> list[ArgumentProblem]:
        if not isinstance(args, dict):
            return [ArgumentProblem("", not_an_object_message(args))]
        out: list[ArgumentProblem] = []
        for key in required:
            if key not in args:
                out.append(ArgumentProblem(f"/{_escape(key)}", MISSING_MESSAGE))
        for key, value in args.items():
            checker = checkers.get(key)
            if checker is not None:
                checker(value, f"/{_escape(key)}", out)
            elif not extra:
                out.append(ArgumentProblem(f"/{_escape(key)}", unexpected_message(checkers)))
        return out

    return validate


# --------------------------------------------------------------------------- patterns on RE2

MAX_PATTERN_LENGTH = 1000

_RE2_CONSTRUCTS = (
    ("(?<=", "a lookbehind '(?<=...)'"),
    ("(?<!", "a negative lookbehind '(?<!...)'"),
    ("(?=", "a lookahead '(?=...)'"),
    ("(?!", "a negative lookahead '(?!...)'"),
    ("(?P=", "a named backreference '(?P=name)'"),
    ("(?>", "an atomic group '(?>...)'"),
    ("\\k", "a named backreference '\\k<name>'"),
    ("++", "a possessive quantifier '++'"),
    ("*+", "a possessive quantifier '*+'"),
    ("?+", "a possessive quantifier '?+'"),
)


class UnusablePattern(ValueError):
    """A schema pattern Reyn will not run: too long, or not expressible in RE2."""

    def __init__(self, pattern: str, reason: str) -> None:
        shown = pattern if len(pattern) <= 80 else pattern[:77] + "..."
        super().__init__(f"pattern {shown!r} {reason}")
        self.pattern = pattern
        self.reason = reason


def _ecma_escapes(pattern: str) -> str:
    r"""ECMA-262's ``\uXXXX`` escape as RE2's ``\x{XXXX}`` (an escaped backslash is left alone)."""
    if "\\u" not in pattern:
        return pattern
    out: list[str] = []
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\" and i + 1 < len(pattern):
            hexdigits = pattern[i + 2 : i + 6]
            if (
                pattern[i + 1] == "u"
                and len(hexdigits) == 4
                and all(c in "0123456789abcdefABCDEF" for c in hexdigits)
            ):
                out.append("\\x{" + hexdigits + "}")
                i += 6
                continue
            out.append(pattern[i : i + 2])
            i += 2
            continue
        out.append(ch)
        i += 1
    return "".join(out)


@lru_cache(maxsize=1024)
def compile_pattern(pattern: str) -> Any:
    r"""``pattern`` compiled by RE2 (linear-time matching), or ``UnusablePattern`` saying why not.

    RE2 has no backreferences, lookaround, atomic groups or possessive quantifiers: a pattern using
    one is refused, naming the construct. ECMA-262's ``\uXXXX`` escape is accepted.
    """
    if not isinstance(pattern, str):
        raise UnusablePattern(repr(pattern), "is not a string")
    if len(pattern) > MAX_PATTERN_LENGTH:
        raise UnusablePattern(pattern, f"is {len(pattern)} characters; the limit is {MAX_PATTERN_LENGTH}")
    import re2

    options = re2.Options()
    options.log_errors = False
    try:
        return re2.compile(_ecma_escapes(pattern), options)
    except re2.error as exc:
        detail = (
            exc.args[0].decode("utf-8", "replace")
            if exc.args and isinstance(exc.args[0], bytes)
            else str(exc)
        )
        construct = _construct_in(pattern, detail)
        if construct:
            raise UnusablePattern(
                pattern,
                f"uses {construct}, which RE2 cannot run (Reyn runs schema patterns on RE2, a "
                f"linear-time engine without backreferences or lookaround; RE2 says: {detail})",
            ) from None
        raise UnusablePattern(pattern, f"is not a regular expression RE2 accepts: {detail}") from None


def _construct_in(pattern: str, detail: str) -> str:
    for token, name in _RE2_CONSTRUCTS:
        if token in pattern and token[:3] in detail:
            return name
    if "invalid escape sequence: \\" in detail:
        escape = detail.rsplit(": ", 1)[-1]
        if escape[1:2].isdigit():
            return f"a backreference '{escape}'"
    return ""


# --------------------------------------------------------------------------- schema screening

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


class SchemaRefused(ValueError):
    """``json_schema_validator`` will not build a validator for this schema; ``problems`` say why."""

    def __init__(self, problems: list[SchemaProblem]) -> None:
        listed = "; ".join(p.render() for p in problems[:5])
        more = f" (and {len(problems) - 5} more)" if len(problems) > 5 else ""
        super().__init__(f"schema refused: {listed}{more}")
        self.problems = problems


def _walk(node: Any, ptr: str = "") -> Iterator[tuple[str, Any]]:
    """Every mapping and list in ``node`` (pre-order, in key order) with its pointer; scalars are
    skipped, so no pointer is built for them (this runs for every tool at registration)."""
    stack: list[tuple[str, Any]] = [(ptr, node)]
    while stack:
        here, current = stack.pop()
        yield here, current
        if isinstance(current, Mapping):
            stack.extend(
                (f"{here}/{_escape(str(k))}", v)
                for k, v in reversed(list(current.items()))
                if isinstance(v, dict | list) or isinstance(v, Mapping)
            )
        elif isinstance(current, list):
            stack.extend(
                (f"{here}/{i}", v)
                for i, v in reversed(list(enumerate(current)))
                if isinstance(v, dict | list) or isinstance(v, Mapping)
            )


_SCHEMA_MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
_SCHEMA_VALUED = (
    "items",
    "additionalProperties",
    "not",
    "if",
    "then",
    "else",
    "contains",
    "propertyNames",
    "unevaluatedProperties",
    "unevaluatedItems",
    "additionalItems",
)
_SCHEMA_ARRAYS = ("anyOf", "oneOf", "allOf", "prefixItems")
_APPLICATORS = frozenset(_SCHEMA_MAPS + _SCHEMA_VALUED + _SCHEMA_ARRAYS)


def _is_mapping(value: Any) -> bool:
    return type(value) is dict or isinstance(value, Mapping)


def subschemas(node: Any, ptr: str = "") -> Iterator[tuple[str, Mapping[str, Any]]]:
    """Every (sub)schema object, following the schema-valued keywords only: pre-order, the keywords
    in the order above (``properties``... before ``items``... before ``anyOf``...).

    Iterative, and a node without applicator keywords costs one set intersection: it runs several
    times per tool at registration. A structure nested deeper than the interpreter's recursion limit
    (or containing itself) raises ``RecursionError``, as a recursive walk would."""
    if not _is_mapping(node):
        return
    limit = sys.getrecursionlimit()
    stack: list[tuple[str, Mapping[str, Any], int]] = [(ptr, node, 0)]
    while stack:
        here, current, depth = stack.pop()
        yield here, current
        present = current.keys() & _APPLICATORS
        if not present:
            continue
        if depth >= limit:
            raise RecursionError(f"schema nests more than {limit} levels")
        children: list[tuple[str, Mapping[str, Any], int]] = []
        for key in _SCHEMA_MAPS:
            sub = current[key] if key in present else None
            if sub is not None and _is_mapping(sub):
                children.extend(
                    (f"{here}/{key}/{_escape(str(name))}", child, depth + 1)
                    for name, child in sub.items()
                    if _is_mapping(child)
                )
        for key in _SCHEMA_VALUED:
            child = current[key] if key in present else None
            if child is not None and _is_mapping(child):
                children.append((f"{here}/{key}", child, depth + 1))
        for key in _SCHEMA_ARRAYS:
            seq = current[key] if key in present else None
            if isinstance(seq, list):
                children.extend(
                    (f"{here}/{key}/{i}", child, depth + 1)
                    for i, child in enumerate(seq)
                    if _is_mapping(child)
                )
        stack.extend(reversed(children))


def _local_ref_resolves(root: Mapping[str, Any], ref: str) -> bool:
    """Whether a local ``$ref`` (``#`` or ``#/json/pointer``) names a schema inside ``root``."""
    from urllib.parse import unquote

    fragment = unquote(ref[1:])
    if not fragment:
        return True
    node: Any = root
    for token in fragment[1:].split("/"):
        token = token.replace("~1", "/").replace("~0", "~")
        if isinstance(node, Mapping) and token in node:
            node = node[token]
        elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
            node = node[int(token)]
        else:
            return False
    return isinstance(node, Mapping | bool)


_REFERENCE_KEYWORDS = frozenset({"$ref", "$dynamicRef", "$recursiveRef", "$id", "$schema"})


def reference_problems(schema: Mapping[str, Any]) -> list[SchemaProblem]:
    """Every reference that is not a resolvable local JSON pointer, and every keyword that could make
    a reference resolve elsewhere: ``$dynamicRef``/``$recursiveRef``, an embedded ``$id``, a
    ``$schema`` that is not a JSON Schema dialect URI (or is not at the root)."""
    out: list[SchemaProblem] = []
    for ptr, node in _walk(schema):
        if not isinstance(node, Mapping) or not node.keys() & _REFERENCE_KEYWORDS:
            continue
        ref = node.get("$ref")
        if isinstance(ref, str):
            if not ref.startswith("#"):
                out.append(
                    SchemaProblem(
                        "reference",
                        f"$ref {ref!r} is not local; only '#/...' references are allowed (no remote or file retrieval)",
                        f"{ptr}/$ref",
                    )
                )
            elif ref != "#" and not ref.startswith("#/"):
                out.append(
                    SchemaProblem(
                        "reference",
                        f"$ref {ref!r} uses an anchor; only JSON-pointer references ('#/$defs/...') are allowed",
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
                        f"{key} {node[key]!r} is not supported in tool schemas (use a local '#/$defs/...' $ref)",
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
                        f"$schema {dialect!r} is not a JSON Schema dialect Reyn knows; meta-schemas are never "
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
            found.extend((key, f"{ptr}/patternProperties/{_escape(str(key))}") for key in props)
        for pattern, where in found:
            if not isinstance(pattern, str):
                continue  # the meta-schema check reports it
            try:
                compile_pattern(pattern)
            except UnusablePattern as exc:
                out.append(SchemaProblem("pattern", str(exc), where))
    return out


def metaschema_problems(schema: Mapping[str, Any], limit: int = 5) -> list[SchemaProblem]:
    """Where ``schema`` is not a valid Draft 2020-12 schema (checked against the bundled meta-schema).

    A valid schema is recognised by ``metaschema.is_valid_schema`` in one walk (jsonschema's
    ``$dynamicRef`` resolution costs ~1.7 ms a tool); anything else goes to jsonschema, which decides
    and words the problems. A property test holds the two verdicts equal."""
    from .metaschema import is_valid_schema

    if is_valid_schema(dict(schema)):
        return []
    return jsonschema_metaschema_problems(schema, limit)


def jsonschema_metaschema_problems(schema: Mapping[str, Any], limit: int = 5) -> list[SchemaProblem]:
    """``metaschema_problems`` without the fast path: jsonschema validating against the meta-schema."""
    cls = _validator_class()
    validator = cls(cls.META_SCHEMA, registry=_registry(), format_checker=None)
    try:
        errors = sorted(validator.iter_errors(dict(schema)), key=lambda e: list(map(str, e.absolute_path)))
    except RecursionError:
        return [SchemaProblem("metaschema", "the schema nests too deeply to check")]
    return [
        SchemaProblem(
            "metaschema", f"not a valid JSON Schema 2020-12: {_meta_message(e)}", _pointer(e.absolute_path)
        )
        for e in errors[:limit]
    ]


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
    path = list(error.absolute_path)
    value = error.instance
    names = value if isinstance(value, list) else [value]
    if path and path[-1] == "type" and error.validator == "anyOf":
        unknown = [n for n in names if not (isinstance(n, str) and n in JSON_TYPES)]
        if unknown:
            hints = []
            for name in unknown:
                guess = did_you_mean(name, JSON_TYPES, _TYPE_ALIASES) if isinstance(name, str) else None
                hints.append(f"{show_value(name)}" + (f" (did you mean {guess!r}?)" if guess else ""))
            return (
                f"{', '.join(hints)} {'is not a JSON Schema type' if len(hints) == 1 else 'are not JSON Schema types'}; "
                f"the types are {', '.join(JSON_TYPES)}"
            )
    (problem, _), *_ = _problems_of(error)
    return problem.message


def schema_problems(schema: Any) -> list[SchemaProblem]:
    """Everything that makes ``json_schema_validator`` refuse ``schema`` (empty: it is usable)."""
    if not isinstance(schema, Mapping):
        return [SchemaProblem("metaschema", f"a schema must be a JSON object, got {type(schema).__name__}")]
    if not depth_within(dict(schema), MAX_SCHEMA_NESTING):
        return [SchemaProblem("metaschema", f"the schema nests more than {MAX_SCHEMA_NESTING} levels")]
    problems = reference_problems(schema)
    problems += metaschema_problems(schema)
    problems += pattern_problems(schema)
    return problems


MAX_SCHEMA_NESTING = 64


# --------------------------------------------------------------------------- the factory


def _no_retrieve(uri: str) -> Any:
    raise RemoteRefRefused(uri)


class RemoteRefRefused(Exception):
    """Raised inside the validator when a schema asks for a non-local ``$ref``."""

    def __init__(self, uri: str) -> None:
        super().__init__(f"refused to retrieve non-local $ref {uri!r}: only '#/...' references are allowed")
        self.uri = uri


@lru_cache(maxsize=1)
def _registry() -> Any:
    """A reference registry that never retrieves (jsonschema adds its bundled meta-schemas to it)."""
    from referencing import Registry

    return Registry(retrieve=_no_retrieve)  # type: ignore[call-arg]


def _re2_search(pattern: str, text: str) -> bool:
    return compile_pattern(pattern).search(text) is not None


def _pattern_keyword(validator: Any, pattern: str, instance: Any, schema: Any) -> Iterator[Any]:
    from jsonschema.exceptions import ValidationError

    if validator.is_type(instance, "string") and not _re2_search(pattern, instance):
        yield ValidationError(pattern_message(pattern, instance))


def _required_keyword(validator: Any, required: Any, instance: Any, schema: Any) -> Iterator[Any]:
    # At the missing property's own pointer, as the fast path reports it (jsonschema: at the object).
    from jsonschema.exceptions import ValidationError

    if not validator.is_type(instance, "object"):
        return
    for prop in required:
        if prop not in instance:
            yield ValidationError(MISSING_MESSAGE, path=[prop])


def _pattern_properties_keyword(validator: Any, patterns: Any, instance: Any, schema: Any) -> Iterator[Any]:
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in patterns.items():
        for key, value in instance.items():
            if _re2_search(pattern, key):
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


def _additional_keys(instance: Mapping[str, Any], schema: Mapping[str, Any]) -> list[str]:
    properties = schema.get("properties", {})
    patterns = list(schema.get("patternProperties", {}))
    return [
        key for key in instance if key not in properties and not any(_re2_search(p, key) for p in patterns)
    ]


def _additional_properties_keyword(validator: Any, extra: Any, instance: Any, schema: Any) -> Iterator[Any]:
    # jsonschema's own implementation matches patternProperties with ``re``: the same logic on RE2.
    from jsonschema.exceptions import ValidationError

    if not validator.is_type(instance, "object"):
        return
    extras = _additional_keys(instance, schema)
    if validator.is_type(extra, "object"):
        for key in extras:
            yield from validator.descend(instance[key], extra, path=key)
    elif not extra and extras:
        if "patternProperties" in schema:
            verb = "does" if len(extras) == 1 else "do"
            joined = ", ".join(repr(each) for each in sorted(extras))
            patterns = ", ".join(repr(each) for each in sorted(schema["patternProperties"]))
            yield ValidationError(f"{joined} {verb} not match any of the regexes: {patterns}")
        else:  # at each unexpected property, naming the allowed ones (as the fast path does)
            properties = schema.get("properties", {})
            allowed = [str(k) for k in properties] if isinstance(properties, Mapping) else []
            for key in extras:
                yield ValidationError(unexpected_message(allowed), path=[key])


def _valid(errors: Iterator[Any]) -> bool:
    return next(errors, None) is None


def _evaluated_keys(validator: Any, instance: Mapping[str, Any], schema: Any) -> list[str]:
    # jsonschema's ``find_evaluated_property_keys_by_schema`` with patternProperties matched on RE2.
    # ``$dynamicRef`` is never followed: screened schemas have none.
    if validator.is_type(schema, "boolean"):
        return []
    keys: list[str] = []
    ref = schema.get("$ref")
    if ref is not None:
        resolved = validator._resolver.lookup(ref)
        keys += _evaluated_keys(
            validator.evolve(schema=resolved.contents, _resolver=resolved.resolver),
            instance,
            resolved.contents,
        )
    properties = schema.get("properties")
    if validator.is_type(properties, "object"):
        keys += properties.keys() & instance.keys()
    for keyword in ("additionalProperties", "unevaluatedProperties"):
        sub = schema.get(keyword)
        if sub is not None:
            keys += [k for k, v in instance.items() if _valid(validator.descend(v, sub))]
    for pattern in schema.get("patternProperties", {}):
        keys += [k for k in instance if _re2_search(pattern, k)]
    for key, sub in schema.get("dependentSchemas", {}).items():
        if key in instance:
            keys += _evaluated_keys(validator, instance, sub)
    for keyword in ("allOf", "oneOf", "anyOf"):
        for sub in schema.get(keyword, []):
            if _valid(validator.descend(instance, sub)):
                keys += _evaluated_keys(validator, instance, sub)
    if "if" in schema:
        if validator.evolve(schema=schema["if"]).is_valid(instance):
            keys += _evaluated_keys(validator, instance, schema["if"])
            if "then" in schema:
                keys += _evaluated_keys(validator, instance, schema["then"])
        elif "else" in schema:
            keys += _evaluated_keys(validator, instance, schema["else"])
    return keys


def _unevaluated_properties_keyword(validator: Any, uneval: Any, instance: Any, schema: Any) -> Iterator[Any]:
    from jsonschema.exceptions import ValidationError

    if not validator.is_type(instance, "object"):
        return
    evaluated = set(_evaluated_keys(validator, instance, schema))
    bad = [
        key
        for key in instance
        if key not in evaluated
        and not _valid(validator.descend(instance[key], uneval, path=key, schema_path=key))
    ]
    if bad:
        verb = "was" if len(bad) == 1 else "were"
        if uneval is False:
            listed = ", ".join(repr(k) for k in sorted(bad, key=str))
            yield ValidationError(f"Unevaluated properties are not allowed ({listed} {verb} unexpected)")
        else:
            listed = ", ".join(repr(k) for k in bad)
            yield ValidationError(
                f"Unevaluated properties are not valid under the given schema ({listed} {verb} "
                "unevaluated and invalid)"
            )


@lru_cache(maxsize=1)
def _validator_class() -> Any:
    """Draft 2020-12 with every regex keyword on RE2. Not registered for any ``$schema`` URI."""
    from jsonschema import Draft202012Validator, validators

    return validators.extend(
        Draft202012Validator,
        validators={
            "pattern": _pattern_keyword,
            "required": _required_keyword,
            "patternProperties": _pattern_properties_keyword,
            "additionalProperties": _additional_properties_keyword,
            "unevaluatedProperties": _unevaluated_properties_keyword,
        },
    )


def _compile_jsonschema(schema: Mapping[str, Any]) -> Validator:
    # ``$schema`` is dropped: jsonschema would switch to its stock class for a known dialect URI (and
    # lose the RE2 keywords) when it descends into the root; Reyn validates as 2020-12 anyway.
    body = {k: v for k, v in schema.items() if k != "$schema"}
    validator = _validator_class()(body, registry=_registry(), format_checker=None)

    def validate(args: Any) -> list[ArgumentProblem]:
        try:
            errors = sorted(validator.iter_errors(args), key=lambda e: list(map(str, e.absolute_path)))
        except RecursionError:
            return [
                ArgumentProblem("", f"arguments nest too deeply (the limit is {MAX_ARGUMENT_DEPTH} levels)")
            ]
        except UnusablePattern as exc:
            return [ArgumentProblem("", f"the tool's schema is unusable: {exc}")]
        except Exception as exc:
            # jsonschema wraps referencing's Unresolvable, which wraps Unretrievable, which wraps
            # RemoteRefRefused: walk the chain. Any unresolvable reference fails closed.
            refused = _find_cause(exc, RemoteRefRefused)
            if refused is not None:
                return [ArgumentProblem("", f"the tool's schema is unusable: {refused}")]
            unresolvable = _find_cause(exc, _referencing_errors())
            if unresolvable is not None:
                return [
                    ArgumentProblem(
                        "", f"the tool's schema has a $ref that cannot be resolved: {unresolvable}"
                    )
                ]
            raise
        return _problems(errors)

    return validate


def _pointer(path: Any) -> str:
    return "".join(f"/{_escape(str(p))}" for p in path)


# A problem of the jsonschema path and whether it is about the value's type.
_Found = tuple[ArgumentProblem, bool]


def _problems(errors: Any) -> list[ArgumentProblem]:
    """jsonschema errors in the words of the fast path; where a value has the wrong type, only the
    type problem (the other checks at that pointer would only add noise, and the fast path stops)."""
    found = [f for e in errors for f in _problems_of(e)]
    wrong_type = {problem.pointer for problem, is_type in found if is_type}
    out: list[ArgumentProblem] = []
    for problem, is_type in found:
        if (is_type or problem.pointer not in wrong_type) and problem not in out:
            out.append(problem)
    return out


def _problems_of(error: Any) -> list[_Found]:
    """One jsonschema ``ValidationError`` as problems (see "problem messages" above)."""
    ptr, keyword, value = _pointer(error.absolute_path), error.validator, error.instance
    expected = error.validator_value
    if keyword == "type":
        if ptr == "" and expected == "object" and error.parent is None:
            return [(ArgumentProblem(ptr, not_an_object_message(value)), True)]
        return [(ArgumentProblem(ptr, type_message(expected, value)), True)]
    if keyword == "enum" and isinstance(expected, list):
        return [(ArgumentProblem(ptr, enum_message(expected, value)), False)]
    if keyword == "const":
        return [(ArgumentProblem(ptr, const_message(expected, value)), False)]
    if keyword in _BOUNDS and isinstance(value, int | float):
        return [(ArgumentProblem(ptr, bound_message(keyword, expected, value)), False)]
    if keyword in ("minLength", "maxLength", "minItems", "maxItems") and isinstance(value, str | list):
        return [(ArgumentProblem(ptr, length_message(keyword, expected, value)), False)]
    if keyword in ("anyOf", "oneOf") and error.context:
        return _alternatives(error, ptr, keyword)
    if keyword == "oneOf":  # no context: more than one alternative matched
        message = "matches more than one of the oneOf alternatives; it must match exactly one"
        return [(ArgumentProblem(ptr, message), False)]
    return [(ArgumentProblem(ptr, error.message), False)]


def _branches(error: Any) -> list[list[Any]]:
    """The errors of each alternative of a failed ``anyOf``/``oneOf``; an alternative that is itself
    a failed ``anyOf``/``oneOf`` of the same value contributes its alternatives (none matched either)."""
    groups: dict[Any, list[Any]] = {}
    for sub in error.context:
        groups.setdefault(sub.relative_schema_path[0], []).append(sub)
    out: list[list[Any]] = []
    for errs in groups.values():
        only = errs[0] if len(errs) == 1 else None
        if (
            only is not None
            and only.validator in ("anyOf", "oneOf")
            and only.context
            and not only.relative_path
        ):
            out += _branches(only)
        else:
            out.append(errs)
    return out


def _alternatives(error: Any, ptr: str, keyword: str) -> list[_Found]:
    """Why a value matched none of the ``anyOf``/``oneOf`` alternatives, in words a model can act on.

    If the value fails every alternative on its type or value alone, that is summed up: "expected
    integer or null, got string", "expected one of 'a', 'b' or null, got 'c'". If exactly one
    alternative has the value's type, that alternative's own problems are reported ("must be >= 1,
    got 0"). Otherwise each alternative's first problem is listed."""
    branches = _branches(error)

    def at_root(errs: list[Any], kinds: tuple[str, ...]) -> list[Any]:
        return [e for e in errs if e.validator in kinds and not e.relative_path]

    typed = [errs for errs in branches if not at_root(errs, ("type",))]
    if all(len(at_root(errs, ("type", "enum", "const"))) == len(errs) for errs in branches):
        parts: list[str] = []
        for errs in branches:
            types = at_root(errs, ("type",))
            if types:
                names = [n for e in types for n in _type_names(e.validator_value)]
            elif errs[0].validator == "enum":
                names = [_one_of(errs[0].validator_value)]
            else:
                names = [show_value(errs[0].validator_value)]
            parts += [n for n in names if n not in parts]
        value = error.instance
        got = show_value(value) if typed else json_type_of(value)
        return [(ArgumentProblem(ptr, f"expected {' or '.join(parts)}, got {got}"), not typed)]
    if len(typed) == 1:  # the one alternative of the value's type: what is wrong inside it
        return [f for e in typed[0] for f in _problems_of(e)]
    listed = []
    for i, errs in enumerate(branches):
        first = _problems_of(errs[0])[0][0]
        where = first.pointer[len(ptr) :]
        listed.append(f"#{i}: {where + ': ' if where else ''}{first.message}")
    return [
        (ArgumentProblem(ptr, f"matches none of the {keyword} alternatives ({'; '.join(listed)})"), False)
    ]


def _find_cause(
    exc: BaseException, kind: type[BaseException] | tuple[type[BaseException], ...]
) -> BaseException | None:
    seen: set[int] = set()
    node: BaseException | None = exc
    while node is not None and id(node) not in seen:
        if isinstance(node, kind):
            return node
        seen.add(id(node))
        node = node.__cause__ or node.__context__
    return None


def _referencing_errors() -> tuple[type[BaseException], ...]:
    from referencing.exceptions import NoSuchAnchor, PointerToNowhere, Unresolvable

    return (Unresolvable, PointerToNowhere, NoSuchAnchor)


def compile_validator(schema: Mapping[str, Any]) -> Validator:
    """A validator for an already screened ``schema``: a fast closure when simple, else jsonschema.

    Either way patterns run on RE2 and no reference is ever retrieved: a ``$ref`` to ``http://…`` or
    ``file://…`` is reported as a problem and no request is made. Packs use ``json_schema_validator``.
    """
    return _compile_fast(schema) or _compile_jsonschema(schema)


def json_schema_validator(schema: Mapping[str, Any]) -> Validator:
    """The validator factory for any JSON Schema from outside the registry (an MCP server's input
    schema, a skill's input schema): screen ``schema`` and raise ``SchemaRefused`` naming every
    reference it would need to retrieve, every pattern RE2 cannot run and every meta-schema violation;
    otherwise return ``validate(value) -> list[ArgumentProblem]`` (empty when valid). Draft 2020-12;
    nothing is ever fetched; patterns run in linear time. Validators are cached by schema content."""
    try:
        key = json.dumps(schema, sort_keys=True, separators=(",", ":"))
    except (TypeError, ValueError, RecursionError) as exc:
        raise SchemaRefused(
            [SchemaProblem("metaschema", f"the schema is not JSON data: {exc_text(exc)}")]
        ) from None
    return _screened_validator(key)


@lru_cache(maxsize=256)
def _screened_validator(key: str) -> Validator:
    schema = json.loads(key)
    problems = schema_problems(schema)
    if problems:
        raise SchemaRefused(problems)
    return compile_validator(schema)


def parse_arguments(raw: Any) -> tuple[Any, list[ArgumentProblem]]:
    """Accept a dict, or a JSON string as models send it; report malformed JSON precisely."""
    if isinstance(raw, str | bytes | bytearray):
        text = raw.decode("utf-8", "replace") if isinstance(raw, bytes | bytearray) else raw
        if not text.strip():
            return {}, []
        try:
            value = json.loads(text)
        except RecursionError:
            return None, [_too_deep()]
        except json.JSONDecodeError as exc:
            return None, [
                ArgumentProblem(
                    "",
                    f"arguments are not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno}); "
                    "send a JSON object",
                )
            ]
        except ValueError as exc:  # e.g. an integer longer than Python's int parsing limit
            return None, [
                ArgumentProblem("", f"arguments cannot be read ({exc_text(exc)}); send smaller values")
            ]
        return (value, []) if depth_within(value, MAX_ARGUMENT_DEPTH) else (None, [_too_deep()])
    if raw is None:
        return {}, []
    if isinstance(raw, Mapping) and not isinstance(raw, dict):  # e.g. a MappingProxyType from a host
        raw = dict(raw)
    return (raw, []) if depth_within(raw, MAX_ARGUMENT_DEPTH) else (None, [_too_deep()])


MAX_ARGUMENT_DEPTH = 64


def _too_deep() -> ArgumentProblem:
    return ArgumentProblem(
        "",
        f"arguments nest too deeply (the limit is {MAX_ARGUMENT_DEPTH} levels); send a flatter JSON object",
    )


def depth_within(value: Any, limit: int) -> bool:
    """Whether ``value`` nests at most ``limit`` containers deep; iterative, so it cannot overflow."""
    if not isinstance(value, dict | list):
        return True
    if limit >= 1:  # the common case, a flat object of scalars, without building a stack
        for child in value.values() if isinstance(value, dict) else value:
            if isinstance(child, (dict, list)):  # the tuple form is the faster check
                break
        else:
            return True
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > limit:
            return False
        children = node.values() if isinstance(node, dict) else node
        stack.extend((c, depth + 1) for c in children if isinstance(c, dict | list))
    return True


def optional_non_nullable(schema: Mapping[str, Any]) -> frozenset[str]:
    """Top-level properties that are optional and whose schema does not admit null.

    OpenAI strict mode makes optional properties required-but-nullable, so a model obeying the
    strict schema sends ``null`` for "not given"; the dispatcher drops those before validating
    against the registered schema, and the handler sees its default.
    """
    props = schema.get("properties")
    if not isinstance(props, Mapping):
        return frozenset()
    required = set(schema.get("required") or ())
    return frozenset(k for k, sub in props.items() if k not in required and not _admits_null(sub))


def _admits_null(sub: Any) -> bool:
    if not isinstance(sub, Mapping):
        return sub is not False
    if "enum" in sub:
        return None in sub["enum"]
    if "const" in sub:
        return sub["const"] is None
    for key in ("anyOf", "oneOf"):
        if isinstance(sub.get(key), list):
            return any(_admits_null(s) for s in sub[key])
    typ = sub.get("type")
    if typ is None:
        return "$ref" not in sub and "allOf" not in sub and "not" not in sub
    return typ == "null" or (isinstance(typ, list) and "null" in typ)


def without_null_optionals(args: Any, names: frozenset[str]) -> Any:
    """``args`` without the ``null`` values of the properties in ``names`` (see ``optional_non_nullable``)."""
    if not names or not isinstance(args, dict) or not any(args.get(k, 0) is None for k in names):
        return args
    return {k: v for k, v in args.items() if not (v is None and k in names)}


def problems_from_pydantic(exc: Any, prefix: str = "") -> list[ArgumentProblem]:
    """A pydantic ``ValidationError`` as problems with JSON pointers (under ``prefix``)."""
    out = []
    for err in exc.errors(include_url=False):
        loc = "".join(f"/{_escape(str(p))}" for p in err.get("loc", ()) if p != "__root__")
        out.append(
            ArgumentProblem(prefix + loc, str(err.get("msg", "invalid")).removeprefix("Value error, "))
        )
    return out
