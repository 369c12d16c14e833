"""The worker's pipe loop: one load request, then calls until the host closes the pipe.

Calls run concurrently as tasks; a ``cancel`` message cancels one. A result is turned into JSON data
here and refused when its frame would exceed the limit the host sent (the host enforces the same
limit itself: this only saves the pipe the bytes).
"""

from __future__ import annotations

import asyncio
import os
from typing import Any

from reyn_core.errors import ToolError, ToolRuntimeMissing
from reyn_core.isolation.protocol import HEADER, FrameReader, FrameTooLarge, ProtocolError, encode, write_all
from reyn_core.isolation.wire import context_from_data, definition_to_data
from reyn_core.jsondata import to_jsonable
from reyn_core.worker.plugin_host import LoadedPlugin, LoadFailure, load_plugin, record_from_data

LOAD_LIMIT = 64 << 20
CALL_LIMIT = 64 << 20


def run(proto_in: int, proto_out: int) -> int:
    """Load the plugin from the first request, then serve; 0 when the host closed the pipe."""
    reader = FrameReader(proto_in)
    try:
        request = reader.read(LOAD_LIMIT)
    except (ProtocolError, FrameTooLarge):
        return 2
    if request is None or request.get("op") != "load":
        return 2
    try:
        if not request.get("subprocess", False):
            _forbid_programs()
        loaded = load_plugin(record_from_data(request["record"]), request.get("settings"))
    except LoadFailure as exc:
        write_all(proto_out, encode({"op": "load_failed", "code": exc.code, "message": exc.message}))
        return 0
    except Exception as exc:
        write_all(
            proto_out,
            encode({"op": "load_failed", "code": "RJ005", "message": f"the worker failed: {exc!r:.500}"}),
        )
        return 0
    tools = []
    for item in loaded.registered:
        tools.append(item if isinstance(item, dict) else definition_to_data(item, loaded.settings))
    write_all(
        proto_out,
        encode({"op": "loaded", "hooks": loaded.hooks, "tools": tools, "diagnostics": loaded.diagnostics}),
    )
    limit = int(request.get("max_result_bytes", 1 << 20))
    return asyncio.run(_serve(proto_in, proto_out, loaded, limit))


def _forbid_programs() -> None:
    """No program may start from this process on: the plugin was not granted ``subprocess``."""
    from reyn_sandbox import forbid_exec

    forbid_exec()


async def _serve(proto_in: int, proto_out: int, loaded: LoadedPlugin, limit: int) -> int:
    loop = asyncio.get_running_loop()
    stream = asyncio.StreamReader(limit=CALL_LIMIT)
    await loop.connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(stream), os.fdopen(proto_in, "rb", buffering=0)
    )
    tasks: dict[int, asyncio.Task[None]] = {}
    shapes: dict[str, Any] = {}
    while True:
        try:
            header = await stream.readexactly(HEADER.size)
            (size,) = HEADER.unpack(header)
            if size > CALL_LIMIT:
                return 2
            import json

            message = json.loads(await stream.readexactly(size))
        except asyncio.IncompleteReadError:
            for task in tasks.values():
                task.cancel()
            return 0
        op = message.get("op")
        if op == "call":
            call_id = message["id"]
            task = asyncio.ensure_future(_call(message, loaded, shapes, proto_out, limit))
            tasks[call_id] = task
            task.add_done_callback(_forget(tasks, call_id))
        elif op == "cancel":
            running = tasks.get(message.get("id"))
            if running is not None:
                running.cancel()


def _forget(tasks: dict[int, asyncio.Task[None]], call_id: int) -> Any:
    return lambda _task: tasks.pop(call_id, None)


async def _call(
    message: dict[str, Any], loaded: LoadedPlugin, shapes: dict[str, Any], out: int, limit: int
) -> None:
    from reyn_core.dispatch.handlers import call_shape, resolve_reference
    from reyn_core.dispatch.runner import describe, handler_exit, run_handler

    call_id = message["id"]
    name = message.get("tool")
    reply: dict[str, Any]
    try:
        tool = loaded.tools.get(name)  # type: ignore[arg-type]
        if tool is None or tool.handler is None:
            raise ToolRuntimeMissing(f"tool {name!r} has no handler in this worker", tool=name)
        shape = shapes.get(name)  # type: ignore[arg-type]
        if shape is None:
            fn = (
                resolve_reference(tool.handler, tool=tool.name)
                if isinstance(tool.handler, str)
                else tool.handler
            )
            shape = shapes[tool.name] = call_shape(fn)
        ctx = context_from_data(message["ctx"], loaded.settings)
        _, kwargs = shape.bind(message.get("args") or {}, ctx)
        try:
            result = await run_handler(shape.fn, shape.is_async, tool, kwargs)
        except SystemExit as exc:
            raise handler_exit(exc) from None
        reply = {"op": "result", "id": call_id, "ok": True, "data": to_jsonable(result)}
    except asyncio.CancelledError:
        reply = {"op": "result", "id": call_id, "ok": False, "kind": "cancelled", "message": "cancelled"}
    except ToolError as exc:
        reply = {"op": "result", "id": call_id, "ok": False, "kind": exc.kind, "message": exc.message}
    except Exception as exc:
        reply = {
            "op": "result",
            "id": call_id,
            "ok": False,
            "kind": "execution_error",
            "message": describe(exc),
        }
    try:
        frame = encode(reply)
    except (TypeError, ValueError) as exc:
        frame = encode(
            {
                "op": "result",
                "id": call_id,
                "ok": False,
                "kind": "execution_error",
                "message": f"the result cannot be sent as JSON: {exc}",
            }
        )
    if len(frame) - HEADER.size > limit:
        frame = encode(
            {
                "op": "result",
                "id": call_id,
                "ok": False,
                "kind": "execution_error",
                "message": f"the result of {len(frame) - HEADER.size} bytes is over the plugin's limit "
                f"of {limit} bytes",
            }
        )
    write_all(out, frame)


__all__ = ["run"]
