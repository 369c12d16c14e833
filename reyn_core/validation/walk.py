"""The walks over a schema: every container with its JSON pointer, and every (sub)schema following the
schema-valued keywords only. Both iterative: they run several times per tool at registration."""

from __future__ import annotations

import sys
from collections.abc import Iterator, Mapping
from typing import Any

from .messages import escape_token


def walk_containers(node: Any) -> Iterator[tuple[str, Any]]:
    """Every mapping and list in ``node`` (pre-order, in key order) with its pointer; scalars are
    skipped, so no pointer is built for them (this runs for every tool at registration)."""
    stack: list[tuple[str, Any]] = [("", node)]
    while stack:
        here, current = stack.pop()
        yield here, current
        if isinstance(current, Mapping):
            stack.extend(
                (f"{here}/{escape_token(str(k))}", v)
                for k, v in reversed(list(current.items()))
                if isinstance(v, dict | list) or isinstance(v, Mapping)
            )
        elif isinstance(current, list):
            stack.extend(
                (f"{here}/{i}", v)
                for i, v in reversed(list(enumerate(current)))
                if isinstance(v, dict | list) or isinstance(v, Mapping)
            )


_SCHEMA_MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
_SCHEMA_VALUED = (
    "items",
    "additionalProperties",
    "not",
    "if",
    "then",
    "else",
    "contains",
    "propertyNames",
    "unevaluatedProperties",
    "unevaluatedItems",
    "additionalItems",
)
_SCHEMA_ARRAYS = ("anyOf", "oneOf", "allOf", "prefixItems")
_APPLICATORS = frozenset(_SCHEMA_MAPS + _SCHEMA_VALUED + _SCHEMA_ARRAYS)
# Each applicator's place in the walk's order, and how its value holds schemas (0: a mapping of them,
# 1: one, 2: a list of them): a node is walked through the keywords it has, not all twenty.
_RANK = {key: i for i, key in enumerate(_SCHEMA_MAPS + _SCHEMA_VALUED + _SCHEMA_ARRAYS)}
_HOLDS = {
    **dict.fromkeys(_SCHEMA_MAPS, 0),
    **dict.fromkeys(_SCHEMA_VALUED, 1),
    **dict.fromkeys(_SCHEMA_ARRAYS, 2),
}


def _is_mapping(value: Any) -> bool:
    return type(value) is dict or isinstance(value, Mapping)


def subschemas(node: Any) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """Every (sub)schema object, following the schema-valued keywords only: pre-order, the keywords
    in the order above (``properties``... before ``items``... before ``anyOf``...).

    Iterative, and a node without applicator keywords costs one set intersection: it runs several
    times per tool at registration. A structure nested deeper than the interpreter's recursion limit
    (or containing itself) raises ``RecursionError``, as a recursive walk would."""
    if not _is_mapping(node):
        return
    limit = sys.getrecursionlimit()
    stack: list[tuple[str, Mapping[str, Any], int]] = [("", node, 0)]
    while stack:
        here, current, depth = stack.pop()
        yield here, current
        present = current.keys() & _APPLICATORS
        if not present:
            continue
        if depth >= limit:
            raise RecursionError(f"schema nests more than {limit} levels")
        children: list[tuple[str, Mapping[str, Any], int]] = []
        for key in sorted(present, key=_RANK.__getitem__) if len(present) > 1 else present:
            value = current[key]
            holds = _HOLDS[key]
            if holds == 0:
                if _is_mapping(value):
                    children.extend(
                        (f"{here}/{key}/{escape_token(str(name))}", child, depth + 1)
                        for name, child in value.items()
                        if _is_mapping(child)
                    )
            elif holds == 1:
                if _is_mapping(value):
                    children.append((f"{here}/{key}", value, depth + 1))
            elif isinstance(value, list):
                children.extend(
                    (f"{here}/{key}/{i}", child, depth + 1)
                    for i, child in enumerate(value)
                    if _is_mapping(child)
                )
        stack.extend(reversed(children))
