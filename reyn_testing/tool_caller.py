"""Call a tool the way a surface would: through the real renderer gates and the real dispatcher."""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
from collections.abc import Awaitable, Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

from reyn_core import ToolContext
from reyn_core.host import ToolRegistry, dispatch_tool, phase_context, render_phase, render_router

T = TypeVar("T")
P = ParamSpec("P")


class Envelope(dict[str, Any]):
    """The ``dispatch_tool`` envelope (a plain dict) with conveniences for assertions.

    ``{"status": "ok", "data": ...}`` or ``{"status": "error", "error": {"kind", "message", ...}}``.
    Compares equal to the plain dict.
    """

    @property
    def ok(self) -> bool:
        """True when the call succeeded."""
        return self.get("status") == "ok"

    @property
    def data(self) -> Any:
        """The result of a successful call (``None`` for an error)."""
        return self.get("data")

    @property
    def error_kind(self) -> str | None:
        """The error kind (``invalid_arguments``, ``gate_refused``, ...) or None when ok."""
        error = self.get("error")
        return error.get("kind") if isinstance(error, Mapping) else None

    @property
    def error_message(self) -> str | None:
        """The model-facing error message, or None when ok."""
        error = self.get("error")
        return error.get("message") if isinstance(error, Mapping) else None

    def unwrap(self) -> Any:
        """The data of a successful call; ``AssertionError`` with the error envelope otherwise."""
        if not self.ok:
            raise AssertionError(f"tool call failed: {self.get('error')!r}")
        return self.data


def run_sync(make: Callable[[], Awaitable[T]]) -> T:
    """Run a coroutine to completion from sync code, also inside a running event loop.

    Inside a loop (an async test) the coroutine runs on a private loop in a worker thread.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(_as_coroutine(make))
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(lambda: asyncio.run(_as_coroutine(make))).result()


async def _as_coroutine(make: Callable[[], Awaitable[T]]) -> T:
    return await make()


def _synchronous(acall: Callable[P, Awaitable[T]]) -> Callable[P, T]:
    """The synchronous twin of the coroutine function ``acall`` (``arouter`` → ``router``): the same
    arguments, run to completion with ``run_sync``."""

    @functools.wraps(acall)
    def call(*args: P.args, **kwargs: P.kwargs) -> T:
        return run_sync(lambda: acall(*args, **kwargs))

    call.__name__ = acall.__name__.removeprefix("a")
    call.__qualname__ = acall.__qualname__.removesuffix(acall.__name__) + call.__name__
    call.__doc__ = f"Synchronous ``{acall.__name__}``."
    return call


class ToolCaller:
    """Calls tools of ``registry`` as the router or the phase would.

    Every call goes through ``dispatch_tool`` with the surface set, so the gates (role, operator,
    call), argument validation, settings injection, policy hooks and error envelopes are exactly
    those a model meets. ``router``/``phase`` are synchronous; ``arouter``/``aphase`` are awaitable.
    """

    def __init__(
        self,
        registry: ToolRegistry,
        *,
        agent: str | None = "test-agent",
        workspace: Path | None = None,
        ctx: ToolContext | None = None,
    ) -> None:
        self.registry = registry
        self.ctx = ctx if ctx is not None else ToolContext(agent=agent, workspace=workspace or Path.cwd())

    # ------------------------------------------------------------------ contexts

    def router_context(self, ctx: ToolContext | None = None) -> ToolContext:
        """``ctx`` (default: this caller's) on the router surface."""
        return (ctx or self.ctx).with_surface("router")

    def phase_context(self, allowed_ops: Iterable[str], ctx: ToolContext | None = None) -> ToolContext:
        """``ctx`` (default: this caller's) on the phase surface, carrying ``allowed_ops``."""
        return phase_context(ctx or self.ctx, allowed_ops)

    # ------------------------------------------------------------------ router

    async def arouter(
        self,
        name: str,
        args: Mapping[str, Any] | str | None = None,
        *,
        ctx: ToolContext | None = None,
        exclude: Iterable[str] = (),
    ) -> Envelope:
        """Call ``name`` as the router loop does (a model's ``tool_calls`` entry); never raises."""
        envelope = await dispatch_tool(
            self.registry,
            name,
            args if args is not None else {},
            self.router_context(ctx),
            surface="router",
            exclude=tuple(exclude),
        )
        return Envelope(envelope)

    router = _synchronous(arouter)

    def router_tools(self, ctx: ToolContext | None = None, *, exclude: Iterable[str] = ()) -> list[str]:
        """Names of the tools the router surface shows a model, in rendered order."""
        rendered = render_router(self.registry, self.router_context(ctx), exclude=tuple(exclude))
        return [entry["function"]["name"] for entry in rendered]

    # ------------------------------------------------------------------ phase

    async def aphase(
        self,
        name: str,
        args: Mapping[str, Any] | str | None = None,
        *,
        allowed_ops: Iterable[str] | None = None,
        ctx: ToolContext | None = None,
    ) -> Envelope:
        """Run ``name`` as a phase op (a ``control_ir`` entry); never raises.

        ``allowed_ops`` defaults to ``[name]`` — a phase that allows this op. Pass the phase's real
        list to test gating, e.g. ``allowed_ops=["file"]`` must refuse a tool of another cluster.
        """
        ops = tuple(allowed_ops) if allowed_ops is not None else (name,)
        envelope = await dispatch_tool(
            self.registry,
            name,
            args if args is not None else {},
            self.phase_context(ops, ctx),
            surface="phase",
            allowed_ops=ops,
        )
        return Envelope(envelope)

    phase = _synchronous(aphase)

    def phase_ops(self, allowed_ops: Iterable[str], ctx: ToolContext | None = None) -> list[str]:
        """Op kinds the phase surface offers a model for ``allowed_ops``, in rendered order."""
        ops = tuple(allowed_ops)
        surface = render_phase(self.registry, self.phase_context(ops, ctx), ops)
        return [op.kind for op in surface.ops]
