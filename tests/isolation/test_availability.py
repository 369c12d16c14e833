"""Where an isolated tool's ``available(ctx)`` runs: rendering uses the answers the worker gave once at
load, per surface (``gates.check`` is synchronous and runs on every render: a pipe round trip there
would block the event loop behind whatever the worker runs); dispatch asks the check again in the
worker, with the call's context, before the handler runs (the call is there already: no extra round
trip), and refuses exactly as the host's dispatcher does in process. Real workers."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

import reyn_core.host as host
from reyn_core import ToolContext

from .plugin_kit import checked_plugin, declaration, install_package_plugin, load_cleanly

GATED = checked_plugin(
    """
def not_for_mallory(ctx):
    return ctx.agent != "mallory"
""",
    gated="not_for_mallory",
)


@pytest.fixture
def loads(site: Path) -> dict[str, Any]:
    install_package_plugin(site, "gated", {"__init__.py": GATED, "reyn_permissions.toml": declaration()})
    return {isolation: load_cleanly("gated", isolation) for isolation in ("in-process", "process")}


def _names(result: Any, ctx: ToolContext) -> list[str]:
    return [t["function"]["name"] for t in host.render_router(result.registry, ctx)]


def _call(result: Any, ctx: ToolContext) -> dict[str, Any]:
    return asyncio.run(host.dispatch_tool(result.registry, "gated", {}, ctx))


def test_a_call_is_checked_in_the_worker_with_its_own_context(loads: dict[str, Any]) -> None:
    mallory = ToolContext(surface="router", agent="mallory")
    isolated, in_process = _call(loads["process"], mallory), _call(loads["in-process"], mallory)
    assert isolated["status"] == "error" and isolated["error"]["kind"] == "gate_refused"
    assert isolated == in_process  # the same refusal, word for word
    alice = ToolContext(surface="router", agent="alice")  # positive control
    assert (
        _call(loads["process"], alice) == _call(loads["in-process"], alice) == {"status": "ok", "data": "ran"}
    )


def test_rendering_uses_the_answer_given_once_at_load(loads: dict[str, Any]) -> None:
    mallory = ToolContext(surface="router", agent="mallory")
    # at load the check saw no agent: the isolated tool is shown to mallory, in process it is not; a call
    # of it is still refused (above): a call runs only when the load-time answer and the call's own
    # check both allow it, so what runs is never more than in process
    assert _names(loads["process"], mallory) == ["gated"]
    assert _names(loads["in-process"], mallory) == []
    alice = ToolContext(surface="router", agent="alice")
    assert _names(loads["process"], alice) == _names(loads["in-process"], alice) == ["gated"]
