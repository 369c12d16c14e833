"""The compiled closure for flat schemas: an object of scalar / enum / array-of-scalar properties (what
most tools have) is checked by a small closure deciding exactly what JSON Schema would, in the words of
``messages``; anything else returns None and goes to the jsonschema path."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

from ..errors import ArgumentProblem
from .messages import (
    MISSING_MESSAGE,
    Validator,
    bound_message,
    const_message,
    enum_message,
    escape_token,
    json_type_of,
    length_message,
    not_an_object_message,
    pattern_message,
    type_message,
    unexpected_message,
)
from .patterns import UnusablePattern, compile_pattern

_SCALAR_TYPES = {"string", "integer", "number", "boolean", "null"}
# ``type`` and the annotations (no effect on validation), allowed on every property the fast path takes.
_TYPE_AND_ANNOTATIONS = frozenset({"type", "description", "title", "default", "examples"})
# Keywords of a scalar property whose check is a plain comparison (the same in every engine and in
# pydantic's strict mode): annotations, enum/const and the numeric and length bounds. The fast path
# here adds ``pattern``; the pydantic fast path (``dispatch.arguments``) adds ``anyOf``.
SCALAR_KEYWORDS = _TYPE_AND_ANNOTATIONS | {
    "enum",
    "const",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "minLength",
    "maxLength",
}
_FAST_KEYWORDS = SCALAR_KEYWORDS | {"pattern"}
_FAST_ARRAY_KEYWORDS = _TYPE_AND_ANNOTATIONS | {"items", "minItems", "maxItems"}


def _type_ok(value: Any, expected: str | list[str]) -> bool:
    actual = json_type_of(value)
    names = [expected] if isinstance(expected, str) else expected
    return actual in names or (actual == "integer" and "number" in names)


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


def compile_fast(schema: Mapping[str, Any]) -> Validator | None:
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
                out.append(ArgumentProblem(f"/{escape_token(key)}", MISSING_MESSAGE))
        for key, value in args.items():
            checker = checkers.get(key)
            if checker is not None:
                checker(value, f"/{escape_token(key)}", out)
            elif not extra:
                out.append(ArgumentProblem(f"/{escape_token(key)}", unexpected_message(checkers)))
        return out

    return validate
