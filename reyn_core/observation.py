"""The one seam through which an add-on observes the core at work: dispatched calls, the phases of
a load, and calls that cross into an isolated worker (issue 24).

The core names no tracing library. An ``Observer`` installed for the process (``observe_with``; the
tracing add-on reyn-otel installs one when a host or a profile turns tracing on) is handed:

- every dispatched call (``Observer.call``), which it runs itself through ``proceed``, so whatever
  it makes current (a span) stays current around the gates, the hooks and the handler;
- each phase of a load (``Observer.phase``), with the diagnostics that phase adds;
- a call crossing into an isolated worker: what the worker continues (``Observer.carrier``, sent
  with the call) and what it sent back (``Observer.adopt``).

With no observer, the dispatcher pays one module-attribute test per call (``active is None``) and a
load one per phase; nothing else is imported or called.
"""

from __future__ import annotations

import contextvars
from collections.abc import Awaitable, Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from typing import Any, Protocol


class Phase(Protocol):
    """What a load tells the observer about one of its phases."""

    def diagnostics(self, diags: Sequence[Any]) -> None:
        """The diagnostics the phase added."""

    def set(self, key: str, value: Any) -> None:
        """A fact about the phase (e.g. how many plugins were found)."""


@dataclass(frozen=True, slots=True)
class ObservedCall:
    """One dispatched call as an observer sees it, before it runs.

    ``surface`` is the call's surface (the context's when the caller gave none); ``call_id`` the id
    the model gave it (``tool_call_id``). ``arguments(args)`` is the dispatcher's own parse of the
    arguments, ``(parsed, problems)``, a copy no one else holds; ``argument_hash(parsed, key=...)``
    the keyed hash the audit log records for them."""

    registry: Any
    name: Any
    args: Any
    ctx: Any
    surface: str
    call_id: str | None
    arguments: Callable[[Any], tuple[Any, Any]]
    argument_hash: Callable[..., str]


class Observer(Protocol):
    """What an add-on installs with ``observe_with``."""

    tracer: Any
    """What a runtime on top of the core opens its own spans with (None: it has none)."""

    async def call(self, call: ObservedCall, proceed: Callable[[], Awaitable[Any]]) -> Any:
        """Run the call (``await proceed()``) and return its result or raise its error unchanged."""

    def phase(self, name: str, plugin: str | None) -> AbstractContextManager[Phase]:
        """A load phase (``reyn.load``, ``reyn.load.discovery``, …), entered around the phase."""

    def carrier(self) -> dict[str, str] | None:
        """What an isolated worker needs to continue this call's observation (None: nothing)."""

    def adopt(self, records: Any) -> int:
        """What a worker sent back with its reply (untrusted data); never raises."""


active: Observer | None = None
"""The installed observer, or None (the dispatcher tests only this)."""

# Set by ``observed`` just before it runs ``invoke_tool`` again for the call it wraps; that inner call
# clears it first thing (``opens_call``), so it is not observed twice while every call its handler
# makes is observed on its own.
_inner: contextvars.ContextVar[bool] = contextvars.ContextVar("reyn_observed_inner", default=False)
_call_id: contextvars.ContextVar[str | None] = contextvars.ContextVar("reyn_tool_call_id", default=None)


def observe_with(observer: Observer | None) -> None:
    """Install ``observer`` for this process (None: observe nothing)."""
    global active
    active = observer


def active_observer() -> Observer | None:
    """The installed observer, or None: what an extension that runs calls elsewhere (reyn-isolation's
    worker client) asks for ``carrier`` and ``adopt``."""
    return active


def active_tracer() -> Any | None:
    """The installed observer's tracer, or None: what a runtime on top of the core (reyn-loops'
    ``chat`` spans) opens its own spans with, so they share the set-up."""
    observer = active
    return None if observer is None else observer.tracer


def opens_call() -> bool:
    """Whether this ``invoke_tool`` call is handed to the observer: False only for the inner call of
    ``observed``."""
    if _inner.get():
        _inner.set(False)
        return False
    return True


@contextmanager
def tool_call_id(call_id: str | None) -> Iterator[None]:
    """Within this block, dispatched calls carry ``call_id`` (the id the model gave the call; the
    loops set it) to the observer."""
    token = _call_id.set(call_id)
    try:
        yield
    finally:
        _call_id.reset(token)


async def observed(
    invoke: Callable[..., Awaitable[Any]],
    registry: Any,
    name: Any,
    args: Any,
    ctx: Any,
    surface: str | None,
    exclude: Iterable[str],
    allowed_ops: Iterable[str] | None,
    *,
    arguments: Callable[[Any], tuple[Any, Any]],
    argument_hash: Callable[..., str],
    approval: str | None = None,
) -> Any:
    """The dispatcher's call, handed to the installed observer, which runs it through ``proceed``.

    The dispatcher hands in its own argument copy and keyed hash (this module sits below the
    dispatcher, so the load's observation can use it without importing the dispatcher)."""
    observer = active
    assert observer is not None  # the dispatcher calls this only with an observer installed

    async def proceed() -> Any:
        _inner.set(True)  # the call below is the observed one: it is not handed over again
        try:
            return await invoke(
                registry,
                name,
                args,
                ctx,
                surface=surface,
                exclude=exclude,
                allowed_ops=allowed_ops,
                approval=approval,
            )
        finally:
            _inner.set(False)  # even if the observer was removed before the inner call looked

    call = ObservedCall(
        registry, name, args, ctx, surface or ctx.surface, _call_id.get(), arguments, argument_hash
    )
    return await observer.call(call, proceed)


class _NoPhase:
    __slots__ = ()

    def diagnostics(self, diags: Sequence[Any]) -> None:
        return None

    def set(self, key: str, value: Any) -> None:
        return None


_NO_PHASE = _NoPhase()


@contextmanager
def phase(name: str, plugin: str | None = None) -> Iterator[Phase]:
    """The load phase ``name`` as the installed observer sees it (a no-op without one)."""
    observer = active
    if observer is None:
        yield _NO_PHASE
        return
    with observer.phase(name, plugin) as observed_phase:
        yield observed_phase


__all__ = [
    "ObservedCall",
    "Observer",
    "Phase",
    "active_observer",
    "active_tracer",
    "observe_with",
    "observed",
    "opens_call",
    "phase",
    "tool_call_id",
]
