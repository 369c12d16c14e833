"""``dispatch_batch``: the calls of one model turn, ordered by what they touch (``purity``).

A model may emit several calls at once. ``read_only`` calls run concurrently; a ``side_effect`` call
is a barrier: it starts only after every call before it finished, runs alone, and every call after
it starts only after it finished — so a read after a write sees the write, and writes happen in the
order the model emitted them. ``external`` calls run concurrently like reads, at most
``external_limit`` of the batch at a time per plugin (per tool for a host tool).

A side-effecting call that does not end ``ok`` (it failed, was refused, or waits for approval)
stops the batch: the calls after it are not started and get a ``not_run`` envelope naming it, since
they may depend on what it would have done; the calls before it have finished. That holds for a
write the gates refused too. A call whose tool is not registered runs nothing, so it is ordered like
a read.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..context import ToolContext
from ..errors import ToolNotRun
from ..registry import ToolRegistry
from .dispatcher import dispatch_tool

if TYPE_CHECKING:
    from typing import Unpack

    from .dispatcher import CallOptions

BatchCall = tuple[str, "Mapping[str, Any] | str | bytes | None"]
"""One call of a batch: the tool's name and its arguments (a dict or the model's JSON text)."""

Dispatch = Callable[[int, str, Any], Awaitable[dict[str, Any]]]
"""How one call is run (index in the batch, name, arguments) → its envelope; ``dispatch_tool`` by default."""

DEFAULT_EXTERNAL_LIMIT = 4


def _purity(registry: ToolRegistry, name: object) -> tuple[str, str]:
    """The call's purity and its concurrency group (its plugin, else its name)."""
    if type(name) is not str or name not in registry:
        return "read_only", ""
    tool = registry.get(name)
    origin = tool.origin
    return tool.purity, (origin.plugin_id if origin is not None and origin.plugin_id else name)


def _not_run(name: object, index: int, blocker: str, envelope: Mapping[str, Any]) -> dict[str, Any]:
    error = envelope.get("error")
    kind = error.get("kind", "error") if isinstance(error, Mapping) else "error"
    shown = name if isinstance(name, str) else "?"
    return ToolNotRun(
        f"call {shown!r} was not run: the side-effecting call #{index + 1} ({blocker!r}) before it "
        f"ended {kind}; call it again once that is resolved",
        tool=shown,
    ).to_envelope()


async def dispatch_batch(
    registry: ToolRegistry,
    calls: Sequence[BatchCall],
    ctx: ToolContext,
    *,
    external_limit: int = DEFAULT_EXTERNAL_LIMIT,
    dispatch: Dispatch | None = None,
    **options: Unpack[CallOptions],
) -> list[dict[str, Any]]:
    """Run ``calls`` in purity order (module docstring) and return one envelope per call, in order.

    ``options`` are ``dispatch_tool``'s (surface, exclude, allowed_ops). ``dispatch`` replaces how one
    call is run (a surface that emits events or sets a span's call id around ``dispatch_tool``)."""
    if external_limit < 1:
        raise ValueError("external_limit must be at least 1")
    if "approval" in options:  # one request id for every call would void it on the first other call
        raise TypeError("dispatch_batch takes no approval: resume a call by its own id through dispatch=")

    async def default(index: int, name: str, args: Any) -> dict[str, Any]:
        return await dispatch_tool(registry, name, args, ctx, **options)

    run = dispatch or default
    limits: dict[str, asyncio.Semaphore] = {}

    async def limited(index: int, name: str, args: Any, group: str) -> dict[str, Any]:
        semaphore = limits.setdefault(group, asyncio.Semaphore(external_limit))
        async with semaphore:
            return await run(index, name, args)

    results: list[dict[str, Any] | None] = [None] * len(calls)
    concurrent: list[tuple[int, Awaitable[dict[str, Any]]]] = []

    async def drain() -> None:
        if concurrent:
            envelopes = await asyncio.gather(*(aw for _, aw in concurrent))
            for (i, _), envelope in zip(concurrent, envelopes, strict=True):
                results[i] = envelope
            concurrent.clear()

    for index, (name, args) in enumerate(calls):
        purity, group = _purity(registry, name)
        if purity != "side_effect":
            task = limited(index, name, args, group) if purity == "external" else run(index, name, args)
            concurrent.append((index, asyncio.ensure_future(task)))
            continue
        await drain()  # the barrier: everything before it has finished
        envelope = await run(index, name, args)
        results[index] = envelope
        if envelope.get("status") != "ok":
            for later in range(index + 1, len(calls)):
                results[later] = _not_run(calls[later][0], index, name, envelope)
            return [r for r in results if r is not None]
    await drain()
    return [r for r in results if r is not None]
