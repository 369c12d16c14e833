"""The ``serve_probe`` test plugin: tools that raise, time out, wait to be cancelled, block a
thread, check slowly, echo, defer.

Installed into a temporary site folder (a dist-info with an entry point and a RECORD, as pip would
lay it out) so a ``reyn mcp serve`` subprocess discovers it like any installed plugin.
"""

from __future__ import annotations

import asyncio
import atexit
import enum
import os
import time
from pathlib import Path

from pydantic import BaseModel

from reyn_core import ToolContext, ToolDefinition, ToolGates, hookimpl, tool

REYN_API = 1


class Unit(enum.Enum):
    kwh = "kWh"
    mwh = "MWh"


def _marker(name: str) -> Path:
    return Path(os.environ["SERVE_PROBE_MARKERS"]) / name


def _hang_at_exit() -> None:
    """An exit handler that hangs (ten minutes): a cleanup a stopping server must not wait for."""
    _marker("atexit.started").touch()
    time.sleep(600)


if os.environ.get("SERVE_PROBE_HANG_AT_EXIT"):
    atexit.register(_hang_at_exit)


@tool(cluster="probe", purity="read_only")
async def probe_echo(text: str, delay_ms: int = 0, ctx: ToolContext | None = None) -> dict:
    """Echo the text back with the calling agent (after delay_ms milliseconds)."""
    if delay_ms:
        _marker(f"echo-{text}.started").touch()  # a test can wait until the call is running
        await asyncio.sleep(delay_ms / 1000)
    return {"text": text, "agent": ctx.agent if ctx else None}


@tool(cluster="probe", purity="side_effect")
def probe_raise(detail: str = "secret-internal-detail") -> str:
    """Always raise an unexpected exception."""
    raise RuntimeError(detail)


@tool(cluster="probe", purity="external", timeout_s=0.5)
async def probe_slow() -> str:
    """Sleep far longer than this tool's own timeout."""
    await asyncio.sleep(60)
    return "late"


@tool(cluster="probe", purity="read_only")
async def probe_wait(tag: str) -> str:
    """Wait (up to a minute, or until the marker ``TAG.go`` exists) and record whether the wait
    finished or was cancelled."""
    _marker(f"{tag}.started").touch()
    try:
        for _ in range(3000):
            if _marker(f"{tag}.go").exists():
                break
            await asyncio.sleep(0.02)
    except asyncio.CancelledError:
        _marker(f"{tag}.cancelled").touch()
        raise
    _marker(f"{tag}.finished").touch()
    return "finished"


def _wait_for_go(tag: str) -> bool:
    """Block this thread until the marker ``TAG.go`` exists (a minute at most, ten when the marker
    ``TAG.long`` exists): whether it came."""
    for _ in range(30000 if _marker(f"{tag}.long").exists() else 3000):
        if _marker(f"{tag}.go").exists():
            return True
        time.sleep(0.02)
    return False


@tool(cluster="probe", purity="read_only")
def probe_block(tag: str) -> str:
    """A sync tool (it runs in a worker thread) that blocks until ``TAG.go`` exists, recording when
    it started (with the tags of the other tools still running then) and when its thread ended."""
    folder = _marker("")
    running = sorted(
        p.name[: -len(".started")]
        for p in folder.glob("*.started")
        if not (folder / p.name.replace(".started", ".finished")).exists()
    )
    _marker(f"{tag}.started").write_text(" ".join(running))
    try:
        return "finished" if _wait_for_go(tag) else "gave up"
    finally:
        _marker(f"{tag}.finished").touch()


def _check_blocks(ctx: ToolContext) -> bool:
    """Armed by the marker ``check.arm``: block until ``check.go`` exists, then say yes (no when
    ``check.deny`` exists). Unarmed (the server's start-up listing): yes at once."""
    if not _marker("check.arm").exists():
        return True
    _marker("check.started").touch()
    _wait_for_go("check")
    return not _marker("check.deny").exists()


@tool(cluster="probe", purity="read_only", available=_check_blocks)
def probe_checked() -> str:
    """A tool whose availability check may block (``_check_blocks``)."""
    return "checked"


if os.environ.get("SERVE_PROBE_CHECK_DEADLINE"):
    # Test only: a check that waits for its test's go must not meet the 1 s deadline first.
    from reyn_core import own_check

    own_check.CHECK_DEADLINE_S = float(os.environ["SERVE_PROBE_CHECK_DEADLINE"])


@tool(cluster="probe", purity="read_only")
def probe_text() -> str:
    """Return plain text (not a JSON object)."""
    return "just text"


@tool(cluster="probe", purity="side_effect", gates=ToolGates(router="deny", phase="allow"))
def probe_phase_only() -> str:
    """Only offered on the phase surface."""
    return "phase"


