"""A call's arguments before validation: parsed (a dict, or a JSON string as models send it) and bounded
in depth; ``null`` for optional non-nullable properties dropped (OpenAI strict mode); pydantic errors
as problems with pointers."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ..errors import ArgumentProblem
from ..errors import exception_message as exc_text
from ..jsondata import depth_within
from .messages import escape_token


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
        loc = "".join(f"/{escape_token(str(p))}" for p in err.get("loc", ()) if p != "__root__")
        out.append(
            ArgumentProblem(prefix + loc, str(err.get("msg", "invalid")).removeprefix("Value error, "))
        )
    return out
