"""Router renderer: the OpenAI Chat Completions ``tools`` array, deterministic to the byte."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from ..context import ToolContext
from ..errors import StrictRenderError, StrictSchemaError
from ..jsondata import compact_json
from ..schema import to_strict
from .parameters import effective_parameters

if TYPE_CHECKING:
    from ..registry import ToolRegistry
    from ..tool import ToolDefinition


def render_router(
    registry: ToolRegistry, ctx: ToolContext, *, exclude: Iterable[str] = (), strict: bool = False
) -> list[dict[str, Any]]:
    """The ``tools`` array for the router surface: every tool the gates allow in ``ctx``, by name.

    ``strict=True`` emits OpenAI strict-mode schemas (``"strict": true``); if any tool's schema
    cannot be strict, raises ``StrictRenderError`` naming each tool and the reason.
    """
    ctx = ctx if ctx.surface == "router" else ctx.with_surface("router")
    return render_router_tools(registry, registry.visible("router", ctx, exclude=exclude), ctx, strict=strict)


def render_router_tools(
    registry: ToolRegistry, tools: Iterable[ToolDefinition], ctx: ToolContext, *, strict: bool = False
) -> list[dict[str, Any]]:
    """The ``tools`` array entries of ``tools``, in the order given. The caller has already decided
    what is visible (``render_router`` passes ``registry.visible``; tool deferral passes its split of
    that same list). ``strict`` as in ``render_router``."""
    out: list[dict[str, Any]] = []
    errors: list[StrictSchemaError] = []
    for tool in tools:
        try:
            out.append(render_router_tool(registry, tool, ctx, strict=strict))
        except StrictSchemaError as exc:
            errors.append(exc)
            out.append(render_router_tool(registry, tool, ctx))
    if errors:
        raise StrictRenderError(errors, out)
    return out


def render_router_tool(
    registry: ToolRegistry, tool: ToolDefinition, ctx: ToolContext, *, strict: bool = False
) -> dict[str, Any]:
    """One entry of the ``tools`` array (no gate check: see ``render_router_tools``). With ``strict``,
    raises ``StrictSchemaError`` when the tool's schema cannot be strict."""
    params = effective_parameters(tool, registry.context_for(tool, ctx))
    function: dict[str, Any] = {"name": tool.name, "description": tool.description, "parameters": params}
    if strict:
        function["parameters"] = to_strict(params, tool=tool.name)
        function["strict"] = True
    return {"type": "function", "function": function}


def render_router_json(
    registry: ToolRegistry, ctx: ToolContext, *, exclude: Iterable[str] = (), strict: bool = False
) -> str:
    """``render_router`` as canonical JSON text (the bytes a provider receives)."""
    return compact_json(render_router(registry, ctx, exclude=exclude, strict=strict))
