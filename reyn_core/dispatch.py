"""The one dispatcher: ``invoke_tool`` (raises typed errors) and ``dispatch_tool`` (model envelopes).

Every call goes through the same steps: lookup, gates re-checked (defense in depth: the renderers
already hid what a surface may not see), argument parsing and validation with the tool's cached
validator, lazy handler resolution, ``before`` policy hooks, execution (sync handlers in a worker
thread) under the tool's timeout, then ``after`` hooks — which also see failures.
"""

from __future__ import annotations

import contextvars
import dataclasses
import enum
import hashlib
import importlib
import inspect
import json
import logging
import os
import stat
import threading
import time
import weakref
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path, PurePath
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ValidationError

from .context import ToolContext
from .errors import (
    ArgumentProblem,
    InvalidToolArguments,
    ToolCancelled,
    ToolDenied,
    ToolError,
    ToolExecutionError,
    ToolGateRefused,
    ToolRuntimeMissing,
    ToolTimeout,
    describe_exception,
)
from .gates import as_names
from .tool import CallShape, ToolDefinition, call_shape
from .validation import parse_arguments, problems_from_pydantic, without_null_optionals

_log = logging.getLogger("reyn_core.dispatch")

if TYPE_CHECKING:
    import asyncio

    from .registry import ToolRegistry


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A call as policy hooks see it.

    ``arguments`` are validated when a ``before`` hook sees the call. An ``after`` hook may also see
    a call refused before validation (``gate_refused``, ``invalid_arguments``); its ``arguments``
    are then as sent (``{}`` when they were not a JSON object).
    """

    tool: ToolDefinition
    arguments: Mapping[str, Any]
    ctx: ToolContext
    surface: str


@dataclass(frozen=True, slots=True)
class ToolCallOutcome:
    """How a call ended, as ``after`` hooks see it."""

    status: Literal["ok", "error"]
    duration_s: float
    result: Any = None
    error: ToolError | None = None

    @property
    def kind(self) -> str:
        """``ok`` or the error kind."""
        return "ok" if self.error is None else self.error.kind


BeforeHook = Callable[[ToolCall], "str | Awaitable[str | None] | None"]
AfterHook = Callable[[ToolCall, ToolCallOutcome], "Awaitable[None] | None"]


@dataclass(frozen=True, slots=True)
class ToolCallHooks:
    """Policy points around every call.

    A ``before`` hook returns None to allow, or a reason string to deny (or raises ``ToolDenied``);
    it may be async, e.g. an approval prompt. ``after`` hooks observe every outcome; an after hook
    that raises is ignored so auditing can never break a call. The plugin loader fills these from
    the ``reyn_before_tool_call`` / ``reyn_after_tool_call`` hooks of enabled plugins.
    """

    before: tuple[BeforeHook, ...] = ()
    after: tuple[AfterHook, ...] = ()

    def __add__(self, other: ToolCallHooks) -> ToolCallHooks:
        return ToolCallHooks(self.before + other.before, self.after + other.after)


NO_HOOKS = ToolCallHooks()


# --------------------------------------------------------------------------- handler resolution

_RESOLVE_LOCK = threading.Lock()


def _resolve(registry: ToolRegistry, tool: ToolDefinition) -> CallShape:
    cache = registry._caches.handlers
    shape = cache.get(tool.name)
    if shape is not None:
        return shape
    handler = tool.handler
    if handler is None:
        raise ToolRuntimeMissing(f"tool {tool.name!r} has no handler in this installation", tool=tool.name)
    if isinstance(handler, str):
        handler = resolve_reference(handler, tool=tool.name)
    shape = call_shape(handler)
    with _RESOLVE_LOCK:
        cache[tool.name] = shape
    return shape


def resolve_reference(ref: str, *, tool: str | None = None) -> Callable[..., Any]:
    """Import a lazy ``"module:attr"`` handler. A ``ToolDefinition`` target yields its handler."""
    module_name, _, attr = ref.partition(":")
    try:
        obj: Any = importlib.import_module(module_name)
        for part in attr.split("."):
            obj = getattr(obj, part)
    except Exception as exc:
        raise ToolRuntimeMissing(
            f"the handler {ref!r} of tool {tool!r} cannot be imported ({type(exc).__name__}: {exc}); "
            "the tool is unavailable in this installation",
            tool=tool,
        ) from None
    if isinstance(obj, ToolDefinition):
        obj = obj.handler
    if not callable(obj):
        raise ToolRuntimeMissing(f"the handler {ref!r} of tool {tool!r} is not callable", tool=tool)
    return obj


# --------------------------------------------------------------------------- invoke


def _invalid(tool: ToolDefinition, problems: Sequence[ArgumentProblem]) -> InvalidToolArguments:
    listed = "; ".join(p.render() for p in problems[:8])
    more = f" (and {len(problems) - 8} more)" if len(problems) > 8 else ""
    return InvalidToolArguments(
        f"invalid arguments for {tool.name!r}: {listed}{more}", tool=tool.name, problems=problems
    )


def _gate(
    registry: ToolRegistry,
    tool: ToolDefinition,
    surface: str,
    ctx: ToolContext,
    exclude: Iterable[str],
    allowed_ops: Iterable[str] | None,
) -> None:
    decision = registry.check(tool, surface, ctx, exclude=exclude, allowed_ops=allowed_ops)
    if decision.allowed:
        return
    if decision.layer == "runtime":
        raise ToolRuntimeMissing(decision.reason, tool=tool.name)
    raise ToolGateRefused(
        f"tool {tool.name!r} is refused on the {surface} surface ({decision.layer} gate): {decision.reason}",
        tool=tool.name,
        layer=decision.layer,
        reason=decision.reason,
    )


class _HandlerExit(Exception):
    """A handler called ``sys.exit()``: a tool may fail, but it may not stop the host."""


async def _contain_exit(awaitable: Awaitable[Any]) -> Any:
    try:
        return await awaitable
    except SystemExit as exc:
        raise _HandlerExit(f"the handler called sys.exit({exc.code!r})") from None


async def _within(awaitable: Awaitable[Any], tool: ToolDefinition) -> Any:
    if tool.timeout_s is None:
        return await _contain_exit(awaitable)
    import asyncio

    # SystemExit must not cross a task boundary: the event loop would stop.
    task = asyncio.ensure_future(_contain_exit(awaitable))
    try:
        done, _ = await asyncio.wait({task}, timeout=tool.timeout_s)
    except asyncio.CancelledError:
        task.cancel()
        raise
    if not done:
        task.cancel()
        # A worker thread cannot be killed; its result is discarded when it finishes.
        raise ToolTimeout(
            f"tool {tool.name!r} did not finish within {tool.timeout_s:g} s and was stopped", tool=tool.name
        )
    return task.result()


def _in_daemon_thread(
    fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any], name: str
) -> asyncio.Future[Any]:
    """Run a sync handler that has a timeout in its own daemon thread.

    A thread cannot be killed, so a handler that hangs past its timeout keeps its thread; a daemon
    thread outside the loop's default executor means it can block neither the event loop's shutdown
    nor the interpreter's exit. Its late result is discarded.
    """
    import asyncio

    loop = asyncio.get_running_loop()
    future: asyncio.Future[Any] = loop.create_future()
    context = contextvars.copy_context()

    def deliver(ok: bool, value: Any) -> None:
        if not future.done():
            (future.set_result if ok else future.set_exception)(value)

    def target() -> None:
        try:
            outcome: tuple[bool, Any] = (True, context.run(fn, *args, **kwargs))
        except BaseException as exc:  # delivered to the awaiting call, SystemExit included
            outcome = (False, exc)
        try:
            loop.call_soon_threadsafe(deliver, *outcome)
        except RuntimeError:  # the loop is closed: nobody is waiting any more
            pass

    threading.Thread(target=target, name=f"reyn-tool-{name}", daemon=True).start()
    return future


async def _run(shape: CallShape, tool: ToolDefinition, args: Mapping[str, Any], ctx: ToolContext) -> Any:
    try:
        pos, kwargs = shape.bind(args, ctx)
    except ValidationError as exc:
        raise _invalid(tool, problems_from_pydantic(exc)) from None
    if shape.is_async:
        return await _within(shape.fn(*pos, **kwargs), tool)
    if tool.timeout_s is None:
        import asyncio

        result = await _contain_exit(asyncio.to_thread(shape.fn, *pos, **kwargs))
    else:
        result = await _within(_in_daemon_thread(shape.fn, pos, kwargs, tool.name), tool)
    if inspect.isawaitable(result):  # a sync callable that returned a coroutine
        result = await _within(result, tool)
    return result


async def _maybe_await(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value


def _is_cancellation(exc: BaseException) -> bool:
    import asyncio

    return isinstance(exc, asyncio.CancelledError)


def _caller_cancelled() -> bool:
    """Whether the running task itself is being cancelled (by its caller), as opposed to a
    ``CancelledError`` raised inside the handler. Before Python 3.11 this cannot be told apart, so
    every cancellation is treated as the caller's and propagates."""
    import asyncio

    task = asyncio.current_task()
    cancelling = getattr(task, "cancelling", None)
    return cancelling is None or bool(cancelling())


