"""A pydantic ``ValidationError`` as the problems a model reads: JSON pointers into the call's own
value, in the words the JSON-Schema validator uses for the same mistakes (a missing property, an
unexpected one naming the allowed ones, a wrong type, a bound, a length, a pattern), capped like
every answer (``capped``). This is how a model tool's one validator (its pydantic model) words a
refusal; nothing else words it."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ..errors import ArgumentProblem
from .messages import (
    MISSING_MESSAGE,
    bound_message,
    const_message,
    enum_message,
    escape_token,
    json_pointer,
    json_type_of,
    length_message,
    pattern_message,
    show_value,
    type_message,
    unexpected_message,
)
from .messages import capped as cap

# pydantic's error type prefix -> the JSON type it expected ("int_parsing" -> integer).
_TYPES = {
    "int": "integer",
    "float": "number",
    "decimal": "number",
    "string": "string",
    "bool": "boolean",
    "list": "array",
    "tuple": "array",
    "set": "array",
    "frozen_set": "array",
    "iterable": "array",
    "dict": "object",
    "mapping": "object",
    "model": "object",
    "model_attributes": "object",
    "dataclass": "object",
    "none": "null",
}
_BOUNDS = {
    "greater_than_equal": ("minimum", "ge"),
    "less_than_equal": ("maximum", "le"),
    "greater_than": ("exclusiveMinimum", "gt"),
    "less_than": ("exclusiveMaximum", "lt"),
}
_LENGTHS = {
    "string_too_short": ("minLength", "min_length"),
    "string_too_long": ("maxLength", "max_length"),
    "too_short": ("minItems", "min_length"),
    "too_long": ("maxItems", "max_length"),
}


def _data_path(loc: tuple[Any, ...], value: Any, missing: bool) -> tuple[Any, ...]:
    """The part of pydantic's ``loc`` that is a path into ``value``: the tags pydantic adds for the
    member of a union it tried (``int``, ``literal['a']``, a model's name) are not keys of the value
    there, so they are left out; a missing property (the last part) is kept."""
    path: list[Any] = []
    node = value
    for i, part in enumerate(loc):
        if isinstance(node, Mapping) and part in node:
            node = node[part]
        elif isinstance(node, list | tuple) and type(part) is int and -len(node) <= part < len(node):
            node = node[part]
        elif missing and i == len(loc) - 1:
            pass
        else:
            continue  # a union member's tag
        path.append(part)
    return tuple(path)


def _node_at(
    schema: Mapping[str, Any], path: tuple[Any, ...], *, branch: bool = True
) -> Mapping[str, Any] | None:
    """The object schema of ``schema`` at the data ``path`` (through ``$ref`` to ``$defs``, array
    items and the first ``anyOf`` branch that is an object), or None where it cannot be told."""
    defs = schema.get("$defs") or {}
    node: Any = schema

    def resolve(n: Any, branch: bool = True) -> Any:
        for _ in range(8):
            if isinstance(n, Mapping) and isinstance(n.get("$ref"), str) and n["$ref"].startswith("#/$defs/"):
                n = defs.get(n["$ref"].removeprefix("#/$defs/"))
            elif branch and isinstance(n, Mapping) and isinstance(n.get("anyOf"), list):
                n = next((b for b in n["anyOf"] if isinstance(b, Mapping) and b.get("type") != "null"), None)
            else:
                break
        return n

    for part in path:
        node = resolve(node)
        if not isinstance(node, Mapping):
            return None
        if type(part) is int:
            node = node.get("items")
        else:
            node = (node.get("properties") or {}).get(part)
    node = resolve(node, branch)
    return node if isinstance(node, Mapping) else None


def _types_at(schema: Mapping[str, Any], path: tuple[Any, ...]) -> list[str]:
    """The JSON types the schema allows at ``path`` (its ``type``, or its ``anyOf`` branches' types),
    in the order it writes them; empty when it does not say."""
    node = _node_at(schema, path, branch=False)
    if node is None:
        return []
    any_of = node.get("anyOf")
    branches: list[Any] = any_of if isinstance(any_of, list) else [node]
    names: list[str] = []
    defs = {"$defs": schema.get("$defs") or {}}
    for branch in branches:
        sub = _node_at({**defs, **branch}, (), branch=False) if isinstance(branch, Mapping) else None
        kind = sub.get("type") if sub is not None else None
        for name in [kind] if isinstance(kind, str) else kind if isinstance(kind, list) else []:
            if isinstance(name, str) and name not in names:
                names.append(name)
    return names


def _message(err: Mapping[str, Any], schema: Mapping[str, Any], path: tuple[Any, ...]) -> tuple[str, str]:
    """The problem's words, and the JSON type it expected when it is a type problem ('' else)."""
    kind = str(err.get("type", ""))
    value = err.get("input")
    ctx = err.get("ctx") or {}
    if kind == "missing":
        return MISSING_MESSAGE, ""
    if kind == "extra_forbidden":
        parent = _node_at(schema, path[:-1])
        if parent is not None and isinstance(parent.get("properties"), Mapping):
            return unexpected_message(parent["properties"]), ""
        return "unexpected property", ""
    if kind.endswith(("_type", "_parsing")) or kind == "int_from_float":
        expected = _TYPES.get(kind.rsplit("_", 1)[0] if kind != "int_from_float" else "int")
        if expected is not None:
            declared = _types_at(schema, path)
            names = declared if expected in declared else [expected]
            return type_message(names, value), " or ".join(names)
    if kind in _BOUNDS and _BOUNDS[kind][1] in ctx:
        keyword, key = _BOUNDS[kind]
        return bound_message(keyword, ctx[key], value), ""
    if kind in _LENGTHS and _LENGTHS[kind][1] in ctx and hasattr(value, "__len__"):
        keyword, key = _LENGTHS[kind]
        return length_message(keyword, ctx[key], value), ""
    if kind == "string_pattern_mismatch" and "pattern" in ctx:
        return pattern_message(ctx["pattern"], value), ""
    if kind in ("literal_error", "enum"):
        node = _node_at(schema, path)
        if node is not None and isinstance(node.get("enum"), list):
            return enum_message(node["enum"], value), ""
        if node is not None and "const" in node:
            return const_message(node["const"], value), ""
        if "expected" in ctx:
            return f"expected {ctx['expected']}, got {show_value(value)}", ""
    return str(err.get("msg", "invalid")).removeprefix("Value error, "), ""


def unexpected_problems(keys: Iterable[Any], schema: Mapping[str, Any]) -> list[ArgumentProblem]:
    """Top-level ``keys`` the schema's closed root does not list, each at its own pointer."""
    message = unexpected_message(schema.get("properties") or {})
    return [ArgumentProblem(f"/{escape_token(str(key))}", message) for key in keys]


def problems_from_pydantic(
    exc: Any,
    value: Any = None,
    schema: Mapping[str, Any] | None = None,
    *,
    prefix: str = "",
    capped: bool = True,
) -> list[ArgumentProblem]:
    """``exc`` (a pydantic ``ValidationError`` about ``value``, the model's schema being ``schema``)
    as problems with JSON pointers under ``prefix``, in the order pydantic found them. Several type
    problems at one pointer (a union's members) become one "expected A or B, got C"; at most
    ``MAX_PROBLEMS`` are listed, then one counting the rest."""
    found: list[tuple[str, str, str, Any]] = []  # pointer, message, expected type, the value
    for err in exc.errors(include_url=False):
        loc = tuple(p for p in err.get("loc", ()) if p != "__root__")
        path = _data_path(loc, value, err.get("type") == "missing") if value is not None else loc
        pointer = prefix + json_pointer(path)
        message, expected = _message(err, schema or {}, path)
        found.append((pointer, message, expected, err.get("input")))
    typed: dict[str, list[str]] = {}
    for pointer, _, expected, _ in found:
        if expected and expected not in typed.setdefault(pointer, []):
            typed[pointer].append(expected)
    out: list[ArgumentProblem] = []
    seen: set[ArgumentProblem] = set()
    for pointer, message, expected, given in found:
        if typed.get(pointer):
            if not expected:
                continue  # a wrong type at this pointer: its other problems are noise
            message = f"expected {' or '.join(typed[pointer])}, got {json_type_of(given)}"
        problem = ArgumentProblem(pointer, message)
        if problem not in seen:
            seen.add(problem)
            out.append(problem)
    return cap(out) if capped else out
