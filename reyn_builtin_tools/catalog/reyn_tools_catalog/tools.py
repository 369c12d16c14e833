"""The catalog tools.

=================  ======  =====  ==========  ================================================
tool               router  phase  cluster     notes
=================  ======  =====  ==========  ================================================
list_skills        yes     yes    catalog     grouped by category, descriptions shortened
describe_skill     yes     yes    catalog     the full record
list_agents        yes     yes    catalog
describe_agent     yes     yes    catalog
invoke_skill       yes     yes    catalog     bridge ``run_skill``; names enum; input validated
delegate_to_agent  yes     no     catalog     deferred; bridge ``send_to_agent``; names enum
plan               yes     no     catalog     deferred; bridge ``dispatch_plan``; plan checked;
                                              hidden in plan mode (gate ``plan_mode``)
ask_user           no      yes    ask_user    bridge ``ask_user``
lint_skill         no      yes    catalog     checks a skill folder of the workspace
=================  ======  =====  ==========  ================================================

The host supplies ``run_skill``, ``send_to_agent`` and ``dispatch_plan`` in a ``CatalogBridge``
service (``service.py``) and ``ask_user`` as the core's ``HostBridge.ask_user``. Bridges are called
with keyword arguments and may be sync or async: ``ask_user(question=str, options=list[str], ctx=...)``.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Collection, Mapping
from dataclasses import replace
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from reyn_core import (
    ArgumentProblem,
    InvalidToolArguments,
    SchemaRefused,
    ToolContext,
    ToolGates,
    ToolRuntimeMissing,
    json_schema_validator,
    settings_as,
    tool,
)
from reyn_core.host import ToolRegistry

from .catalog import catalog_for
from .definitions import AGENT_NAMES, SKILL_NAMES
from .plans import Plan, plan_problems
from .service import require_bridge
from .settings import CatalogSettings

BOTH = ToolGates(router="allow", phase="allow")
ROUTER_ONLY = ToolGates(router="allow", phase="deny")
PHASE_ONLY = ToolGates(router="deny", phase="allow")
# A plan step cannot plan again: plan mode hides the tool on every surface (gates.check, rule plan_mode).
PLANNER = ToolGates(router="allow", phase="deny", plan_mode="deny")
R = TypeVar("R")


class _Args(BaseModel):
    """The arguments of a catalog tool: a key the schema does not name is an error."""

    model_config = ConfigDict(extra="forbid")


def _short(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "\u2026"


def _invalid(tool_name: str, pointer: str, message: str) -> InvalidToolArguments:
    return InvalidToolArguments(
        f"invalid arguments for {tool_name!r}: {pointer}: {message}",
        tool=tool_name,
        problems=[ArgumentProblem(pointer, message)],
    )


def _find(records: Mapping[str, R], kind: str, name: str, tool_name: str, pointer: str) -> R:
    """The skill or agent called ``name``, else ``InvalidToolArguments`` at ``pointer`` naming the
    known ones."""
    found = records.get(name)
    if found is None:
        listed = ", ".join(sorted(records)[:50])
        allowed = f"known {kind}s: {listed}" if records else f"no {kind}s are available in this session"
        raise _invalid(tool_name, pointer, f"unknown {kind} {name[:80]!r}; {allowed}")
    return found


async def _call(bridge: Callable[..., Any], **kwargs: Any) -> Any:
    result = bridge(**kwargs)
    return await result if inspect.isawaitable(result) else result


# --------------------------------------------------------------------------- skills


@tool(cluster="catalog", purity="read_only", gates=BOTH)
def list_skills(ctx: ToolContext, category: str | None = None) -> dict[str, Any]:
    """List the skills you can invoke, grouped by category, with short descriptions.

    Use describe_skill for a skill's full instructions and input schema, invoke_skill to run one.
    """
    catalog = catalog_for(ctx)
    limit = settings_as(ctx, CatalogSettings).description_limit
    groups: dict[str, list[dict[str, str]]] = {}
    for skill in catalog.skills.values():
        if category is None or skill.category == category:
            groups.setdefault(skill.category, []).append(
                {"name": skill.name, "description": _short(skill.description, limit)}
            )
    result: dict[str, Any] = {
        "categories": [{"category": c, "skills": groups[c]} for c in sorted(groups)],
        "count": sum(len(v) for v in groups.values()),
    }
    if category is not None and not groups:
        known = sorted({s.category for s in catalog.skills.values()})
        result["note"] = f"no skills in category {category!r}; categories: {', '.join(known) or 'none'}"
    return result


@tool(cluster="catalog", purity="read_only", gates=BOTH)
def describe_skill(name: str, ctx: ToolContext) -> dict[str, Any]:
    """Describe one skill in full: description, category, input schema and instructions."""
    return _find(catalog_for(ctx).skills, "skill", name, "describe_skill", "/name").record()


class InvokeSkillArgs(_Args):
    skill: str = Field(description="the skill's name (see list_skills)")
    input: dict[str, Any] = Field(
        default_factory=dict, description="the skill's input, matching its input schema"
    )


@tool(cluster="catalog", purity="side_effect", gates=BOTH, schema_enricher=SKILL_NAMES)
async def _invoke_skill(args: InvokeSkillArgs, ctx: ToolContext) -> Any:
    """Run a skill with an input that matches its input schema (see describe_skill)."""
    run_skill = require_bridge(ctx, "run_skill", tool="invoke_skill")
    skill = _find(catalog_for(ctx).skills, "skill", args.skill, "invoke_skill", "/skill")
    if skill.input_schema is not None:
        problems = _schema_problems(skill.input_schema, args.input)
        if problems:
            listed = "; ".join(p.render() for p in problems[:8])
            raise InvalidToolArguments(
                f"invalid arguments for 'invoke_skill': the input does not match the input schema of skill "
                f"{skill.name!r}: {listed}",
                tool="invoke_skill",
                problems=problems,
            )
    return await _call(run_skill, skill=skill, input=args.input, ctx=ctx)


def _open_input_parameters() -> dict[str, Any]:
    # ``input`` is free-form (each skill has its own schema); an open object needs no explicit
    # ``additionalProperties: true``, which some providers' schema subsets reject.
    params = dict(_invoke_skill.parameters)
    props = {k: dict(v) for k, v in params["properties"].items()}
    props["input"].pop("additionalProperties", None)
    return {**params, "properties": props}


invoke_skill = replace(_invoke_skill, name="invoke_skill", parameters=_open_input_parameters())


def _schema_problems(schema: Any, value: Any) -> list[ArgumentProblem]:
    # The core's validator factory: no reference is fetched, patterns run on RE2. The schema was
    # screened when the catalogue was built; a refusal here (a host record) still refuses the call.
    try:
        validate = json_schema_validator(schema)
    except SchemaRefused as exc:
        raise InvalidToolArguments(
            f"invoke_skill cannot check the input: the skill's input schema is refused ({exc})",
            tool="invoke_skill",
            problems=[ArgumentProblem("/skill", p.render()) for p in exc.problems[:8]],
        ) from None
    return [ArgumentProblem("/input" + p.pointer, p.message[:300]) for p in validate(value)]


# --------------------------------------------------------------------------- agents


@tool(cluster="catalog", purity="read_only", gates=BOTH)
def list_agents(ctx: ToolContext) -> dict[str, Any]:
    """List the agents you can delegate to, with short descriptions."""
    catalog = catalog_for(ctx)
    limit = settings_as(ctx, CatalogSettings).description_limit
    agents = [{"name": a.name, "description": _short(a.description, limit)} for a in catalog.agents.values()]
    return {"agents": agents, "count": len(agents)}


@tool(cluster="catalog", purity="read_only", gates=BOTH)
def describe_agent(name: str, ctx: ToolContext) -> dict[str, Any]:
    """Describe one agent in full: description, tools, model and instructions."""
    return _find(catalog_for(ctx).agents, "agent", name, "describe_agent", "/name").record()


class DelegateArgs(_Args):
    agent: str = Field(description="the agent's name (see list_agents)")
    task: str = Field(
        description="what the agent should do, with everything it needs to know",
        min_length=1,
        max_length=20_000,
    )


@tool(
    cluster="catalog",
    purity="side_effect",
    gates=ROUTER_ONLY,
    dispatch_kind="deferred",
    schema_enricher=AGENT_NAMES,
)
async def delegate_to_agent(args: DelegateArgs, ctx: ToolContext) -> Any:
    """Hand a task to another agent. Its answer arrives later, not as this call's result."""
    send = require_bridge(ctx, "send_to_agent", tool="delegate_to_agent")
    agent = _find(catalog_for(ctx).agents, "agent", args.agent, "delegate_to_agent", "/agent")
    return await _call(send, agent=agent, message=args.task, ctx=ctx)