async def _check_before(hooks: ToolCallHooks, call: ToolCall) -> None:
    for before in hooks.before:
        try:
            reason = await _maybe_await(before(call))
        except ToolError:
            raise
        except Exception as exc:  # a policy that breaks denies: fail closed
            raise ToolDenied(
                f"call to {call.tool.name!r} denied: a policy hook failed ({_describe(exc)})",
                tool=call.tool.name,
            ) from None
        if reason:
            raise ToolDenied(f"call to {call.tool.name!r} denied by policy: {reason}", tool=call.tool.name)


async def invoke_tool(
    registry: ToolRegistry,
    name: str,
    args: Mapping[str, Any] | str | bytes | None,
    ctx: ToolContext,
    *,
    surface: str | None = None,
    exclude: Iterable[str] = (),
    allowed_ops: Iterable[str] | None = None,
) -> Any:
    """Run one tool call and return the handler's result, or raise a typed ``ToolError``.

    ``args`` may be a dict or the JSON string a model sent. ``surface`` defaults to ``ctx.surface``.
    ``exclude`` / ``allowed_ops`` must be what the renderer was given, so the gates agree.

    ``after`` hooks observe every outcome of a call to a registered tool, refusals included;
    ``before`` hooks see only calls that passed the gates and argument validation. A caller that
    cancels this coroutine gets its ``CancelledError`` back unchanged.
    """
    surface = surface or ctx.surface
    exclude = as_names(exclude, "exclude")  # host mistakes raise TypeError here, not as a tool error
    if allowed_ops is not None:
        allowed_ops = as_names(allowed_ops, "allowed_ops")
    tool = registry.get(name)
    hooks = registry.hooks or NO_HOOKS
    call_ctx = registry.context_for(tool, ctx)
    if call_ctx.surface != surface:
        call_ctx = call_ctx.with_surface(surface)  # type: ignore[arg-type]
    started = time.perf_counter()
    parsed, problems = parse_arguments(args)
    call = ToolCall(tool, parsed if isinstance(parsed, Mapping) else {}, call_ctx, surface)
    try:
        _gate(registry, tool, surface, call_ctx, exclude, allowed_ops)  # available() sees this surface
        if not problems:
            parsed = without_null_optionals(parsed, registry._null_optionals(tool))
            problems = registry._validator(tool)(parsed)
        if problems:
            raise _invalid(tool, problems)
        shape = _resolve(registry, tool)
        await _check_before(hooks, call)
        result = await _run(shape, tool, parsed, call_ctx)
    except ToolError as exc:
        exc.tool = exc.tool or tool.name
        await _after(hooks, call, ToolCallOutcome("error", time.perf_counter() - started, error=exc))
        raise
    except Exception as exc:
        failed = ToolExecutionError(f"tool {tool.name!r} failed: {_describe(exc)}", tool=tool.name)
        await _after(hooks, call, ToolCallOutcome("error", time.perf_counter() - started, error=failed))
        raise failed from exc
    except BaseException as exc:  # CancelledError (asyncio is imported lazily, hence no except clause)
        if not _is_cancellation(exc):
            raise  # the process is stopping
        cancelled = ToolCancelled(f"tool {tool.name!r} was cancelled before it finished", tool=tool.name)
        # A call the caller cancels (e.g. an MCP client's notifications/cancelled) is audited too.
        await _after(hooks, call, ToolCallOutcome("error", time.perf_counter() - started, error=cancelled))
        if _caller_cancelled():
            raise  # the caller's own cancellation propagates unchanged: never swallow that
        raise cancelled from None
    await _after(hooks, call, ToolCallOutcome("ok", time.perf_counter() - started, result=result))
    return result


