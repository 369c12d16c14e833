"""``reyn tools call NAME KEY=VALUE ...``: the pairs read into a JSON object per the tool's schema.

Kept by hand rather than on an argparse type or a library: what a value means depends on the tool's
schema (``path=5`` is the text ``"5"`` for a string parameter, the number 5 for an integer one), which
argparse and the KEY=VALUE helpers of other CLI libraries do not know.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..jsondata import parse_json

if TYPE_CHECKING:
    from ..registry import ToolRegistry


def parameters_of(registry: ToolRegistry, name: str) -> Mapping[str, Any]:
    """The tool's parameters schema, or an empty one when no tool has that name (the dispatcher
    then answers ``not_found`` as for ``--args``)."""
    tool = registry.get(name) if name in registry else None
    return tool.parameters if tool is not None else {}


def _types(schema: Any) -> set[str]:
    """The JSON types a property schema admits (``type``, or the alternatives of anyOf/oneOf)."""
    if not isinstance(schema, Mapping):
        return set()
    declared = schema.get("type")
    if isinstance(declared, str):
        return {declared}
    if isinstance(declared, list):
        return {t for t in declared if isinstance(t, str)}
    found: set[str] = set()
    for key in ("anyOf", "oneOf"):
        for alternative in schema.get(key) or ():
            found |= _types(alternative)
    if "enum" in schema and not found:
        found = {"string"} if all(isinstance(v, str) for v in schema["enum"]) else set()
    return found


def pairs_to_arguments(pairs: Sequence[str], parameters: Mapping[str, Any]) -> dict[str, Any]:
    """``["path=notes.md", "limit=5"]`` → ``{"path": "notes.md", "limit": 5}``: a string parameter
    takes the text as it is; any other is read as JSON (so ``5``, ``true``, ``null``, ``[1, 2]``); a
    value that is neither what the schema allows nor JSON is a ``ValueError`` naming the key."""
    properties = parameters.get("properties") or {}
    out: dict[str, Any] = {}
    for pair in pairs:
        key, eq, text = pair.partition("=")
        if not eq or not key:
            raise ValueError(
                f"argument {pair!r} is not KEY=VALUE (give the arguments as KEY=VALUE pairs, or as "
                "one JSON object: --args '{\"key\": ...}' or the object alone)"
            )
        if key in out:
            raise ValueError(f"argument {key!r} is given twice")
        types = _types(properties.get(key))
        if types == {"string"}:
            out[key] = text
            continue
        try:
            value = parse_json(text)  # NaN or Infinity is not JSON: read as the text, or refused
        except ValueError:
            if types and "string" not in types:
                raise ValueError(
                    f"argument {key}={text!r}: expected {' or '.join(sorted(types))} written as JSON "
                    f"(e.g. {key}=5, {key}=true, {key}='[1, 2]')"
                ) from None
            value = text
        # ``glob=2024`` for a ``string | null`` parameter is the text: JSON is read only where the
        # schema admits what it reads as.
        out[key] = text if "string" in types and not _admitted(value, types) else value
    return out


def _admitted(value: Any, types: set[str]) -> bool:
    """Whether a value read as JSON has one of the schema's ``types``."""
    if isinstance(value, bool):
        kinds = {"boolean"}
    elif isinstance(value, int):
        kinds = {"integer", "number"}
    elif isinstance(value, float):
        kinds = {"number"}
    else:
        kinds = {
            type(None): {"null"},
            str: {"string"},
            list: {"array"},
            dict: {"object"},
        }.get(type(value), set())
    return bool(kinds & types)


__all__ = ["pairs_to_arguments", "parameters_of"]