@tool(cluster="probe", purity="side_effect", dispatch_kind="deferred")
async def probe_deferred(question: str, ctx: ToolContext) -> dict:
    """Hand a question to the host; the answer comes later."""
    return {"accepted": "probe_deferred", "agent": "helper", "message": question}


class Reading(BaseModel):
    """One meter reading."""

    meter: str
    value: float
    unit: Unit = Unit.kwh


@tool(cluster="probe", purity="read_only")
def probe_list(count: int = 3) -> list[str]:
    """Return a list of labels (a typed, non-object result)."""
    return [f"item-{i}" for i in range(count)]


@tool(cluster="probe", purity="read_only")
def probe_reading(meter: str) -> Reading:
    """Return a typed model result."""
    return Reading(meter=meter, value=1.5)


@tool(cluster="probe", purity="read_only")
def probe_untyped(flag: bool = True):
    """Return a JSON object without saying so."""
    return {"flag": flag}


def _dialect(n: int = 0) -> dict:
    return {"n": n}


# A schema that names its dialect: MCP serves it with "$schema" (conformance's json-schema-2020-12).
PROBE_DIALECT = ToolDefinition(
    name="probe_dialect",
    description="Echo a number; the schema names its JSON Schema dialect.",
    parameters={
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "properties": {"n": {"type": "integer"}},
    },
    handler=_dialect,
    cluster="probe",
    purity="read_only",
)


@tool(cluster="probe", purity="side_effect", gates=ToolGates(router="deny", phase="allow"))
def probe_phase_map(labels: dict[str, int]) -> int:
    """Phase only, with a map parameter: no OpenAI strict form (RS101), no Gemini form (RS102)."""
    return len(labels)


@tool(cluster="probe", purity="read_only")
async def probe_progress(steps: int = 3, ctx: ToolContext | None = None) -> dict:
    """Work in steps, reporting progress and logging at each (async handler)."""
    assert ctx is not None
    ctx.log("debug", "starting", steps=steps)
    for i in range(1, steps + 1):
        await asyncio.sleep(0.01)
        ctx.report_progress(i, steps, f"step {i} of {steps}")
        ctx.log("info", f"did step {i}", step=i)
    ctx.log("warning", "all steps done")
    return {"steps": steps}


@tool(cluster="probe", purity="read_only")
def probe_progress_sync(steps: int = 3, ctx: ToolContext | None = None) -> dict:
    """The same reports from a sync handler (it runs in a worker thread)."""
    assert ctx is not None
    for i in range(1, steps + 1):
        ctx.report_progress(i, steps, f"step {i}")
        ctx.log("info", f"did step {i}")
    return {"steps": steps}


@tool(cluster="probe", purity="read_only")
async def probe_stubborn(tag: str) -> str:
    """An async tool that swallows its cancellation: it runs on until the marker ``TAG.go`` exists
    (at most ten minutes), noting ``TAG.cancelled`` when cancelled."""
    _marker(f"{tag}.started").touch()
    end = time.monotonic() + 600
    while time.monotonic() < end and not _marker(f"{tag}.go").exists():
        try:
            await asyncio.sleep(0.05)
        except asyncio.CancelledError:
            _marker(f"{tag}.cancelled").touch()
    return "stubborn"


@tool(cluster="probe", purity="read_only")
async def probe_unicode(where: str = "result", lone: bool = False, ctx: ToolContext | None = None) -> dict:
    """Put a file name in the result, an error, a progress or a log message (``where``): with
    ``lone``, one read with ``surrogateescape`` (a lone surrogate, which UTF-8 cannot carry); else
    ordinary non-ASCII text."""
    assert ctx is not None
    name = b"caf\xe9".decode("utf-8", "surrogateescape") if lone else "café 😀"
    if where == "error":
        raise RuntimeError(f"no such file: {name}")
    if where == "progress":
        ctx.report_progress(1, 1, f"read {name}")
    if where == "log":
        ctx.log("info", f"read {name}")
    return {"name": name} if where == "result" else {"done": where}


@tool(cluster="probe", purity="read_only")
def probe_number(x: float) -> dict:
    """Say which number the handler got, as text (its ``repr``: ``nan`` is sendable as text)."""
    return {"got": repr(x)}


TOOLS = (
    probe_number,
    probe_unicode,
    PROBE_DIALECT,
    probe_phase_map,
    probe_progress,
    probe_progress_sync,
    probe_echo,
    probe_raise,
    probe_slow,
    probe_wait,
    probe_block,
    probe_checked,
    probe_text,
    probe_phase_only,
    probe_deferred,
    probe_list,
    probe_reading,
    probe_untyped,
    probe_stubborn,
)


@hookimpl
def reyn_register_tools(register, settings):
    for definition in TOOLS:
        register(definition)
