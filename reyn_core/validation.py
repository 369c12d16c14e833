"""Compiled argument validators: one per tool, cached, never fetching a remote or file ``$ref``.

Simple flat schemas (an object of scalar / enum / array-of-scalar properties, which is what most tools
have) compile to a small closure that checks exactly what JSON Schema would; anything else goes to
``jsonschema``'s Draft 2020-12 validator with a reference registry that refuses every retrieval.
Either way the problems come back as JSON pointers. ``jsonschema`` is imported only when needed.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from typing import Any

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

    def check(value: Any, ptr: str, out: list[ArgumentProblem]) -> None:
        if typ is not None and not _type_ok(value, typ):
            want = typ if isinstance(typ, str) else " or ".join(typ)
            out.append(ArgumentProblem(ptr, f"expected {want}, got {json_type_of(value)}"))
            return
        if enum is not None and not any(_json_equal(value, e) for e in enum):
            out.append(ArgumentProblem(ptr, f"{value!r} is not one of {list(enum)!r}"))
        if has_const and not _json_equal(value, const):
            out.append(ArgumentProblem(ptr, f"must be {const!r}"))
        if isinstance(value, int | float) and not isinstance(value, bool):
            if isinstance(value, float) and not math.isfinite(value):
                out.append(ArgumentProblem(ptr, "must be a finite number"))
            if lo is not None and value < lo:
                out.append(ArgumentProblem(ptr, f"must be >= {lo}"))
            if hi is not None and value > hi:
                out.append(ArgumentProblem(ptr, f"must be <= {hi}"))
            if xlo is not None and value <= xlo:
                out.append(ArgumentProblem(ptr, f"must be > {xlo}"))
            if xhi is not None and value >= xhi:
                out.append(ArgumentProblem(ptr, f"must be < {xhi}"))
        if isinstance(value, str):
            if min_len is not None and len(value) < min_len:
                out.append(ArgumentProblem(ptr, f"must be at least {min_len} characters"))
            if max_len is not None and len(value) > max_len:
                out.append(ArgumentProblem(ptr, f"must be at most {max_len} characters"))

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
                out.append(ArgumentProblem(ptr, f"expected array, got {json_type_of(value)}"))
                return
            if min_items is not None and len(value) < min_items:
                out.append(ArgumentProblem(ptr, f"must have at least {min_items} items"))
            if max_items is not None and len(value) > max_items:
                out.append(ArgumentProblem(ptr, f"must have at most {max_items} items"))
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
            return [ArgumentProblem("", f"arguments must be a JSON object, got {json_type_of(args)}")]
        out: list[ArgumentProblem] = []
        for key in required:
            if key not in args:
                out.append(ArgumentProblem(f"/{_escape(key)}", "is a required property and is missing"))
        for key, value in args.items():
            checker = checkers.get(key)
            if checker is not None:
                checker(value, f"/{_escape(key)}", out)
            elif not extra:
                allowed_keys = ", ".join(sorted(checkers)) or "none"
                out.append(
                    ArgumentProblem(f"/{_escape(key)}", f"unexpected property (allowed: {allowed_keys})")
                )
        return out

    return validate


def _no_retrieve(uri: str) -> Any:
    raise RemoteRefRefused(uri)


class RemoteRefRefused(Exception):
    """Raised inside the validator when a schema asks for a non-local ``$ref``."""

    def __init__(self, uri: str) -> None:
        super().__init__(f"refused to retrieve non-local $ref {uri!r}: only '#/...' references are allowed")
        self.uri = uri


def _compile_jsonschema(schema: Mapping[str, Any]) -> Validator:
    from jsonschema import Draft202012Validator
    from referencing import Registry

    registry: Registry[Any] = Registry(retrieve=_no_retrieve)  # type: ignore[call-arg]
    validator = Draft202012Validator(dict(schema), registry=registry, format_checker=None)

    def validate(args: Any) -> list[ArgumentProblem]:
        try:
            errors = sorted(validator.iter_errors(args), key=lambda e: list(e.absolute_path))
        except RecursionError:
            return [
                ArgumentProblem("", f"arguments nest too deeply (the limit is {MAX_ARGUMENT_DEPTH} levels)")
            ]
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
        return [
            ArgumentProblem("".join(f"/{_escape(str(p))}" for p in e.absolute_path), e.message)
            for e in errors
        ]

    return validate


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
    """A validator for ``schema``: a fast closure when the schema is simple, else jsonschema.

    The jsonschema path uses a reference registry with no retrieval: a ``$ref`` to
    ``http://…`` or ``file://…`` is reported as a problem and no request is made.
    """
    return _compile_fast(schema) or _compile_jsonschema(schema)


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