def _describe(exc: BaseException) -> str:
    if isinstance(exc, _HandlerExit):
        return str(exc)
    return describe_exception(exc)


async def _after(hooks: ToolCallHooks, call: ToolCall, outcome: ToolCallOutcome) -> None:
    for after in hooks.after:
        try:
            await _maybe_await(after(call, outcome))
        except Exception as exc:  # observers must never turn a call into a failure, but say so
            _log.warning("after hook %r failed for tool %r: %s", after, call.tool.name, _describe(exc))


async def dispatch_tool(
    registry: ToolRegistry,
    name: str,
    args: Mapping[str, Any] | str | bytes | None,
    ctx: ToolContext,
    *,
    surface: str | None = None,
    exclude: Iterable[str] = (),
    allowed_ops: Iterable[str] | None = None,
) -> dict[str, Any]:
    """``invoke_tool`` for model-facing surfaces: never raises for a tool failure.

    Returns ``{"status": "ok", "data": <JSON-safe result>}`` or
    ``{"status": "error", "error": {"kind": ..., "message": ...}}`` (plus ``layer`` for gate refusals
    and ``errors`` with JSON pointers for invalid arguments). No tracebacks reach the model.
    """
    try:
        result = await invoke_tool(
            registry, name, args, ctx, surface=surface, exclude=exclude, allowed_ops=allowed_ops
        )
    except ToolError as exc:
        return exc.to_envelope()
    try:
        data = to_jsonable(result)
    except Exception as exc:  # e.g. a self-referencing result: report it, never raise
        tool = name if isinstance(name, str) else "?"
        return ToolExecutionError(
            f"tool {tool!r} returned a result that cannot be sent as JSON: {_describe(exc)}", tool=tool
        ).to_envelope()
    return {"status": "ok", "data": data}