# --------------------------------------------------------------------------- plan


def plan_tool_names(ctx: ToolContext) -> Collection[str]:
    """The tools a plan step may name: ``ctx.extras["plan_tools"]`` when the host lists them, else the
    tools of ``ctx.extras["registry"]`` visible on the router surface in this context."""
    listed = ctx.extras.get("plan_tools")
    if listed is not None:
        return frozenset(str(n) for n in listed)
    registry = ctx.extras.get("registry")
    if isinstance(registry, ToolRegistry):
        router_ctx = ctx if ctx.surface == "router" else ctx.with_surface("router")
        return frozenset(t.name for t in registry.visible("router", router_ctx))
    raise ToolRuntimeMissing(
        "tool 'plan' cannot check the tools its steps name: the host must pass its tool registry as "
        "ToolContext(extras={'registry': registry}) or the allowed names as extras={'plan_tools': [...]}",
        tool="plan",
    )


@tool(cluster="catalog", purity="side_effect", gates=PLANNER, dispatch_kind="deferred")
async def _plan(args: Plan, ctx: ToolContext) -> Any:
    """Lay out a plan of 2-7 steps toward a goal; the host runs the steps in dependency order.

    Give each step an id, a description, the tools it may use and the ids it depends on.
    """
    dispatch = require_bridge(ctx, "dispatch_plan", tool="plan")
    problems = plan_problems(args, plan_tool_names(ctx))
    if problems:
        listed = "; ".join(p.render() for p in problems[:8])
        raise InvalidToolArguments(f"invalid arguments for 'plan': {listed}", tool="plan", problems=problems)
    return await _call(dispatch, plan=args, ctx=ctx)


