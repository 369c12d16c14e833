"""The wording of argument problems: one for both validators (the fast closure and the jsonschema path),
short, saying what was expected and what came, so a model can correct the call. A test holds the two
paths to the same messages wherever both apply. jsonschema's errors are translated here too (duck-typed:
this module imports nothing of jsonschema)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from ..errors import ArgumentProblem

Validator = Callable[[Any], list[ArgumentProblem]]


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


# --------------------------------------------------------------------------- jsonschema errors in these words


def json_pointer(path: Any) -> str:
    return "".join(f"/{escape_token(str(p))}" for p in path)


# A problem of the jsonschema path and whether it is about the value's type.
_Found = tuple[ArgumentProblem, bool]


def jsonschema_problems(errors: Any) -> list[ArgumentProblem]:
    """jsonschema errors in the words of the fast path; where a value has the wrong type, only the
    type problem (the other checks at that pointer would only add noise, and the fast path stops)."""
    found = [f for e in errors for f in problems_of_error(e)]
    wrong_type = {problem.pointer for problem, is_type in found if is_type}
    out: list[ArgumentProblem] = []
    for problem, is_type in found:
        if (is_type or problem.pointer not in wrong_type) and problem not in out:
            out.append(problem)
    return out


def problems_of_error(error: Any) -> list[_Found]:
    """One jsonschema ``ValidationError`` as problems (see "problem messages" above)."""
    ptr, keyword, value = json_pointer(error.absolute_path), error.validator, error.instance
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
        return [f for e in typed[0] for f in problems_of_error(e)]
    listed = []
    for i, errs in enumerate(branches):
        first = problems_of_error(errs[0])[0][0]
        where = first.pointer[len(ptr) :]
        listed.append(f"#{i}: {where + ': ' if where else ''}{first.message}")
    return [
        (ArgumentProblem(ptr, f"matches none of the {keyword} alternatives ({'; '.join(listed)})"), False)
    ]