def to_jsonable(value: Any) -> Any:
    """Turn a handler's result into JSON-safe data (pydantic models, dataclasses, paths, sets…)."""
    if value is None or isinstance(value, str | int | float | bool):
        return value
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return to_jsonable(dataclasses.asdict(value))
    if isinstance(value, Mapping):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        items = sorted(value, key=repr) if isinstance(value, set | frozenset) else value
        return [to_jsonable(v) for v in items]
    if isinstance(value, PurePath):
        return str(value)
    if isinstance(value, enum.Enum):
        return to_jsonable(value.value)
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value)


# --------------------------------------------------------------------------- audit


def argument_hash(arguments: Any) -> str:
    """sha256 of the canonical JSON of the arguments (the audit log never stores them)."""
    # ASCII escapes: a lone surrogate from a model must hash (and log) like anything else.
    canonical = json.dumps(to_jsonable(arguments), sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return "sha256:" + hashlib.sha256(canonical.encode()).hexdigest()


_AUDIT_OPEN_FLAGS = (
    os.O_WRONLY
    | os.O_APPEND
    | os.O_CREAT
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_CLOEXEC", 0)
)
_AUDIT_IDLE_S = 5.0  # the writer thread exits after this long without work (and starts again on demand)


def _file_kind(mode: int) -> str:
    for test, kind in (
        (stat.S_ISLNK, "a symbolic link"),
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a FIFO (named pipe)"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
    ):
        if test(mode):
            return kind
    return "not a regular file"


def _not_regular(path: Path, mode: int) -> str:
    return (
        f"the audit log {path} is {_file_kind(mode)}, not a regular file; "
        "point [audit] log at a regular file (symbolic links are not followed)"
    )


@dataclass(slots=True)
class _AuditOp:
    """One request to the writer thread: append ``line`` (a write) or only check (``line`` None)."""

    line: bytes | None
    loop: asyncio.AbstractEventLoop | None = None
    future: asyncio.Future[str | None] | None = None
    event: threading.Event | None = None
    result: str | None = None  # why the line could not be written / the log cannot be (None: fine)


class _AuditWriter:
    """The thread that owns the audit log's file descriptor; the event loop never touches the file.

    Requests are batched: everything queued while one ``os.write`` runs goes into the next one. A
    request's future is settled only after its line was handed to the OS (or refused), so a call's
    result never returns before its audit line is written. Before each batch the path is
    ``lstat``-ed: a rotated or deleted file is reopened, and anything but a regular file (FIFO,
    device, socket, directory, symbolic link) is refused — opened with ``O_NOFOLLOW|O_NONBLOCK`` so
    that nothing at the path can make a write block or go elsewhere.
    """

    _all: weakref.WeakSet[_AuditWriter] = weakref.WeakSet()

    def __init__(self, path: Path) -> None:
        self.path = path
        self._cond = threading.Condition()
        self._queue: list[_AuditOp] = []
        self._thread: threading.Thread | None = None
        self._fd: int | None = None
        self._ident: tuple[int, int] | None = None
        _AuditWriter._all.add(self)

    def submit(self, op: _AuditOp) -> None:
        with self._cond:
            self._queue.append(op)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="reyn-audit-log", daemon=True)
                self._thread.start()
            else:
                self._cond.notify()

    def _run(self) -> None:
        while True:
            with self._cond:
                if not self._queue:
                    self._cond.wait(timeout=_AUDIT_IDLE_S)
                if not self._queue:
                    self._thread = None
                    self._close()
                    return
                batch, self._queue = self._queue, []
            self._process(batch)

    def _process(self, batch: list[_AuditOp]) -> None:
        try:
            reason = self._ensure_open()
            data = b"".join(op.line for op in batch if op.line is not None)
            if data and reason is None:
                reason = self._write(data)
        except Exception as exc:  # never leave a caller waiting
            reason = f"the audit log {self.path} cannot be written ({describe_exception(exc)})"
        for op in batch:
            op.result = reason
        _settle(batch)

    def _ensure_open(self) -> str | None:
        try:
            st: os.stat_result | None = os.lstat(self.path)
        except (FileNotFoundError, NotADirectoryError):  # absent (or a parent is a file: said below)
            st = None
        except OSError as exc:
            return f"the audit log {self.path} cannot be written ({exc.strerror or exc})"
        if self._fd is not None:
            if st is not None and stat.S_ISREG(st.st_mode) and (st.st_dev, st.st_ino) == self._ident:
                return None
            self._close()  # rotated, deleted or replaced: open whatever is there now
        if st is not None and not stat.S_ISREG(st.st_mode):
            return _not_regular(self.path, st.st_mode)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, _AUDIT_OPEN_FLAGS, 0o600)
        except OSError as exc:
            if st is None:
                try:  # lost a race with something created at the path: name what it is
                    return _not_regular(self.path, os.lstat(self.path).st_mode)
                except OSError:
                    pass
            return f"the audit log {self.path} cannot be written ({exc.strerror or exc})"
        fst = os.fstat(fd)
        if not stat.S_ISREG(fst.st_mode):
            os.close(fd)
            return _not_regular(self.path, fst.st_mode)
        self._fd, self._ident = fd, (fst.st_dev, fst.st_ino)
        return None

    def _write(self, data: bytes) -> str | None:
        assert self._fd is not None
        view = memoryview(data)
        try:
            while view:
                view = view[os.write(self._fd, view) :]
        except OSError as exc:
            self._close()
            return f"the audit log {self.path} cannot be written ({exc.strerror or exc})"
        return None

    def _close(self) -> None:
        if self._fd is not None:
            try:
                os.close(self._fd)
            except OSError:
                pass
        self._fd = self._ident = None

    def _after_fork(self) -> None:
        """In a forked child the thread is gone: start afresh (the descriptor is shared, so reopen)."""
        self._cond = threading.Condition()
        self._queue = []
        self._thread = None
        self._fd = self._ident = None


