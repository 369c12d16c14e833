"""The host's definitions of an isolated plugin's tools: the worker's definitions with a pipe handler.

Each definition is rebuilt from what the worker served (so its ``definition_digest`` is the worker's)
and gets a handler that sends the dispatcher's validated arguments and the context as data to the
worker. ``available(ctx)`` becomes the answers the worker gave once at load, per surface (what
rendering uses: ``gates.check`` is synchronous, and a round trip there would block the loop behind the
worker's calls); the worker asks the tool's own check again with each call's context before running
it (``worker.call_server``), so a call runs only when both allow it. A tool
with a schema enricher is refused (``RJ009``): the enricher runs on every render, with the render's
context, in the host — it cannot be asked across a pipe in time, and computing it once would serve a
schema the tool did not choose.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from reyn_core import ToolContext, ToolRuntimeMissing
from reyn_isolation.client import WorkerClient
from reyn_isolation.codes import Finding
from reyn_isolation.wire import context_to_data, definition_from_data


def pipe_handler(client: WorkerClient, name: str) -> Callable[..., Any]:
    """The handler of tool ``name``: one call to the worker."""

    async def isolated_call(ctx: ToolContext, **arguments: Any) -> Any:
        return await client.call(name, arguments, context_to_data(ctx))

    isolated_call.__qualname__ = f"isolated:{client.spec.plugin_id}:{name}"
    return isolated_call


class WorkerCheckFailed(Exception):
    """The tool's own check failed in the worker at load; the message is the worker's text of what
    failed, for the host's operator's log (``gates.available`` logs it and words the refusal)."""


def availability_check(table: Mapping[str, Any]) -> Callable[[ToolContext], bool]:
    """``available(ctx)`` from the worker's per-surface answers (``wire.availability_table``): the
    context's surface decides, and so does the surface a host says it serves (``extras["served_by"]``)
    when it names one. A check that failed in the worker raises ``WorkerCheckFailed`` here, in the
    host, so the host's gates log it in the registry's log of failures (``RT011``)."""

    def available(ctx: ToolContext) -> bool:
        for surface in (ctx.surface, ctx.extras.get("served_by")):
            answer = table.get(surface) if isinstance(surface, str) else None
            if answer is None:
                continue
            allowed, reason, failure = [*list(answer), None, None][:3]
            if allowed is not True:
                if isinstance(failure, str):
                    raise WorkerCheckFailed(failure[-16_000:])
                if reason:
                    raise ToolRuntimeMissing(str(reason)[:4000])
                return False
        return True

    return available


def proxies(
    client: WorkerClient, plugin_id: str, tools: list[Any], default_timeout_s: float
) -> tuple[list[object], list[Finding]]:
    """The host's definitions of the worker's tools, plus findings for what could not cross. An entry
    that is not a definition is passed on as is (the loader reports it, ``RT001``)."""
    out: list[object] = []
    findings: list[Finding] = []
    for item in tools:
        if not isinstance(item, dict) or "served" not in item:
            out.append(str(item.get("error")) if isinstance(item, dict) else item)
            continue
        try:
            definition = definition_from_data(item)
        except (TypeError, ValueError, KeyError) as exc:
            findings.append(
                Finding(
                    "RJ005", f"the worker of plugin {plugin_id!r} sent a definition that is not one: {exc}"
                )
            )
            continue
        if item.get("has_schema_enricher"):
            findings.append(
                Finding(
                    "RJ009",
                    f"tool {definition.name!r} of isolated plugin {plugin_id!r} has a schema enricher, which "
                    "runs in the host on every render; it is not registered",
                    tool=definition.name,
                )
            )
            continue
        table = item.get("available")
        out.append(
            replace(
                definition,
                handler=None if item.get("handler_missing") else pipe_handler(client, definition.name),
                available=availability_check(table) if isinstance(table, dict) else None,
                timeout_s=definition.timeout_s if definition.timeout_s is not None else default_timeout_s,
            )
        )
    return out, findings


__all__ = ["WorkerCheckFailed", "availability_check", "pipe_handler", "proxies"]
