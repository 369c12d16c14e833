"""A separate process that uses the memory store through the real dispatcher (tests start it).

    memory_worker.py write STORE PREFIX COUNT [--agent A]  remember_* COUNT entries; print each
                                                            acknowledged slug on its own line
    memory_worker.py read DB STOPFILE                       (SQLite) hold a read transaction open and
                                                            call list_memory until STOPFILE exists;
                                                            print "reads N errors M" at the end

STORE is a SQLite file, or the memory settings as JSON (``{"backend": "postgres", ...}``; the DSN is
in the environment variable they name).

Acknowledged means dispatch_tool returned status "ok", which happens only after COMMIT returned. A
failed call prints ``slug kind: message`` on stderr and the worker goes on with the next entry.
Every ack line is one os.write on an unbuffered stdout, so a SIGKILL can never leave half a line
that claims a write.
"""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
import sys
import time
from pathlib import Path

from reyn_tools_memory import MemorySettings
from reyn_tools_memory.plugin import reyn_register_tools

from reyn_core import ToolContext, ToolOrigin
from reyn_core.host import RegistryBuilder, ToolRegistry, dispatch_tool


def settings_of(store: str) -> MemorySettings:
    if store.startswith("{"):
        return MemorySettings.model_validate(json.loads(store))
    return MemorySettings(path=store, busy_timeout_s=60)


def registry(store: str) -> ToolRegistry:
    settings = settings_of(store)
    reg = RegistryBuilder(settings={"memory": settings})
    reyn_register_tools(
        lambda t: reg.register(t, origin=ToolOrigin(kind="plugin", plugin_id="memory")), settings
    )
    return reg.freeze()


def body_for(prefix: str, i: int) -> str:
    return f"entry {i} written by {prefix}\n" + "x" * (i % 97)


async def write(store: str, prefix: str, count: int, agent: str | None) -> int:
    reg = registry(store)
    ctx = ToolContext(surface="router", agent=agent, workspace=Path.cwd())
    tool = "remember_agent" if agent else "remember_shared"
    failures = 0
    for i in range(count):
        slug = f"{prefix}-{i:06d}"
        args = {
            "slug": slug,
            "name": f"{prefix} {i}",
            "description": "written by a worker process",
            "type": "project",
            "body": body_for(prefix, i),
        }
        env = await dispatch_tool(reg, tool, args, ctx)
        if env["status"] == "ok":
            os.write(1, f"{slug}\n".encode())
        else:
            failures += 1
            error = env["error"]
            os.write(2, f"{slug} {error['kind']}: {error['message']}\n".encode())
    return 1 if failures else 0


async def read(db: str, stopfile: str) -> int:
    reg = registry(db)
    ctx = ToolContext(surface="router", workspace=Path(db).parent)
    # A long read transaction held across the writer's whole run.
    long = sqlite3.connect(db, isolation_level=None)
    long.execute("BEGIN")
    long.execute("SELECT count(*) FROM entries").fetchone()
    reads = errors = 0
    while not os.path.exists(stopfile):
        env = await dispatch_tool(reg, "list_memory", {"layer": "shared"}, ctx)
        reads += 1
        if env["status"] != "ok":
            errors += 1
            os.write(2, f"{env['error']}\n".encode())
        long.execute("SELECT count(*) FROM entries").fetchone()
        time.sleep(0.005)
    long.execute("COMMIT")
    long.close()
    print(f"reads {reads} errors {errors}", flush=True)
    return 1 if errors else 0


def main(argv: list[str]) -> int:
    if argv[0] == "write":
        agent = argv[argv.index("--agent") + 1] if "--agent" in argv else None
        return asyncio.run(write(argv[1], argv[2], int(argv[3]), agent))
    if argv[0] == "read":
        return asyncio.run(read(argv[1], argv[2]))
    print(f"unknown mode {argv[0]!r}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
