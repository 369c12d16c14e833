"""The wording of argument problems: short, saying what was expected and what came, so a model can
correct the call. The one validator's failures are put in these words by ``errors``."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from ..errors import ArgumentProblem

Validator = Callable[[Any], list[ArgumentProblem]]
"""What ``json_schema_validator`` returns: ``validate(value) -> problems`` (empty when valid)."""


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


def escape_token(key: str) -> str:
    """``key`` as one JSON-pointer token (``~`` and ``/`` escaped)."""
    return key.replace("~", "~0").replace("/", "~1")


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


def json_pointer(path: Any) -> str:
    """A JSON pointer from a sequence of keys and indexes."""
    return "".join(f"/{escape_token(str(p))}" for p in path)


# --------------------------------------------------------------------------- the validator's errors

# A problem and whether it is about the value's type (then the other problems at its pointer are noise).
_Found = tuple[ArgumentProblem, bool]

MAX_PROBLEMS = 20
"""At most this many problems are listed for one call; one more line counts the rest."""


def problems_of(errors: Iterable[Any], schema: Mapping[str, Any], value: Any = None) -> list[ArgumentProblem]:
    """The one validator's errors (``jsonschema_rs.ValidationError``, duck-typed) as problems with JSON
    pointers; where a value has the wrong type, only the type problem. In the order of the values in
    ``value`` (a missing required property first), then in the order the schema states its rules. At
    most ``MAX_PROBLEMS`` are listed, then one problem at ``""`` counting the rest: the answer's size is
    bounded whatever the call's. Linear in the number of errors and the size of ``value``."""
    ordered = sorted(errors, key=lambda e: _order(schema, e))
    found = [f for e in ordered for f in _problems_of_error(e, schema, top=True)]
    wrong_type = {problem.pointer for problem, is_type in found if is_type}
    seen: set[ArgumentProblem] = set()
    out: list[ArgumentProblem] = []
    for problem, is_type in found:
        if (is_type or problem.pointer not in wrong_type) and problem not in seen:
            seen.add(problem)
            out.append(problem)
    positions = _positions(value)
    out.sort(key=lambda p: positions.get(p.pointer, -1))
    return capped(out)


def capped(problems: list[ArgumentProblem]) -> list[ArgumentProblem]:
    """``problems``, at most ``MAX_PROBLEMS`` of them, then one problem at ``""`` counting the rest:
    every validator's answer is bounded in size whatever the call's."""
    if len(problems) <= MAX_PROBLEMS:
        return problems
    rest = len(problems) - MAX_PROBLEMS
    listed = f"only the first {MAX_PROBLEMS} are listed"
    return [*problems[:MAX_PROBLEMS], ArgumentProblem("", f"and {rest} more problems ({listed})")]


def _positions(value: Any) -> dict[str, int]:
    """Every pointer into ``value`` with its pre-order position (the order a reader meets them)."""
    positions: dict[str, int] = {}
    stack: list[tuple[str, Any]] = [("", value)]
    while stack:
        ptr, node = stack.pop()
        positions[ptr] = len(positions)
        if isinstance(node, dict):
            stack.extend((f"{ptr}/{escape_token(str(k))}", v) for k, v in reversed(list(node.items())))
        elif isinstance(node, list | tuple):
            stack.extend((f"{ptr}/{i}", v) for i, v in reversed(list(enumerate(node))))
    return positions


def describe_error(error: Any) -> str:
    """One error of the validator library in these words (the first problem it makes)."""
    found = _problems_of_error(error, {})
    return found[0][0].message if found else str(error.message)


def _kind(error: Any) -> str:
    return type(error.kind).__name__


def _order(schema: Mapping[str, Any], error: Any) -> list[int]:
    """Where the failed keyword is written in ``schema`` (each step's position among its siblings):
    problems come in the order the schema states its rules, whatever order the library checks them."""
    order: list[int] = []
    node: Any = schema
    for step in error.schema_path:
        if isinstance(node, Mapping) and step in node:
            order.append(list(node).index(step))
            node = node[step]
        elif isinstance(node, list) and isinstance(step, int) and 0 <= step < len(node):
            order.append(step)
            node = node[step]
        else:
            break
    return order


def _types_of(error: Any, schema: Mapping[str, Any]) -> list[Any]:
    """The types a ``type`` error expected, in the order the schema writes them."""
    node = _node_of(schema, error.schema_path)
    written = node.get("type") if isinstance(node, Mapping) else None
    if isinstance(written, str):
        return [written]
    return list(written) if isinstance(written, list) else list(error.kind.types)


def _node_of(schema: Mapping[str, Any], schema_path: Any) -> Any:
    """The schema object holding the failed keyword (``schema_path`` is its location in ``schema``)."""
    node: Any = schema
    for step in list(schema_path)[:-1]:
        try:
            node = node[step]
        except (KeyError, IndexError, TypeError):
            return None
    return node


_BOUND_KINDS = {
    "Minimum": "minimum",
    "Maximum": "maximum",
    "ExclusiveMinimum": "exclusiveMinimum",
    "ExclusiveMaximum": "exclusiveMaximum",
}
_LENGTH_KINDS = {
    "MinLength": "minLength",
    "MaxLength": "maxLength",
    "MinItems": "minItems",
    "MaxItems": "maxItems",
}


