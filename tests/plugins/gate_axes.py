"""The axes the gate matrices share (the core's gate matrix and tool gate, the search pack's matrix):
the tool under test (``notes_write`` of plugin ``notes``, cluster ``notes``), the author's role gates,
the operator's narrowings of the plugin and what the tool's ``available`` check may answer. Each
matrix adds its own axes and writes its own expectation. ``notes_write`` and ``matrix_tool`` build the
tool's definition, so each test writes only the fields its case is about."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from reyn_core import ToolContext, ToolDefinition, ToolGates, ToolRuntimeMissing
from reyn_core.host import OperatorPolicy, PluginPolicy

NAME, CLUSTER, PLUGIN = "notes_write", "notes", "notes"
TEXT: dict[str, Any] = {"type": "object", "properties": {"text": {"type": "string"}}}
ONLY_TEXT: dict[str, Any] = {**TEXT, "required": ["text"], "additionalProperties": False}


def notes_write(handler: Any, **fields: Any) -> ToolDefinition:
    """Tool ``notes_write`` ("Write a note.", one string parameter ``text``) calling ``handler``;
    ``fields`` set or override any other field of the definition."""
    return ToolDefinition(
        **{"name": NAME, "description": "Write a note.", "handler": handler, "parameters": TEXT, **fields}
    )


def matrix_tool(
    handler: Any, gates: ToolGates, available: Callable[[ToolContext], bool] | None
) -> ToolDefinition:
    """``notes_write`` as the matrices vary it: the author's role ``gates`` and ``available`` check, in
    cluster ``notes``, with a side effect, ``text`` required and no other argument accepted."""
    return notes_write(
        handler, gates=gates, cluster=CLUSTER, purity="side_effect", available=available, parameters=ONLY_TEXT
    )


def raise_tool_error(ctx: ToolContext) -> bool:
    raise ToolRuntimeMissing("notes_write needs [plugins.notes.settings] dir; set it in the profile")


def raise_bug(ctx: ToolContext) -> bool:
    raise RuntimeError("bug in availability check")


def narrowed(**policy: Any) -> OperatorPolicy:
    """The operator's policy narrowing plugin ``notes`` (``PluginPolicy(**policy)``)."""
    return OperatorPolicy(plugins={PLUGIN: PluginPolicy(**policy)})


ROLES = {
    "both": ToolGates(),
    "router_only": ToolGates(phase="deny"),
    "phase_only": ToolGates(router="deny"),
    "neither": ToolGates(router="deny", phase="deny"),
}
OPERATORS = {
    "none": OperatorPolicy(),
    "plugins_off": OperatorPolicy(plugins_enabled=False),
    "narrowed_to_router": narrowed(surfaces=frozenset({"router"})),
    "narrowed_to_phase": narrowed(surfaces=frozenset({"phase"})),
    "tool_excluded": narrowed(exclude=frozenset({NAME})),
    "not_included": narrowed(include=frozenset({"notes_read"})),
    "included": narrowed(include=frozenset({NAME})),
    "router_exclude": OperatorPolicy(router_exclude=frozenset({NAME})),
}
AVAILABLE: dict[str, Callable[[ToolContext], bool] | None] = {
    "unset": None,
    "true": lambda ctx: True,
    "false": lambda ctx: False,
    "raises_tool_error": raise_tool_error,
    "raises_bug": raise_bug,
}
