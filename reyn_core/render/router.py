"""Router renderer: the ``tools`` array, deterministic to the byte, for one render target.

The array has the OpenAI Chat Completions shape (litellm translates it for every provider); each
tool's parameters are adapted for the named ``target`` (``provider_schemas``: ``openai`` by
default, ``anthropic``, ``gemini``, ``openai-strict``, ``mcp``)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, TypedDict

from ..context import ToolContext
from ..errors import StrictRenderError, StrictSchemaError
from ..jsondata import compact_json
from ..provider_schemas import adapt_parameters
from ..schema import to_strict
from .parameters import effective_parameters

if TYPE_CHECKING:
    from typing import Unpack

    from ..registry import ToolRegistry
    from ..tool import ToolDefinition


def render_router(
    registry: ToolRegistry,
    ctx: ToolContext,
    *,
    exclude: Iterable[str] = (),
    strict: bool = False,
    target: str = "openai",
) -> list[dict[str, Any]]:
    """The ``tools`` array for the router surface: every tool the gates allow in ``ctx``, by name,
    each tool's parameters adapted for ``target`` (what cannot be adapted is shown as registered
    minus what the target lacks; ``check_tool_schema`` reported it as RS101 / RS102).

    ``strict=True`` (the same as ``target="openai-strict"``) emits OpenAI strict-mode schemas
    (``"strict": true``); if any tool's schema cannot be strict, raises ``StrictRenderError`` naming
    each tool and the reason.
    """
    ctx = ctx if ctx.surface == "router" else ctx.with_surface("router")
    visible = registry.visible("router", ctx, exclude=exclude)
    return render_router_tools(registry, visible, ctx, strict=strict, target=target)


def render_router_tools(
    registry: ToolRegistry,
    tools: Iterable[ToolDefinition],
    ctx: ToolContext,
    *,
    strict: bool = False,
    target: str = "openai",
) -> list[dict[str, Any]]:
    """The ``tools`` array entries of ``tools``, in the order given. The caller has already decided
    what is visible (``render_router`` passes ``registry.visible``; tool deferral passes its split of
    that same list). ``strict`` and ``target`` as in ``render_router``."""
    out: list[dict[str, Any]] = []
    errors: list[StrictSchemaError] = []
    for tool in tools:
        try:
            out.append(render_router_tool(registry, tool, ctx, strict=strict, target=target))
        except StrictSchemaError as exc:
            errors.append(exc)
            out.append(render_router_tool(registry, tool, ctx, target="openai"))
    if errors:
        raise StrictRenderError(errors, out)
    return out


def render_router_tool(
    registry: ToolRegistry,
    tool: ToolDefinition,
    ctx: ToolContext,
    *,
    strict: bool = False,
    target: str = "openai",
) -> dict[str, Any]:
    """One entry of the ``tools`` array (no gate check: see ``render_router_tools``). With ``strict``
    (or ``target="openai-strict"``), raises ``StrictSchemaError`` when the tool's schema cannot be
    strict; ``ValueError`` for an unknown target."""
    params = effective_parameters(tool, registry.context_for(tool, ctx))
    function: dict[str, Any] = {"name": tool.name, "description": tool.description}
    if strict or target == "openai-strict":
        function["parameters"] = to_strict(
            adapt_parameters(params, "openai", owned=True).schema, tool=tool.name
        )
        function["strict"] = True
    else:
        function["parameters"] = adapt_parameters(params, target, owned=True).schema
    return {"type": "function", "function": function}


class RouterOptions(TypedDict, total=False):
    """``render_router``'s keyword options, which ``render_router_json`` passes on."""

    exclude: Iterable[str]
    strict: bool
    target: str


def render_router_json(registry: ToolRegistry, ctx: ToolContext, **options: Unpack[RouterOptions]) -> str:
    """``render_router`` (with the same ``exclude`` / ``strict`` / ``target``) as canonical JSON text
    (the bytes a provider receives)."""
    return compact_json(render_router(registry, ctx, **options))