def _audit_after_fork() -> None:
    for writer in list(_AuditWriter._all):
        writer._after_fork()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_audit_after_fork)


def _settle(batch: Sequence[_AuditOp]) -> None:
    """Wake every waiter of a batch: one ``call_soon_threadsafe`` per event loop, events directly."""
    by_loop: dict[asyncio.AbstractEventLoop, list[_AuditOp]] = {}
    for op in batch:
        if op.event is not None:
            op.event.set()
        elif op.loop is not None:
            by_loop.setdefault(op.loop, []).append(op)
    for loop, ops in by_loop.items():
        try:
            loop.call_soon_threadsafe(_settle_futures, ops)
        except RuntimeError:  # the loop is closed: nobody is waiting any more
            pass


def _settle_futures(ops: Sequence[_AuditOp]) -> None:
    for op in ops:
        if op.future is not None and not op.future.done():
            op.future.set_result(op.result)


class JsonlAuditLog:
    """An append-only JSONL audit sink, usable as an ``after`` hook.

    One line per call: time, surface, agent, tool, plugin id, digest, status, duration, argument
    hash. Lines are written off the event loop by one writer thread per log, batched, with
    ``O_APPEND`` writes of whole lines, so concurrent processes interleave whole lines only.

    Guarantee: when the hook's future is done — the dispatcher awaits it before the call's result
    returns — the line has been handed to the OS with ``write(2)`` (it survives a crash of this
    process, not a power loss: there is no ``fsync``). A line that cannot be written is logged as an
    error, and every later call is refused by ``refuse_when_unwritable`` until the log works again.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._writer = _AuditWriter(self.path)

    def record(self, call: ToolCall, outcome: ToolCallOutcome) -> bytes:
        """The JSON line (with its newline) for one call."""
        origin = call.tool.origin
        record = {
            "time": datetime.now(timezone.utc).isoformat(timespec="milliseconds"),
            "surface": call.surface,
            "agent": call.ctx.agent,
            "tool": call.tool.name,
            "plugin": origin.plugin_id if origin else None,
            "digest": origin.tree_digest if origin else None,
            "status": outcome.kind,
            "duration_ms": round(outcome.duration_s * 1000, 3),
            "args_sha256": argument_hash(call.arguments),
        }
        return (json.dumps(record, separators=(",", ":"), ensure_ascii=True) + "\n").encode()

    def __call__(self, call: ToolCall, outcome: ToolCallOutcome) -> Awaitable[None] | None:
        """Append the call's line. In an event loop this returns an awaitable that is done once the
        line was written (the line is queued at once, whether or not it is awaited); without a
        running loop it writes before returning. Raises ``OSError`` when the line was not written."""
        waiting = self._request(self.record(call, outcome))
        if waiting is None:
            return None
        return self._raise_on_failure(waiting)

    async def _raise_on_failure(self, waiting: Awaitable[str | None]) -> None:
        reason = await waiting
        if reason is not None:
            _log.error("audit line lost: %s", reason)
            raise OSError(reason)

    def _request(self, line: bytes | None) -> asyncio.Future[str | None] | None:
        """Queue one op; in a running loop return its future, else block until done (raising on failure)."""
        import asyncio

        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            loop = None
        if loop is None:
            op = _AuditOp(line, event=threading.Event())
            self._writer.submit(op)
            assert op.event is not None
            op.event.wait()
            if op.result is not None:
                if line is None:
                    raise _Unwritable(op.result)
                raise OSError(op.result)
            return None
        op = _AuditOp(line, loop=loop, future=loop.create_future())
        self._writer.submit(op)
        return op.future

    def unwritable_reason(self) -> str | None:
        """Why the log could not be appended to, judged without writing anything (None: it can)."""
        try:
            st = os.lstat(self.path)
        except (FileNotFoundError, NotADirectoryError):  # absent (or a parent is a file: said below)
            st = None
        except OSError as exc:
            return f"the audit log {self.path} cannot be written ({exc.strerror or exc})"
        if st is not None and not stat.S_ISREG(st.st_mode):
            return _not_regular(self.path, st.st_mode)
        node = self.path if st is not None else self.path.parent
        while not node.exists():
            node = node.parent
        if node != self.path and not node.is_dir():
            return f"the audit log {self.path} cannot be created: {node} is not a directory"
        if not os.access(node, os.W_OK | (os.X_OK if node.is_dir() else 0)):
            return f"the audit log {self.path} is not writable ({node} refuses writes)"
        return None

    def refuse_when_unwritable(self, call: ToolCall) -> Awaitable[str | None] | str | None:
        """``before`` hook: fail closed — no tool runs while its call cannot be audited. The check
        (open or reopen, regular file only) runs on the writer thread, never on the event loop."""
        try:
            waiting = self._request(None)
        except _Unwritable as exc:
            return _refusal(str(exc))
        return None if waiting is None else _refusal_when(waiting)

    def hooks(self) -> ToolCallHooks:
        """This sink as a ``ToolCallHooks``: a ``before`` check that refuses calls while the log
        cannot be written, and the ``after`` hook that writes the line."""
        return ToolCallHooks(before=(self.refuse_when_unwritable,), after=(self,))


class _Unwritable(Exception):
    pass


def _refusal(reason: str) -> str:
    return f"{reason}, so no call may run"


async def _refusal_when(waiting: Awaitable[str | None]) -> str | None:
    reason = await waiting
    return None if reason is None else _refusal(reason)