# --------------------------------------------------------------------------- ask_user


class AskUserArgs(_Args):
    question: str = Field(
        description="the question, complete and self-contained", min_length=1, max_length=4000
    )
    options: list[str] = Field(
        default_factory=list,
        max_length=10,
        description="suggested answers, if the question has a few likely ones",
    )


@tool(cluster="ask_user", purity="external", gates=PHASE_ONLY)
async def ask_user(args: AskUserArgs, ctx: ToolContext) -> Any:
    """Ask the user a question and wait for the answer."""
    ask = ctx.bridge.require("ask_user", tool="ask_user")
    answer = await _call(ask, question=args.question, options=list(args.options), ctx=ctx)
    return {"answer": answer} if isinstance(answer, str) else answer


# --------------------------------------------------------------------------- lint_skill


class LintSkillArgs(_Args):
    path: str = Field(
        min_length=1,
        max_length=4096,
        description="the skill's folder (or its SKILL.md), relative to the workspace",
    )


@tool(cluster="catalog", purity="read_only", gates=PHASE_ONLY)
def lint_skill(args: LintSkillArgs, ctx: ToolContext) -> dict[str, Any]:
    """Check a skill you are writing, with the checks the catalogue applies when it loads skills:
    SKILL.md front matter keys and types, the input schema, files the instructions link to, size
    limits. Returns every problem with its file and line; loads is true when there is no error."""
    from .lint import lint_skill_folder

    return lint_skill_folder(args.path, ctx)


def _inline_refs(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` with its local ``#/$defs/...`` references replaced by the definitions (no recursion
    in these models), so providers with a small schema subset (e.g. Gemini) get a plain schema."""
    defs = schema.get("$defs", {})

    def walk(node: Any) -> Any:
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/$defs/") and len(node) == 1:
                return walk(defs[ref.removeprefix("#/$defs/")])
            return {k: walk(v) for k, v in node.items() if k != "$defs"}
        if isinstance(node, list):
            return [walk(v) for v in node]
        return node

    return walk(schema)  # type: ignore[no-any-return,unused-ignore]


def _plan_parameters() -> dict[str, Any]:
    params = _inline_refs(dict(_plan.parameters))
    params.pop("description", None)  # the model's docstring; the tool description says it better
    return params


plan = replace(_plan, name="plan", parameters=_plan_parameters())

CATALOG_TOOLS = (
    list_skills,
    describe_skill,
    list_agents,
    describe_agent,
    invoke_skill,
    delegate_to_agent,
    plan,
    ask_user,
    lint_skill,
)
