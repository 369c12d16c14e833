"""What a tool returns, as JSON Schema: derived once from the handler's return annotation.

``@tool`` stores it as ``ToolDefinition.returns``; surfaces that can tell a client what to expect
show it (MCP's ``outputSchema`` with ``structuredContent``). The schema is the one pydantic gives
for serialisation (``TypeAdapter(annotation).json_schema(mode="serialization")``), the same
``model_dump(mode="json")`` form the dispatcher sends, with pydantic's ``title`` noise removed. A
function without a return annotation, or annotated ``Any``, ``None`` or a type with no JSON Schema,
has none: saying nothing is better than a schema that does not hold.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable, Mapping
from typing import Any

from .provider_schemas import copy_json

__all__ = ["output_schema", "return_schema"]


def return_schema(fn: Callable[..., Any]) -> dict[str, Any] | None:
    """The JSON Schema of ``fn``'s result from its return annotation, or None (see the module)."""
    try:
        annotation = typing.get_type_hints(fn).get("return", inspect.Signature.empty)
    except Exception:  # an annotation that cannot be evaluated: say nothing rather than fail the tool
        return None
    if annotation in (inspect.Signature.empty, Any, None, type(None), object):
        return None
    from pydantic import TypeAdapter

    try:
        schema = TypeAdapter(annotation).json_schema(mode="serialization")
    except Exception:  # no JSON Schema for this type (a class pydantic cannot describe)
        return None
    _drop_titles(schema)
    return schema if isinstance(schema, dict) and schema else None


def _drop_titles(node: Any) -> None:
    """Remove pydantic's generated ``title`` keywords in every subschema (noise for a client), but
    never a property that happens to be called ``title``."""
    if isinstance(node, dict):
        if isinstance(node.get("title"), str):
            del node["title"]
        for key, value in node.items():
            if key in ("properties", "$defs", "patternProperties"):
                for sub in value.values() if isinstance(value, dict) else ():
                    _drop_titles(sub)
            elif key not in ("enum", "const", "default", "examples"):
                _drop_titles(value)
    elif isinstance(node, list):
        for item in node:
            _drop_titles(item)


def output_schema(returns: Mapping[str, Any]) -> tuple[dict[str, Any], bool]:
    """``returns`` as a schema whose root is an object, and whether the result is wrapped.

    Clients of structured results (MCP's ``outputSchema``) require an object root. A result schema
    that is already one is kept as it is; any other (a list, a string, a number, a union) becomes
    ``{"type": "object", "properties": {"result": <returns>}, "required": ["result"]}`` and the value
    is sent as ``{"result": value}`` — the convention FastMCP uses. ``$defs`` move to the new root,
    so local references keep resolving. The answer is a copy that shares nothing with ``returns``
    (a client may change what it is served; the registry's definition, and so its digest, stay).
    """
    schema = copy_json(returns)
    if schema.get("type") == "object":
        return schema, False
    defs = schema.pop("$defs", None)
    wrapped: dict[str, Any] = {"type": "object", "properties": {"result": schema}, "required": ["result"]}
    if defs is not None:
        wrapped["$defs"] = defs
    return wrapped, True
