"""The five memory tools. All are offered on the router and the phase surface (cluster ``memory``).

The agent layer always belongs to the calling agent named by ``ToolContext.agent``; no argument can
name another agent (the schemas forbid extra properties), so one agent can neither read, overwrite
nor forget another's entries.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from reyn_core import (
    ArgumentProblem,
    InvalidToolArguments,
    ToolContext,
    ToolDenied,
    ToolExecutionError,
    ToolGates,
    ToolRuntimeMissing,
    settings_as,
    tool,
)

from .backend import (
    MemoryBackend,
    MemoryBackendMissing,
    MemoryEntry,
    MemoryStoreError,
    text_problem,
)
from .opening import open_store
from .settings import MemorySettings
from .slugs import SLUG_RULE, agent_problem, slug_problem

MemoryType = Literal["user", "feedback", "project", "reference"]
BOTH = ToolGates(router="allow", phase="allow")
NAME_MAX = 200
DESCRIPTION_MAX = 1000


def _slug_field() -> Any:
    # The slug rule is checked by the handler (slug_problem) so a refusal says exactly what was wrong.
    return Field(description=f"the entry's slug: {SLUG_RULE}")


def store_for(ctx: ToolContext, tool_name: str = "memory") -> MemoryBackend:
    """The store configured for this call (SQLite resolved against the workspace, or PostgreSQL)."""
    return _run(tool_name, open_store, settings_as(ctx, MemorySettings), ctx.workspace)


def calling_agent(ctx: ToolContext, tool_name: str) -> str:
    """The agent that owns the agent layer of this call, or a ``denied`` error saying why there is none."""
    problem = agent_problem(ctx.agent)
    if problem is None:
        return ctx.agent  # type: ignore[return-value]
    if ctx.agent is None:
        raise ToolDenied(
            f"{tool_name}: the agent layer belongs to the calling agent, and this call has none "
            "(the host did not set ToolContext.agent); use the shared layer instead",
            tool=tool_name,
        )
    raise ToolDenied(f"{tool_name}: the agent layer cannot be used: {problem}", tool=tool_name)


def _check_slug(slug: str, tool_name: str) -> None:
    problem = slug_problem(slug)
    if problem is not None:
        raise InvalidToolArguments(
            f"invalid arguments for {tool_name!r}: /slug: {problem}",
            tool=tool_name,
            problems=[ArgumentProblem("/slug", problem)],
        )


def _run(tool_name: str, fn: Any, *args: Any, **kwargs: Any) -> Any:
    """Call the store; its errors become the tool errors a model understands (no traceback)."""
    try:
        return fn(*args, **kwargs)
    except MemoryBackendMissing as exc:
        raise ToolRuntimeMissing(f"{tool_name}: {exc}", tool=tool_name) from None
    except MemoryStoreError as exc:
        raise ToolExecutionError(f"{tool_name}: {exc}", tool=tool_name) from None


def _check_text(args: BaseModel, fields: tuple[str, ...], tool_name: str) -> None:
    problems = [
        ArgumentProblem(f"/{field}", f"the {field} {problem}")
        for field in fields
        if (problem := text_problem(getattr(args, field))) is not None
    ]
    if problems:
        raise InvalidToolArguments(
            f"invalid arguments for {tool_name!r}: " + "; ".join(p.render() for p in problems),
            tool=tool_name,
            problems=problems,
        )


def _owner(layer: str, ctx: ToolContext, tool_name: str) -> str:
    return "" if layer == "shared" else calling_agent(ctx, tool_name)


# --------------------------------------------------------------------------- list_memory


class ListMemoryArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    layer: Literal["all", "shared", "agent"] = Field(
        "all", description="'shared', 'agent' (your own entries) or 'all' (shared plus yours)"
    )
    type: MemoryType | None = Field(None, description="only entries of this type")


@tool(cluster="memory", purity="read_only", gates=BOTH)
def list_memory(args: ListMemoryArgs, ctx: ToolContext) -> dict[str, Any]:
    """List memory entries (slug, name, description, type, layer) without their bodies.

    The shared layer is common to every agent; the agent layer holds only your own entries. Read an
    entry's body with read_memory_body.
    """
    s = settings_as(ctx, MemorySettings)
    store = store_for(ctx, "list_memory")
    layers: list[tuple[Literal["shared", "agent"], str]] = []
    if args.layer in ("all", "shared"):
        layers.append(("shared", ""))
    if args.layer == "agent" or (args.layer == "all" and ctx.agent is not None):
        layers.append(("agent", calling_agent(ctx, "list_memory")))
    entries: list[dict[str, str]] = []
    truncated = False
    for layer, agent in layers:
        found = _run("list_memory", store.entries, layer, agent, type=args.type, limit=s.list_limit + 1)
        truncated = truncated or len(found) > s.list_limit
        entries.extend(e.summary() for e in found[: s.list_limit])
    result: dict[str, Any] = {"layers": [layer for layer, _ in layers], "entries": entries}
    if truncated:
        result["truncated"] = f"more than {s.list_limit} entries in a layer; filter by type to see the rest"
    return result


# --------------------------------------------------------------------------- read_memory_body


class ReadMemoryArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    slug: str = _slug_field()
    layer: Literal["shared", "agent"] | None = Field(
        None, description="where to look; by default your own layer first, then the shared layer"
    )


@tool(cluster="memory", purity="read_only", gates=BOTH)
def read_memory_body(args: ReadMemoryArgs, ctx: ToolContext) -> dict[str, Any]:
    """Read one memory entry in full, including its body."""
    _check_slug(args.slug, "read_memory_body")
    store = store_for(ctx, "read_memory_body")
    if args.layer is not None:
        order = [args.layer]
    else:
        order = ["agent", "shared"] if ctx.agent is not None else ["shared"]
    for layer in order:
        entry = _run("read_memory_body", store.get, layer, _owner(layer, ctx, "read_memory_body"), args.slug)
        if entry is not None:
            return _full(entry)
    where = " or ".join(f"the {layer} layer" for layer in order)
    raise ToolExecutionError(
        f"read_memory_body: no entry {args.slug!r} in {where}; list_memory shows the slugs that exist",
        tool="read_memory_body",
    )


def _full(e: MemoryEntry) -> dict[str, Any]:
    return {**e.summary(), "body": e.body, "created": e.created}


# --------------------------------------------------------------------------- remember_*


class RememberArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    slug: str = _slug_field()
    name: str = Field(description="a short title", min_length=1, max_length=NAME_MAX)
    description: str = Field(
        description="one line saying when this entry is useful", max_length=DESCRIPTION_MAX
    )
    type: MemoryType = Field(description="user, feedback, project or reference")
    body: str = Field(description="the content to remember (Markdown)")


def _remember(
    args: RememberArgs, ctx: ToolContext, layer: Literal["shared", "agent"], tool_name: str
) -> dict[str, Any]:
    _check_slug(args.slug, tool_name)
    _check_text(args, ("name", "description", "body"), tool_name)
    agent = _owner(layer, ctx, tool_name)
    limit = settings_as(ctx, MemorySettings).max_body_bytes
    size = len(args.body.encode("utf-8"))
    if size > limit:
        problem = (
            f"the body is {size:,} bytes, over the limit of {limit:,} bytes "
            "(plugins.memory.settings.max_body_bytes); shorten it or split it into several entries"
        )
        raise InvalidToolArguments(
            f"invalid arguments for {tool_name!r}: /body: {problem}",
            tool=tool_name,
            problems=[ArgumentProblem("/body", problem)],
        )
    store = store_for(ctx, tool_name)
    result = _run(
        tool_name,
        store.put,
        layer,
        agent,
        args.slug,
        name=args.name,
        description=args.description,
        type=args.type,
        body=args.body,
    )
    return {"slug": result.slug, "layer": result.layer, "status": result.status, "updated": result.updated}


@tool(cluster="memory", purity="side_effect", gates=BOTH)
def remember_shared(args: RememberArgs, ctx: ToolContext) -> dict[str, Any]:
    """Save an entry in the shared memory layer, visible to every agent. An existing slug is updated."""
    return _remember(args, ctx, "shared", "remember_shared")


@tool(cluster="memory", purity="side_effect", gates=BOTH)
def remember_agent(args: RememberArgs, ctx: ToolContext) -> dict[str, Any]:
    """Save an entry in your own agent memory layer, visible only to you. An existing slug is updated."""
    return _remember(args, ctx, "agent", "remember_agent")


# --------------------------------------------------------------------------- forget_memory


class ForgetArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    slug: str = _slug_field()
    layer: Literal["shared", "agent"] = Field(description="'shared' or 'agent' (your own layer)")


@tool(cluster="memory", purity="side_effect", gates=BOTH)
def forget_memory(args: ForgetArgs, ctx: ToolContext) -> dict[str, Any]:
    """Delete one memory entry from the shared layer or from your own agent layer."""
    _check_slug(args.slug, "forget_memory")
    agent = _owner(args.layer, ctx, "forget_memory")
    removed = _run("forget_memory", store_for(ctx, "forget_memory").delete, args.layer, agent, args.slug)
    if not removed:
        raise ToolExecutionError(
            f"forget_memory: no entry {args.slug!r} in the {args.layer} layer; "
            "list_memory shows the slugs that exist",
            tool="forget_memory",
        )
    return {"slug": args.slug, "layer": args.layer, "status": "forgotten"}


MEMORY_TOOLS = (list_memory, read_memory_body, remember_shared, remember_agent, forget_memory)
