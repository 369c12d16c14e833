"""The eight catalog tools as loading and rendering see them: name, description, parameters schema,
gates, schema enrichers, and a lazy ``"module:attr"`` handler.

The handlers and their argument models (``Plan`` included) live in ``tools.py``, imported on a
tool's first call. Each definition here must equal its ``@tool`` twin in ``tools.py`` field for
field (the handler aside): ``tests/packs/test_lazy_definitions.py`` checks it, so change both together.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import TYPE_CHECKING, Any

from reyn_core import ToolContext, ToolDefinition, ToolGates

if TYPE_CHECKING:
    from .catalog import Catalog

BOTH = ToolGates(router="allow", phase="allow")
ROUTER_ONLY = ToolGates(router="allow", phase="deny")
PHASE_ONLY = ToolGates(router="deny", phase="allow")


def _names_enricher(
    prop: str, names_of: Callable[[Catalog], Collection[str]]
) -> Callable[[dict[str, Any], ToolContext], dict[str, Any]]:
    """A schema enricher putting the catalogue's current names into ``properties[prop].enum``
    (removed when there are none). It edits the copy the renderer hands it, never the registry."""

    def enrich(params: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
        from .catalog import catalog_for

        target = params.get("properties", {}).get(prop)
        if not isinstance(target, dict):
            return params
        try:
            names = sorted(names_of(catalog_for(ctx)))
        except Exception:  # a broken host catalogue must not break rendering
            names = []
        if names:
            target["enum"] = names
        else:
            target.pop("enum", None)
        return params

    return enrich


SKILL_NAMES = _names_enricher("skill", lambda c: c.skills)
AGENT_NAMES = _names_enricher("agent", lambda c: c.agents)


LIST_SKILLS = ToolDefinition(
    name="list_skills",
    description="List the skills you can invoke, grouped by category, with short descriptions.\n\nUse describe_skill for a skill's full instructions and input schema, invoke_skill to run one.",
    parameters={
        "additionalProperties": False,
        "properties": {"category": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None}},
        "type": "object",
    },
    handler="reyn_tools_catalog.tools:list_skills",
    gates=BOTH,
    cluster="catalog",
    purity="read_only",
)

DESCRIBE_SKILL = ToolDefinition(
    name="describe_skill",
    description="Describe one skill in full: description, category, input schema and instructions.",
    parameters={
        "additionalProperties": False,
        "properties": {"name": {"type": "string"}},
        "required": ["name"],
        "type": "object",
    },
    handler="reyn_tools_catalog.tools:describe_skill",
    gates=BOTH,
    cluster="catalog",
    purity="read_only",
)

LIST_AGENTS = ToolDefinition(
    name="list_agents",
    description="List the agents you can delegate to, with short descriptions.",
    parameters={"additionalProperties": False, "properties": {}, "type": "object"},
    handler="reyn_tools_catalog.tools:list_agents",
    gates=BOTH,
    cluster="catalog",
    purity="read_only",
)

DESCRIBE_AGENT = ToolDefinition(
    name="describe_agent",
    description="Describe one agent in full: description, tools, model and instructions.",
    parameters={
        "additionalProperties": False,
        "properties": {"name": {"type": "string"}},
        "required": ["name"],
        "type": "object",
    },
    handler="reyn_tools_catalog.tools:describe_agent",
    gates=BOTH,
    cluster="catalog",
    purity="read_only",
)

INVOKE_SKILL = ToolDefinition(
    name="invoke_skill",
    description="Run a skill with an input that matches its input schema (see describe_skill).",
    parameters={
        "additionalProperties": False,
        "properties": {
            "skill": {"description": "the skill's name (see list_skills)", "type": "string"},
            "input": {"description": "the skill's input, matching its input schema", "type": "object"},
        },
        "required": ["skill"],
        "type": "object",
    },
    handler="reyn_tools_catalog.tools:invoke_skill",
    gates=BOTH,
    cluster="catalog",
    purity="side_effect",
    schema_enricher=SKILL_NAMES,
)

DELEGATE_TO_AGENT = ToolDefinition(
    name="delegate_to_agent",
    description="Hand a task to another agent. Its answer arrives later, not as this call's result.",
    parameters={
        "additionalProperties": False,
        "properties": {
            "agent": {"description": "the agent's name (see list_agents)", "type": "string"},
            "task": {
                "description": "what the agent should do, with everything it needs to know",
                "maxLength": 20000,
                "minLength": 1,
                "type": "string",
            },
        },
        "required": ["agent", "task"],
        "type": "object",
    },
    handler="reyn_tools_catalog.tools:delegate_to_agent",
    gates=ROUTER_ONLY,
    cluster="catalog",
    purity="side_effect",
    dispatch_kind="deferred",
    schema_enricher=AGENT_NAMES,
)

PLAN = ToolDefinition(
    name="plan",
    description="Lay out a plan of 2-7 steps toward a goal; the host runs the steps in dependency order.\n\nGive each step an id, a description, the tools it may use and the ids it depends on.",
    parameters={
        "additionalProperties": False,
        "properties": {
            "goal": {
                "description": "what the whole plan achieves",
                "maxLength": 2000,
                "minLength": 1,
                "type": "string",
            },
            "steps": {
                "description": "2 to 7 steps",
                "items": {
                    "additionalProperties": False,
                    "description": "One step of a plan.",
                    "properties": {
                        "id": {
                            "description": "a short id unique in this plan, e.g. 's1' (letters, digits, '_', '-')",
                            "maxLength": 32,
                            "minLength": 1,
                            "type": "string",
                        },
                        "description": {
                            "description": "what this step does and what it produces",
                            "maxLength": 2000,
                            "minLength": 1,
                            "type": "string",
                        },
                        "tools": {
                            "description": "the tools this step may use (names from your tool list)",
                            "items": {"type": "string"},
                            "maxItems": 16,
                            "type": "array",
                        },
                        "depends_on": {
                            "description": "ids of the steps that must finish before this one",
                            "items": {"type": "string"},
                            "maxItems": 7,
                            "type": "array",
                        },
                    },
                    "required": ["id", "description"],
                    "type": "object",
                },
                "maxItems": 7,
                "minItems": 2,
                "type": "array",
            },
        },
        "required": ["goal", "steps"],
        "type": "object",
    },
    handler="reyn_tools_catalog.tools:plan",
    gates=ROUTER_ONLY,
    cluster="catalog",
    purity="side_effect",
    dispatch_kind="deferred",
)

ASK_USER = ToolDefinition(
    name="ask_user",
    description="Ask the user a question and wait for the answer.",
    parameters={
        "additionalProperties": False,
        "properties": {
            "question": {
                "description": "the question, complete and self-contained",
                "maxLength": 4000,
                "minLength": 1,
                "type": "string",
            },
            "options": {
                "description": "suggested answers, if the question has a few likely ones",
                "items": {"type": "string"},
                "maxItems": 10,
                "type": "array",
            },
        },
        "required": ["question"],
        "type": "object",
    },
    handler="reyn_tools_catalog.tools:ask_user",
    gates=PHASE_ONLY,
    cluster="ask_user",
    purity="external",
)

CATALOG_TOOLS = (
    LIST_SKILLS,
    DESCRIBE_SKILL,
    LIST_AGENTS,
    DESCRIBE_AGENT,
    INVOKE_SKILL,
    DELEGATE_TO_AGENT,
    PLAN,
    ASK_USER,
)
