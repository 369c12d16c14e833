"""JSON data, one way each: the canonical form (hashes, cache keys), the compact wire form (what a
model is sent), conversion of handler results to JSON data, and the nesting bound."""

from __future__ import annotations

import dataclasses
import enum
import json
from collections.abc import Mapping
from datetime import datetime
from pathlib import PurePath
from typing import Any


def canonical_json(value: Any) -> str:
    """The one canonical JSON text of ``value``: keys sorted, no spaces, non-ASCII kept. Hash it with
    ``.encode("utf-8", "surrogatepass")`` so a lone surrogate from a model hashes like anything else."""
    return json.dumps(to_jsonable(value), sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def compact_json(value: Any) -> str:
    """Compact JSON in the value's own key order (the wire form of renders and tool results: key order
    is the author's, so renders stay byte-stable and readable)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def to_jsonable(value: Any) -> Any:
    """Turn a handler's result into JSON-safe data (pydantic models, dataclasses, paths, sets…)."""
    if value is None or isinstance(value, str | int | float | bool):
        return value
    model_dump = getattr(value, "model_dump", None)  # pydantic models, without importing pydantic
    if model_dump is not None and not isinstance(value, type):
        return model_dump(mode="json")
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return to_jsonable(dataclasses.asdict(value))
    if isinstance(value, Mapping):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        items = sorted(value, key=repr) if isinstance(value, set | frozenset) else value
        return [to_jsonable(v) for v in items]
    if isinstance(value, PurePath):
        return str(value)
    if isinstance(value, enum.Enum):
        return to_jsonable(value.value)
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value)


def fields_json(
    record: Any, *, rename: Mapping[str, str] | None = None, omit: tuple[str, ...] = ()
) -> dict[str, Any]:
    """A dataclass record's JSON form, one way for every record: its fields in declaration order (but
    ``omit``), each as JSON data (``to_jsonable``: a tuple is a list), under its ``rename``d key."""
    keys = rename or {}
    return {
        keys.get(f.name, f.name): to_jsonable(getattr(record, f.name))
        for f in dataclasses.fields(record)
        if f.name not in omit
    }


# The Python types of JSON's scalars, exactly (not subclasses): data of only these nests nothing.
JSON_SCALAR_TYPES = frozenset({str, int, float, bool, type(None)})


def depth_within(value: Any, limit: int) -> bool:
    """Whether ``value`` nests at most ``limit`` containers (mappings and lists) deep, the outermost
    counting as 1 and a scalar as 0. Iterative and bounded, so deep or cyclic data cannot overflow."""
    kind = type(value)
    if (
        kind is not dict
        and kind is not list
        and (kind in JSON_SCALAR_TYPES or not isinstance(value, Mapping | list))
    ):
        return True
    if limit >= 1:  # the common case, a flat object of scalars (every call's arguments), without a stack
        for child in value.values() if kind is dict or isinstance(value, Mapping) else value:
            if type(child) not in JSON_SCALAR_TYPES:
                break
        else:
            return True
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > limit:
            return False
        kind = type(node)
        children = (
            node if kind is list else node.values() if kind is dict or isinstance(node, Mapping) else node
        )
        for c in children:
            kind = type(c)
            # exact types first: an ABC check on every scalar would cost more than the walk
            if (
                kind is dict
                or kind is list
                or (kind not in JSON_SCALAR_TYPES and isinstance(c, Mapping | list))
            ):
                stack.append((c, depth + 1))
    return True


def follow_pointer(root: Any, pointer: str) -> tuple[bool, Any]:
    """``(True, value)`` for the value JSON pointer ``pointer`` (RFC 6901: ``""`` is ``root``,
    ``/a/0/b~1c`` steps into ``root["a"][0]["b/c"]``) names inside ``root``; ``(False, None)`` when it
    names nothing there (a missing key, an index out of range, a step into a scalar)."""
    if not pointer:
        return True, root
    if not pointer.startswith("/"):
        return False, None
    node: Any = root
    for raw in pointer[1:].split("/"):
        key = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(node, Mapping) and key in node:
            node = node[key]
        elif isinstance(node, list) and key.isdigit() and int(key) < len(node):
            node = node[int(key)]
        else:
            return False, None
    return True, node