def _problems_of_error(error: Any, schema: Mapping[str, Any], top: bool = False) -> list[_Found]:
    ptr, kind, value = json_pointer(error.instance_path), _kind(error), error.instance
    k = error.kind
    if kind == "Type":
        types = _types_of(error, schema)
        if top and ptr == "" and types == ["object"]:
            return [(ArgumentProblem(ptr, not_an_object_message(value)), True)]
        return [(ArgumentProblem(ptr, type_message(types[0] if len(types) == 1 else types, value)), True)]
    if kind == "Required":
        return [(ArgumentProblem(f"{ptr}/{escape_token(str(k.property))}", MISSING_MESSAGE), False)]
    if kind == "AdditionalProperties":
        return _unexpected(ptr, list(k.unexpected), _node_of(schema, error.schema_path))
    if kind == "Enum":
        return [(ArgumentProblem(ptr, enum_message(list(k.options), value)), False)]
    if kind == "Constant":
        return [(ArgumentProblem(ptr, const_message(k.expected_value, value)), False)]
    if kind in _BOUND_KINDS and isinstance(value, int | float):
        return [(ArgumentProblem(ptr, bound_message(_BOUND_KINDS[kind], k.limit, value)), False)]
    if kind in _LENGTH_KINDS and isinstance(value, str | list | tuple):
        return [(ArgumentProblem(ptr, length_message(_LENGTH_KINDS[kind], k.limit, value)), False)]
    if kind == "Pattern":
        return [(ArgumentProblem(ptr, pattern_message(k.pattern, value)), False)]
    if kind in ("AnyOf", "OneOfNotValid"):
        return _alternatives(error, ptr, "anyOf" if kind == "AnyOf" else "oneOf", schema)
    if kind == "OneOfMultipleValid":
        message = "matches more than one of the oneOf alternatives; it must match exactly one"
        return [(ArgumentProblem(ptr, message), False)]
    if kind == "FalseSchema":
        return [(ArgumentProblem(ptr, "no value is allowed here"), False)]
    if kind == "UniqueItems":
        return [(ArgumentProblem(ptr, f"{show_value(value)} has non-unique elements"), False)]
    return [(ArgumentProblem(ptr, str(error.message)), False)]


def _unexpected(ptr: str, keys: list[Any], node: Any) -> list[_Found]:
    """Unexpected properties: each at its own pointer naming the allowed ones, or (with
    ``patternProperties``) one problem naming the patterns they do not match."""
    if isinstance(node, Mapping) and isinstance(node.get("patternProperties"), Mapping):
        verb = "does" if len(keys) == 1 else "do"
        joined = ", ".join(repr(each) for each in sorted(map(str, keys)))
        patterns = ", ".join(repr(each) for each in sorted(node["patternProperties"]))
        return [(ArgumentProblem(ptr, f"{joined} {verb} not match any of the regexes: {patterns}"), False)]
    properties = node.get("properties", {}) if isinstance(node, Mapping) else {}
    allowed = [str(name) for name in properties] if isinstance(properties, Mapping) else []
    message = unexpected_message(allowed)
    return [(ArgumentProblem(f"{ptr}/{escape_token(str(key))}", message), False) for key in keys]


def _branches(error: Any, schema: Mapping[str, Any]) -> list[list[Any]]:
    """The errors of each alternative of a failed ``anyOf``/``oneOf``; an alternative that is itself
    a failed ``anyOf``/``oneOf`` of the same value contributes its alternatives (none matched either).
    An alternative without errors is left out (it cannot be why the value failed)."""
    out: list[list[Any]] = []
    for errs in error.kind.context:
        errs = sorted(errs, key=lambda e: _order(schema, e))
        if not errs:
            continue
        only = errs[0] if len(errs) == 1 else None
        if (
            only is not None
            and _kind(only) in ("AnyOf", "OneOfNotValid")
            and list(only.instance_path) == list(error.instance_path)
        ):
            out += _branches(only, schema)
        else:
            out.append(errs)
    return out


def _alternatives(error: Any, ptr: str, keyword: str, schema: Mapping[str, Any]) -> list[_Found]:
    """Why a value matched none of the ``anyOf``/``oneOf`` alternatives, in words a model can act on.

    If the value fails every alternative on its type or value alone, that is summed up: "expected
    integer or null, got string", "expected one of 'a', 'b' or null, got 'c'". If exactly one
    alternative has the value's type, that alternative's own problems are reported ("must be >= 1,
    got 0"). Otherwise each alternative's first problem is listed."""
    branches = _branches(error, schema)
    if not branches:  # e.g. every alternative is ``false``: nothing more specific to say
        return [(ArgumentProblem(ptr, f"matches none of the {keyword} alternatives"), False)]
    here = list(error.instance_path)

    def at_root(errs: list[Any], kinds: tuple[str, ...]) -> list[Any]:
        return [e for e in errs if _kind(e) in kinds and list(e.instance_path) == here]

    typed = [errs for errs in branches if not at_root(errs, ("Type",))]
    if all(len(at_root(errs, ("Type", "Enum", "Constant"))) == len(errs) for errs in branches):
        parts: list[str] = []
        for errs in branches:
            types = at_root(errs, ("Type",))
            if types:
                names = [str(n) for e in types for n in _types_of(e, schema)]
            elif _kind(errs[0]) == "Enum":
                names = [_one_of(list(errs[0].kind.options))]
            else:
                names = [show_value(errs[0].kind.expected_value)]
            parts += [n for n in names if n not in parts]
        got = show_value(error.instance) if typed else json_type_of(error.instance)
        return [(ArgumentProblem(ptr, f"expected {' or '.join(parts)}, got {got}"), not typed)]
    if len(typed) == 1:  # the one alternative of the value's type: what is wrong inside it
        return [f for e in typed[0] for f in _problems_of_error(e, schema)]
    listed = []
    for i, errs in enumerate(branches):
        first = _problems_of_error(errs[0], schema)[0][0]
        where = first.pointer[len(ptr) :]
        listed.append(f"#{i}: {where + ': ' if where else ''}{first.message}")
    return [
        (ArgumentProblem(ptr, f"matches none of the {keyword} alternatives ({'; '.join(listed)})"), False)
    ]
