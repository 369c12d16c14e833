"""A call's arguments before validation: parsed (a dict, or a JSON string as models send it), bounded
in size and depth (``size_problems``), JSON data (``unsendable_problems``: no NaN, no Infinity, no
lone surrogate); ``null`` for optional non-nullable properties dropped (OpenAI strict mode)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ..errors import ArgumentProblem, NotJsonNumber
from ..errors import exception_message as exc_text
from ..jsondata import JSON_SCALAR_TYPES, depth_within, parse_json, values_within
from ..unicode_text import unsendable_at
from .messages import json_pointer


def parse_arguments(raw: Any) -> tuple[Any, list[ArgumentProblem]]:
    """Accept a dict, or a JSON string as models send it; report malformed JSON precisely."""
    if type(raw) is str or isinstance(raw, str | bytes | bytearray):
        text = raw if isinstance(raw, str) else raw.decode("utf-8", "replace")
        if len(text) > MAX_ARGUMENT_CHARS:  # before parsing: the size bound comes first
            return None, [
                _bound(
                    (), f"the arguments are {len(text)} characters of JSON; the limit is {MAX_ARGUMENT_CHARS}"
                )
            ]
        if not text.strip():
            return {}, []
        if not values_within(text, MAX_ARGUMENT_VALUES):  # before parsing too: it costs per value
            return None, [too_many_values_problem()]
        try:
            value = parse_json(text)
        except RecursionError:
            return None, [too_deep_problem()]
        except NotJsonNumber as exc:
            return None, [ArgumentProblem("", f"arguments hold a number JSON cannot carry: {exc.message}")]
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
        return (value, []) if depth_within(value, MAX_ARGUMENT_DEPTH) else (None, [too_deep_problem()])
    if raw is None:
        return {}, []
    if isinstance(raw, Mapping) and not isinstance(raw, dict):  # e.g. a MappingProxyType from a host
        raw = dict(raw)
    return (raw, []) if depth_within(raw, MAX_ARGUMENT_DEPTH) else (None, [too_deep_problem()])


MAX_ARGUMENT_DEPTH = 64


def unsendable_problems(value: Any) -> list[ArgumentProblem]:
    """The first leaf of ``value`` that is not JSON data, as one problem at its JSON pointer: a float
    that is not finite (``NaN``, ``Infinity``: RFC 8259 has neither) or a string or member name
    holding a lone surrogate (no UTF-8 text holds one); empty when there is none. The walk is the
    one ``dispatch_tool`` asks of a result (``unicode_text.unsendable_at``), linear in the size.

    JSON text is parsed without such numbers (``parse_json``), but a ``dict`` from a host, or one
    an MCP client's request became (its SDK reads ``NaN`` and ``1e400``), holds whatever it holds:
    the dispatcher asks this of every call's arguments, so a handler gets JSON data only."""
    found = unsendable_at(value)
    if found is None:
        return []
    pointer, what = found
    if what == "number":
        held, fix = "a number JSON cannot carry (NaN or Infinity)", "a number or null"
    else:
        held, fix = "text UTF-8 cannot carry (a lone surrogate)", "valid Unicode text"
    # the pointer is shown before the message (``ArgumentProblem.render``), the root's (``""``) is not
    if what == "key":
        said = f"{'has' if pointer else 'the arguments have'} a member name holding {held}"
    else:
        said = f"{'holds' if pointer else 'the arguments hold'} {held}"
    return [ArgumentProblem(pointer, f"{said}; send {fix}")]


def too_deep_problem() -> ArgumentProblem:
    return ArgumentProblem(
        "",
        f"arguments nest too deeply (the limit is {MAX_ARGUMENT_DEPTH} levels); send a flatter JSON object",
    )


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
    if not names or type(args) is not dict or None not in args.values():
        return args
    if not any(args.get(k, 0) is None for k in names):
        return args
    return {k: v for k, v in args.items() if not (v is None and k in names)}


# --------------------------------------------------------------------------- the size bound

MAX_ARGUMENT_CHARS = 4 * 1024 * 1024
"""Characters of one call's arguments: of its JSON text, or of the strings and keys in its value."""
MAX_ARGUMENT_PROPERTIES = 1_000
"""Properties of any one object in a call's arguments."""
MAX_ARGUMENT_ITEMS = 10_000
"""Items of any one array in a call's arguments."""
MAX_ARGUMENT_NODES = 100_000
"""Values (objects, arrays and scalars) in one call's arguments."""
MAX_ARGUMENT_VALUES = 3 * MAX_ARGUMENT_NODES
"""JSON values of the arguments' text, counted before it is parsed (``jsondata.values_within``: keys
count, an empty container twice — at most three per value, so no text is refused here that the
values bound would take once parsed)."""


def size_problems(value: Any) -> list[ArgumentProblem]:
    """The first bound ``value`` crosses (characters, properties of one object, items of one array,
    values in all, depth), as one problem at the container that crosses it; empty when within.

    Checked before any schema work, in one iterative walk that stops at the first bound crossed, so
    what a validator then does (linear in the size) is bounded whatever the call sends."""
    if type(value) is dict and len(value) <= MAX_ARGUMENT_PROPERTIES:  # the common call: flat
        chars = 0
        for key, item in value.items():
            kind = type(item)
            if kind is str:
                chars += len(item)
            elif kind not in JSON_SCALAR_TYPES:
                break
            if type(key) is str:
                chars += len(key)
        else:
            return [] if chars <= MAX_ARGUMENT_CHARS else [_too_many_chars()]
    chars = nodes = 0
    stack: list[tuple[Any, int, tuple[Any, ...]]] = [(value, 1, ())]
    while stack:
        node, depth, path = stack.pop()
        nodes += 1
        if type(node) is str:
            chars += len(node)
        elif isinstance(node, dict | list | tuple):
            if depth > MAX_ARGUMENT_DEPTH:
                return [too_deep_problem()]
            if isinstance(node, dict):
                if len(node) > MAX_ARGUMENT_PROPERTIES:
                    return [
                        _bound(
                            path,
                            f"this object has {len(node)} properties; the limit is {MAX_ARGUMENT_PROPERTIES}",
                        )
                    ]
                for key, item in node.items():
                    chars += len(key) if type(key) is str else 0
                    stack.append((item, depth + 1, (*path, key)))
            else:
                if len(node) > MAX_ARGUMENT_ITEMS:
                    return [
                        _bound(path, f"this array has {len(node)} items; the limit is {MAX_ARGUMENT_ITEMS}")
                    ]
                stack.extend((item, depth + 1, (*path, i)) for i, item in enumerate(node))
        if nodes > MAX_ARGUMENT_NODES:
            return [too_many_values_problem()]
        if chars > MAX_ARGUMENT_CHARS:
            return [_too_many_chars()]
    return []


def too_many_values_problem() -> ArgumentProblem:
    return _bound((), f"the arguments hold more than {MAX_ARGUMENT_NODES} values; send less at once")


def _bound(path: tuple[Any, ...], what: str) -> ArgumentProblem:
    return ArgumentProblem(json_pointer(path), what)


def _too_many_chars() -> ArgumentProblem:
    return _bound((), f"the arguments hold more than {MAX_ARGUMENT_CHARS} characters; send less")
