"""A call its caller cancels still reaches the ``after`` hooks (the audit log) as ``cancelled``,
and the caller's ``CancelledError`` still propagates unchanged."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from reyn_core import ToolContext, tool
from reyn_core.host import JsonlAuditLog, RegistryBuilder, ToolCallHooks, dispatch_tool


@tool(purity="read_only")
async def wait_forever() -> None:
    """Wait until cancelled."""
    await asyncio.Event().wait()


@tool(purity="read_only", timeout_s=30)
async def wait_forever_timed() -> None:
    """Wait until cancelled (with a timeout, so it runs in its own task)."""
    await asyncio.Event().wait()


@pytest.mark.parametrize("name", ["wait_forever", "wait_forever_timed"])
async def test_caller_cancelled_call_is_audited_and_propagates(tmp_path: Path, name: str) -> None:
    audit = JsonlAuditLog(tmp_path / "audit.jsonl")
    builder = RegistryBuilder(hooks=ToolCallHooks(after=(audit,)))
    builder.register(wait_forever)
    builder.register(wait_forever_timed)
    registry = builder.freeze()
    task = asyncio.ensure_future(dispatch_tool(registry, name, {}, ToolContext()))
    await asyncio.sleep(0.05)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    (line,) = audit.path.read_text().splitlines()
    record = json.loads(line)
    assert record["tool"] == name and record["status"] == "cancelled"
