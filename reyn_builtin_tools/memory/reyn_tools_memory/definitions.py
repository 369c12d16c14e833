"""The five memory tools as loading and rendering see them: name, description, parameters schema,
gates, and a lazy ``"module:attr"`` handler.

The handlers, their argument models and the SQLite store live in ``tools.py`` / ``store.py``,
imported on a tool's first call. Each definition here must equal its ``@tool`` twin in ``tools.py``
field for field (the handler aside): ``tests/packs/test_lazy_definitions.py`` checks it, so change
both together.
"""

from __future__ import annotations

from reyn_core import ToolDefinition, ToolGates

BOTH = ToolGates(router="allow", phase="allow")


LIST_MEMORY = ToolDefinition(
    name="list_memory",
    description="List memory entries (slug, name, description, type, layer) without their bodies.\n\nThe shared layer is common to every agent; the agent layer holds only your own entries. Read an\nentry's body with read_memory_body.",
    parameters={
        "additionalProperties": False,
        "properties": {
            "layer": {
                "default": "all",
                "description": "'shared', 'agent' (your own entries) or 'all' (shared plus yours)",
                "enum": ["all", "shared", "agent"],
                "type": "string",
            },
            "type": {
                "anyOf": [
                    {"enum": ["user", "feedback", "project", "reference"], "type": "string"},
                    {"type": "null"},
                ],
                "default": None,
                "description": "only entries of this type",
            },
        },
        "type": "object",
    },
    handler="reyn_tools_memory.tools:list_memory",
    gates=BOTH,
    cluster="memory",
    purity="read_only",
)

READ_MEMORY_BODY = ToolDefinition(
    name="read_memory_body",
    description="Read one memory entry in full, including its body.",
    parameters={
        "additionalProperties": False,
        "properties": {
            "slug": {
                "description": "the entry's slug: 1-64 characters: lowercase letters, digits, '-' and '_', starting and ending with a letter or digit",
                "type": "string",
            },
            "layer": {
                "anyOf": [{"enum": ["shared", "agent"], "type": "string"}, {"type": "null"}],
                "default": None,
                "description": "where to look; by default your own layer first, then the shared layer",
            },
        },
        "required": ["slug"],
        "type": "object",
    },
    handler="reyn_tools_memory.tools:read_memory_body",
    gates=BOTH,
    cluster="memory",
    purity="read_only",
)

REMEMBER_SHARED = ToolDefinition(
    name="remember_shared",
    description="Save an entry in the shared memory layer, visible to every agent. An existing slug is updated.",
    parameters={
        "additionalProperties": False,
        "properties": {
            "slug": {
                "description": "the entry's slug: 1-64 characters: lowercase letters, digits, '-' and '_', starting and ending with a letter or digit",
                "type": "string",
            },
            "name": {
                "description": "a short title",
                "maxLength": 200,
                "minLength": 1,
                "type": "string",
            },
            "description": {
                "description": "one line saying when this entry is useful",
                "maxLength": 1000,
                "type": "string",
            },
            "type": {
                "description": "user, feedback, project or reference",
                "enum": ["user", "feedback", "project", "reference"],
                "type": "string",
            },
            "body": {"description": "the content to remember (Markdown)", "type": "string"},
        },
        "required": ["slug", "name", "description", "type", "body"],
        "type": "object",
    },
    handler="reyn_tools_memory.tools:remember_shared",
    gates=BOTH,
    cluster="memory",
    purity="side_effect",
)

REMEMBER_AGENT = ToolDefinition(
    name="remember_agent",
    description="Save an entry in your own agent memory layer, visible only to you. An existing slug is updated.",
    parameters={
        "additionalProperties": False,
        "properties": {
            "slug": {
                "description": "the entry's slug: 1-64 characters: lowercase letters, digits, '-' and '_', starting and ending with a letter or digit",
                "type": "string",
            },
            "name": {
                "description": "a short title",
                "maxLength": 200,
                "minLength": 1,
                "type": "string",
            },
            "description": {
                "description": "one line saying when this entry is useful",
                "maxLength": 1000,
                "type": "string",
            },
            "type": {
                "description": "user, feedback, project or reference",
                "enum": ["user", "feedback", "project", "reference"],
                "type": "string",
            },
            "body": {"description": "the content to remember (Markdown)", "type": "string"},
        },
        "required": ["slug", "name", "description", "type", "body"],
        "type": "object",
    },
    handler="reyn_tools_memory.tools:remember_agent",
    gates=BOTH,
    cluster="memory",
    purity="side_effect",
)

FORGET_MEMORY = ToolDefinition(
    name="forget_memory",
    description="Delete one memory entry from the shared layer or from your own agent layer.",
    parameters={
        "additionalProperties": False,
        "properties": {
            "slug": {
                "description": "the entry's slug: 1-64 characters: lowercase letters, digits, '-' and '_', starting and ending with a letter or digit",
                "type": "string",
            },
            "layer": {
                "description": "'shared' or 'agent' (your own layer)",
                "enum": ["shared", "agent"],
                "type": "string",
            },
        },
        "required": ["slug", "layer"],
        "type": "object",
    },
    handler="reyn_tools_memory.tools:forget_memory",
    gates=BOTH,
    cluster="memory",
    purity="side_effect",
)

MEMORY_TOOLS = (LIST_MEMORY, READ_MEMORY_BODY, REMEMBER_SHARED, REMEMBER_AGENT, FORGET_MEMORY)
