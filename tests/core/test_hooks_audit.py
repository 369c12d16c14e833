"""Policy points around every call: before hooks may deny, after hooks observe, the audit log writes
the documented fields."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from registry_kit import plugin_origin

from reyn_core import ToolContext, ToolDenied, ToolGates, tool
from reyn_core.host import (
    JsonlAuditLog,
    RegistryBuilder,
    ToolCall,
    ToolCallHooks,
    ToolCallOutcome,
    ToolRegistry,
    definition_digest,
    dispatch_tool,
)

CALLS: list[dict[str, Any]] = []


@tool(cluster="notes", purity="side_effect")
def save_note(title: str, body: str, ctx: ToolContext) -> str:
    """Save a note."""
    CALLS.append({"title": title, "settings": ctx.settings})
    return f"saved {title}"


@tool(cluster="notes", purity="read_only", gates=ToolGates(router="deny"))
def phase_note() -> str:
    """Only for phases."""
    CALLS.append({"title": "phase"})
    return "x"


@tool(cluster="notes", purity="read_only")
def broken() -> None:
    """Always fails."""
    raise RuntimeError("broken on purpose")


NOTES = plugin_origin()


@pytest.fixture(autouse=True)
def _reset() -> None:
    CALLS.clear()


def registry_with(hooks: ToolCallHooks) -> ToolRegistry:
    builder = RegistryBuilder(hooks=hooks)
    for t in (save_note, phase_note, broken):
        builder.register(t, origin=NOTES)
    builder.set_settings("notes", {"dir": "notes"})
    return builder.freeze()


ARGS = {"title": "t", "body": "secret body text"}
CTX = ToolContext(surface="router", agent="alice")


async def test_before_hook_returning_a_reason_denies_and_the_handler_never_runs() -> None:
    registry = registry_with(ToolCallHooks(before=(lambda call: "writes need approval",)))
    envelope = await dispatch_tool(registry, "save_note", ARGS, CTX)
    assert envelope["error"] == {
        "kind": "denied",
        "message": "call to 'save_note' denied by policy: writes need approval",
    }
    assert CALLS == []


async def test_before_hook_raising_tool_denied_denies() -> None:
    def policy(call: ToolCall) -> None:
        raise ToolDenied("no notes on Sundays")

    envelope = await dispatch_tool(registry_with(ToolCallHooks(before=(policy,))), "save_note", ARGS, CTX)
    assert envelope["error"] == {"kind": "denied", "message": "no notes on Sundays"}
    assert CALLS == []


async def test_before_hook_that_breaks_denies_fail_closed(operator_log: Any) -> None:
    def policy(call: ToolCall) -> None:
        raise KeyError("missing config")

    envelope = await dispatch_tool(registry_with(ToolCallHooks(before=(policy,))), "save_note", ARGS, CTX)
    assert envelope["error"]["kind"] == "denied"
    message = envelope["error"]["message"]
    assert "a policy hook failed;" in message and "missing config" not in message  # fixed words
    assert "KeyError: 'missing config'" in operator_log.record(message)  # what it raised: the operator's
    assert CALLS == []


async def test_async_before_hook_may_approve() -> None:
    async def approve(call: ToolCall) -> None:
        await asyncio.sleep(0)

    envelope = await dispatch_tool(registry_with(ToolCallHooks(before=(approve,))), "save_note", ARGS, CTX)
    assert envelope == {"status": "ok", "data": "saved t"}


async def test_before_hook_sees_validated_arguments_surface_agent_and_settings() -> None:
    seen: list[ToolCall] = []
    registry = registry_with(ToolCallHooks(before=(lambda call: seen.append(call),)))
    await dispatch_tool(registry, "save_note", json.dumps(ARGS), CTX, surface="cli")
    [call] = seen
    assert (call.tool.name, dict(call.arguments), call.surface) == ("save_note", ARGS, "cli")
    assert (call.ctx.agent, call.ctx.surface, call.ctx.settings) == ("alice", "cli", {"dir": "notes"})


async def test_before_hook_is_not_asked_about_a_refused_call() -> None:
    seen: list[ToolCall] = []
    registry = registry_with(ToolCallHooks(before=(lambda call: seen.append(call),)))
    await dispatch_tool(registry, "phase_note", {}, CTX)
    await dispatch_tool(registry, "save_note", {"title": 1}, CTX)
    assert seen == []


async def test_after_hook_sees_each_outcome_kind() -> None:
    outcomes: list[tuple[str, str]] = []
    registry = registry_with(
        ToolCallHooks(after=(lambda call, o: outcomes.append((call.tool.name, o.kind)),))
    )
    await dispatch_tool(registry, "save_note", ARGS, CTX)
    await dispatch_tool(registry, "broken", {}, CTX)
    await dispatch_tool(registry, "phase_note", {}, CTX)
    await dispatch_tool(registry, "save_note", {"title": "t"}, CTX)
    await dispatch_tool(registry, "nothing_by_this_name", {}, CTX)
    assert outcomes == [
        ("save_note", "ok"),
        ("broken", "execution_error"),
        ("phase_note", "gate_refused"),
        ("save_note", "invalid_arguments"),
    ]


async def test_after_hook_sees_the_result_and_a_duration() -> None:
    outcomes: list[ToolCallOutcome] = []
    registry = registry_with(ToolCallHooks(after=(lambda call, o: outcomes.append(o),)))
    await dispatch_tool(registry, "save_note", ARGS, CTX)
    [outcome] = outcomes
    assert (outcome.status, outcome.result, outcome.error) == ("ok", "saved t", None)
    assert outcome.duration_s >= 0


async def test_after_hook_sees_a_denial_by_a_before_hook() -> None:
    kinds: list[str] = []
    hooks = ToolCallHooks(before=(lambda call: "no",), after=(lambda call, o: kinds.append(o.kind),))
    await dispatch_tool(registry_with(hooks), "save_note", ARGS, CTX)
    assert kinds == ["denied"]


async def test_after_hook_exceptions_are_ignored(caplog: pytest.LogCaptureFixture) -> None:
    def noisy(call: ToolCall, outcome: ToolCallOutcome) -> None:
        raise RuntimeError("audit sink down")

    async def noisy_async(call: ToolCall, outcome: ToolCallOutcome) -> None:
        raise OSError("disk full")

    seen: list[str] = []
    hooks = ToolCallHooks(after=(noisy, noisy_async, lambda call, o: seen.append(o.kind)))
    envelope = await dispatch_tool(registry_with(hooks), "save_note", ARGS, CTX)
    assert envelope == {"status": "ok", "data": "saved t"}
    assert seen == ["ok"]
    assert "audit sink down" in caplog.text and "disk full" in caplog.text  # ignored, not silent


async def test_an_unwritable_audit_log_refuses_calls_fail_closed(tmp_path: Path, operator_log: Any) -> None:
    blocker = tmp_path / "not_a_dir"
    blocker.write_text("")
    log = JsonlAuditLog(blocker / "calls.jsonl")
    assert "not a directory" in (log.unwritable_reason() or "")
    CALLS.clear()
    envelope = await dispatch_tool(registry_with(log.hooks()), "save_note", ARGS, CTX)
    assert envelope["status"] == "error" and envelope["error"]["kind"] == "denied"
    message = envelope["error"]["message"]
    assert "the audit log cannot be written (RC006)" in message and str(tmp_path) not in message
    assert f"the audit log {log.path} cannot be written" in operator_log.record(
        message
    )  # the log's path: the operator's
    assert CALLS == []  # the handler never ran
    blocker.unlink()  # once the log can be written, calls run again
    blocker.mkdir()
    assert (await dispatch_tool(registry_with(log.hooks()), "save_note", ARGS, CTX))["status"] == "ok"
    assert len(log.path.read_text().splitlines()) == 1


async def test_hooks_combine_with_plus() -> None:
    order: list[str] = []
    a = ToolCallHooks(before=(lambda call: order.append("a"),))
    b = ToolCallHooks(before=(lambda call: order.append("b"),))
    await dispatch_tool(registry_with(a + b), "save_note", ARGS, CTX)
    assert order == ["a", "b"]


async def test_jsonl_audit_log_writes_the_documented_fields(
    tmp_path: Path, audit_line_fields: frozenset[str]
) -> None:
    log = JsonlAuditLog(tmp_path / "audit" / "calls.jsonl")
    registry = registry_with(log.hooks())
    await dispatch_tool(registry, "save_note", ARGS, CTX)
    await dispatch_tool(registry, "broken", {}, CTX)
    await dispatch_tool(registry, "phase_note", {}, CTX)
    lines = [json.loads(line) for line in log.path.read_text().splitlines()]
    assert [set(line) for line in lines] == [audit_line_fields] * 3
    first = lines[0]
    assert (
        first["surface"],
        first["agent"],
        first["tool"],
        first["plugin"],
        first["digest"],
        first["status"],
    ) == ("router", "alice", "save_note", "notes", NOTES.tree_digest, "ok")
    assert first["args_sha256"].startswith("hmac-sha256:") and first["time"].endswith("+00:00")
    assert first["definition_sha256"] == definition_digest(registry.get("save_note"))
    assert [line["status"] for line in lines] == ["ok", "execution_error", "gate_refused"]


async def test_audit_log_stores_a_hash_never_the_arguments(tmp_path: Path) -> None:
    log = JsonlAuditLog(tmp_path / "calls.jsonl")
    await dispatch_tool(registry_with(log.hooks()), "save_note", ARGS, CTX)
    assert "secret body text" not in log.path.read_text()


async def test_audit_hash_is_the_same_for_the_same_arguments_in_any_key_order(tmp_path: Path) -> None:
    log = JsonlAuditLog(tmp_path / "calls.jsonl")
    registry = registry_with(log.hooks())
    await dispatch_tool(registry, "save_note", {"title": "t", "body": "b"}, CTX)
    await dispatch_tool(registry, "save_note", '{"body": "b", "title": "t"}', CTX)
    hashes = [json.loads(line)["args_sha256"] for line in log.path.read_text().splitlines()]
    assert hashes[0] == hashes[1]


async def test_audit_log_appends_whole_lines_under_concurrency(tmp_path: Path) -> None:
    log = JsonlAuditLog(tmp_path / "calls.jsonl")
    registry = registry_with(log.hooks())
    await asyncio.gather(
        *(dispatch_tool(registry, "save_note", {"title": str(i), "body": "b"}, CTX) for i in range(40))
    )
    lines = log.path.read_text().splitlines()
    assert len(lines) == 40 and all(json.loads(line)["status"] == "ok" for line in lines)


async def test_a_lone_surrogate_in_arguments_is_still_audited(tmp_path: Path) -> None:
    log = JsonlAuditLog(tmp_path / "calls.jsonl")
    registry = registry_with(log.hooks())
    await dispatch_tool(registry, "save_note", {"title": "\ud800", "body": "b"}, CTX)
    await dispatch_tool(registry, "save_note", ARGS, CTX)
    lines = [json.loads(line) for line in log.path.read_text().splitlines()]
    assert len(lines) == 2 and lines[0]["args_sha256"] != lines[1]["args_sha256"]  # no call goes unrecorded


def test_a_snapshot_decides_once_whether_calls_run_hooks():
    from reyn_core.host import RegistryBuilder, ToolCallHooks, dispatch_tool

    @tool(name="noop_tool")
    def noop_tool(x: int) -> int:
        """Return x."""
        return x

    seen: list[str] = []
    empty = RegistryBuilder(hooks=ToolCallHooks())
    empty.register(noop_tool)
    assert empty.freeze().call_hooks is None and RegistryBuilder().freeze().call_hooks is None
    watched = RegistryBuilder(hooks=ToolCallHooks(after=(lambda call, outcome: seen.append(outcome.status),)))
    watched.register(noop_tool)
    registry = watched.freeze()
    assert registry.call_hooks is registry.hooks
    ctx = ToolContext(surface="router")
    assert asyncio.run(dispatch_tool(registry, "noop_tool", {"x": 2}, ctx)) == {"status": "ok", "data": 2}
    assert asyncio.run(dispatch_tool(registry, "noop_tool", {"x": "no"}, ctx))["status"] == "error"
    assert seen == ["ok", "error"]
