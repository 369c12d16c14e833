"""The worker's pipe loop: one load request, then calls until the host closes the pipe.

Calls run as tasks: async handlers concurrently, sync handlers inline on this thread, one at a time
(a thread cannot be stopped; this process can, and the host stops it when a cancelled call does not
end within its grace). A ``cancel`` message cancels one. A result is turned into JSON data
here and refused when its frame would exceed the limit the host sent (the host enforces the same
limit itself: this only saves the pipe the bytes).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from typing import Any

from reyn_core.host import PluginLoadError, WorkerPlugin, describe_exception, plugin_from_record
from reyn_isolation.protocol import FrameReader, FrameTooLarge, ProtocolError, encode, write_all
from reyn_isolation.wire import definition_to_data

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
        if not request.get("network", False):
            _forbid_unix_sockets()
        # the loader's own steps: import from the digested files only, API, hooks, settings, tools
        plugin = plugin_from_record(
            request["record"], request.get("settings"), source=str(request.get("source") or "the profile")
        )
        registered = plugin.register_tools(str(request.get("workspace") or "/"))
    except PluginLoadError as exc:
        write_all(proto_out, encode({"op": "load_failed", "code": exc.code, "message": exc.message}))
        return 0
    except Exception as exc:
        write_all(
            proto_out,
            encode({"op": "load_failed", "code": "RJ005", "message": f"the worker failed: {exc!r:.500}"}),
        )
        return 0
    tools = [
        {"error": item} if isinstance(item, str) else definition_to_data(item, plugin.settings)
        for item in registered
    ]
    loaded = {
        "op": "loaded",
        "hooks": plugin.hooks,
        "tools": tools,
        "diagnostics": _answer(plugin.diagnostics),
        "trusted_files": _answer(lambda: plugin.trusted_files(str(request.get("workspace") or "/"))),
        # facts, not words: the host words each warning with the loader's own templates
        "warnings": plugin.warning_facts,
    }
    if any(code == "RC008" for code, _ in plugin.warning_facts):
        loaded["setting_names"] = plugin.setting_names  # the suggestion of an ignored setting
    write_all(proto_out, encode(loaded))
    limit = int(request.get("max_result_bytes", 1 << 20))
    return asyncio.run(_serve(proto_in, proto_out, plugin, limit))


def _forbid_programs() -> None:
    """No program may start from this process on, nor any process be forked (the plugin was not
    granted ``subprocess``; each fork would bring a fresh memory and CPU allowance)."""
    from reyn_sandbox import forbid_exec, forbid_processes

    forbid_exec()
    forbid_processes()


def _forbid_unix_sockets() -> None:
    """No unix socket may be made from this process on: the plugin was not granted ``network``, and
    a read or write root can hold a service's socket file, which the kernel lets it connect to."""
    from reyn_sandbox import forbid_unix_sockets

    forbid_unix_sockets()


def _answer(hook: Callable[[], Any]) -> Any:
    """What a hook the host needs answered (``reyn_diagnostics``, ``reyn_trusted_files``) returned,
    as JSON data, or ``{"raised": ...}``: the host's stand-in hook raises that, and the loader treats
    it as a hook that raised in process (``RI008`` warns; ``RI013`` refuses the plugin)."""
    try:
        return hook()
    except (Exception, SystemExit) as exc:
        return {"raised": describe_exception(exc)}


async def _serve(proto_in: int, proto_out: int, loaded: WorkerPlugin, limit: int) -> int:
    from reyn_isolation.worker.call_server import CallServer

    loop = asyncio.get_running_loop()
    server = CallServer(loaded, proto_out, limit, loop.create_future())
    await loop.connect_read_pipe(lambda: server, os.fdopen(proto_in, "rb", buffering=0))
    return await server.closed


__all__ = ["run"]
