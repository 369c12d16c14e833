"""What records a call's outcome states the outcome its caller received (issue 24): a result
``dispatch_tool`` cannot send (text UTF-8 cannot carry, not JSON data) is refused inside the call,
so the audit log's line and the ``after`` hooks say ``execution_error``, as the envelope does —
before, they said ``ok`` for a call whose caller got an error. The controls: the same tool returning
text UTF-8 can carry is ``ok`` everywhere, and ``invoke_tool`` (a Python caller, who receives the
result as it is) records ``ok`` for it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from registry_kit import frozen_registry

from reyn_core import ToolContext, tool
from reyn_core.host import (
    JsonlAuditLog,
    ToolCall,
    ToolCallHooks,
    ToolCallOutcome,
    ToolRegistry,
    dispatch_tool,
    invoke_tool,
)

LONE = b"caf\xe9".decode("utf-8", "surrogateescape")  # a file name that is not UTF-8
FINE = "café 😀"
CTX = ToolContext(surface="router", agent="alice")


@tool(cluster="t", purity="read_only")
def named(lone: bool) -> dict[str, Any]:
    """A file name in the result: one UTF-8 cannot carry, or ordinary non-ASCII text."""
    return {"files": [{"name": LONE if lone else FINE}]}


@tool(cluster="t", purity="read_only")
def loop(itself: bool) -> Any:
    """A result holding itself (not JSON data), or a plain list."""
    found: list[Any] = ["x"]
    if itself:
        found.append(found)
    return found


def _registry(log: JsonlAuditLog, seen: list[ToolCallOutcome]) -> ToolRegistry:
    def after(call: ToolCall, outcome: ToolCallOutcome) -> None:
        seen.append(outcome)

    return frozen_registry((named, loop), hooks=log.hooks() + ToolCallHooks(after=(after,)))


def _statuses(log: JsonlAuditLog) -> list[str]:
    return [json.loads(line)["status"] for line in log.path.read_text().splitlines()]


@pytest.mark.parametrize(
    ("name", "bad", "good", "says"),
    [
        ("named", {"lone": True}, {"lone": False}, "UTF-8 cannot carry (a lone surrogate) at /files/0/name"),
        ("loop", {"itself": True}, {"itself": False}, "cannot be sent as JSON"),
    ],
)
async def test_a_result_dispatch_tool_refuses_is_recorded_as_the_error_sent(
    tmp_path: Path, name: str, bad: dict[str, Any], good: dict[str, Any], says: str
) -> None:
    log = JsonlAuditLog(tmp_path / "calls.jsonl")
    seen: list[ToolCallOutcome] = []
    registry = _registry(log, seen)
    refused = await dispatch_tool(registry, name, bad, CTX)
    assert refused["status"] == "error" and refused["error"]["kind"] == "execution_error"
    assert says in refused["error"]["message"]
    assert _statuses(log) == ["execution_error"]
    assert [(o.status, o.kind, o.result) for o in seen] == [("error", "execution_error", None)]
    assert seen[0].error is not None and seen[0].error.message == refused["error"]["message"]
    # positive control: the same tool with a result that can be sent is ok everywhere, and the
    # after hooks see the data the caller received
    sent = await dispatch_tool(registry, name, good, CTX)
    assert sent["status"] == "ok"
    assert _statuses(log) == ["execution_error", "ok"]
    assert (seen[1].status, seen[1].result) == ("ok", sent["data"])


async def test_invoke_tool_returns_the_result_as_it_is_and_records_ok(tmp_path: Path) -> None:
    # a Python caller receives the handler's result unchanged: for it the call succeeded
    log = JsonlAuditLog(tmp_path / "calls.jsonl")
    seen: list[ToolCallOutcome] = []
    result = await invoke_tool(_registry(log, seen), "named", {"lone": True}, CTX)
    assert result == {"files": [{"name": LONE}]}
    assert _statuses(log) == ["ok"] and [o.status for o in seen] == ["ok"]
    assert seen[0].result is result
