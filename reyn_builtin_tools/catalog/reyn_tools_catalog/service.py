"""What the catalog tools need from their host: ``CatalogBridge``, a typed service of the core's
``HostBridge``.

A host supplies it as ``HostBridge(services={CatalogBridge: CatalogBridge(run_skill=..., ...)})``;
the tools look it up by this type. Each part may be missing: a tool that needs a missing one fails
with ``runtime_missing`` naming it (the model cannot fix that by retrying).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from reyn_core import ToolContext, ToolRuntimeMissing

Bridge = Callable[..., Awaitable[Any] | Any]


@dataclass(frozen=True, slots=True)
class CatalogBridge:
    """The catalog pack's host service. Bridges are called with keyword arguments and may be sync
    or async: ``run_skill(skill=Skill, input=dict, ctx=ToolContext)``, ``send_to_agent(agent=Agent,
    message=str, ctx=...)``, ``dispatch_plan(plan=Plan, ctx=...)``. ``catalog`` is the host's own
    skill / agent catalogue (see ``coerce_host_catalog``), used instead of the configured folders."""

    run_skill: Bridge | None = None
    """Runs a skill (``invoke_skill``)."""
    send_to_agent: Bridge | None = None
    """Hands a task to another agent (``delegate_to_agent``)."""
    dispatch_plan: Bridge | None = None
    """Accepts a checked plan and runs its steps (``plan``)."""
    catalog: Any | None = None
    """The host's catalogue; None reads the folders of ``[plugins.catalog.settings]``."""


NO_SERVICE = CatalogBridge()


def catalog_service(ctx: ToolContext) -> CatalogBridge:
    """This call's ``CatalogBridge`` (an empty one when the host supplies none)."""
    return ctx.bridge.service(CatalogBridge) or NO_SERVICE


def require_bridge(ctx: ToolContext, name: str, *, tool: str) -> Bridge:
    """The bridge ``name`` of this call's ``CatalogBridge``, or ``ToolRuntimeMissing`` saying how to
    supply it."""
    found: Bridge | None = getattr(catalog_service(ctx), name)
    if found is None:
        raise ToolRuntimeMissing(
            f"tool {tool!r} needs the host bridge {name!r}, which this host does not supply; pass "
            f"HostBridge(services={{CatalogBridge: CatalogBridge({name}=...)}}) in the ToolContext "
            "(CatalogBridge from reyn_tools_catalog)",
            tool=tool,
        )
    return found


__all__ = ["CatalogBridge", "catalog_service", "require_bridge"]
