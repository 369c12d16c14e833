"""The approval check in the dispatcher, in process, against a real SQLite store and audit log: a
call the policy selects runs only by consuming an approval of exactly that call, after validation
and before the hooks and the handler (the handler's marker file proves what ran)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from reyn_core import ToolContext
from reyn_core.host import dispatch_tool, load, load_profile


def _ctx(root: Path, agent: str = "agent-a", entry: str = "router") -> ToolContext:
    return ToolContext(surface="router", agent=agent, workspace=root, entry=entry)


def _call(registry, name, args, ctx, approval=None):
    return asyncio.run(dispatch_tool(registry, name, args, ctx, approval=approval))


def _loaded(world):
    result = load(load_profile())
    assert result.registry.approvals is not None, [d.render() for d in result.report.diagnostics]
    return result.registry


def test_a_write_inside_the_drafts_root_needs_no_approval(world):
    # Positive control: the rule's unless_within lets a write under out/drafts run at once.
    registry = _loaded(world)
    env = _call(registry, world.write, {"path": "out/drafts/a.md", "text": "hi"}, _ctx(world.root))
    assert env["status"] == "ok"
    assert (world.root / "out/drafts/a.md").read_text() == "hi\n"


@pytest.mark.parametrize(
    "path", ["out/a.md", "out/drafts-evil/a.md", "out/drafts/../a.md", "./out/./x/../drafts/a.md"]
)
def test_a_write_outside_the_drafts_root_waits_and_nothing_runs(world, path):
    registry = _loaded(world)
    env = _call(registry, world.write, {"path": path, "text": "hi"}, _ctx(world.root))
    assert env["error"]["kind"] == "approval_required"
    assert env["error"]["approval"].startswith("apr-")
    assert not (world.root / "out").exists()


def test_a_read_is_not_selected_by_a_side_effect_rule(world):
    registry = _loaded(world)
    env = _call(registry, world.read, {"path": "out/a.md"}, _ctx(world.root))
    assert env == {"status": "ok", "data": ""}


def test_an_approved_call_runs_once_and_the_audit_log_proves_it(world):
    registry = _loaded(world)
    gate = registry.approvals
    args = {"path": "out/a.md", "text": "hi"}
    pending = _call(registry, world.write, args, _ctx(world.root))["error"]["approval"]
    record = gate.get(pending)
    assert record.request["arguments"] == {"path": "out/a.md", "text": "hi", "mode": "append"}  # defaults
    gate.decide(pending, approve=True, by="operator:test", channel="operator")
    assert not (world.root / "out/a.md").exists()  # approving runs nothing
    assert _call(registry, world.write, args, _ctx(world.root), approval=pending)["status"] == "ok"
    assert (world.root / "out/a.md").read_text() == "hi\n"
    again = _call(registry, world.write, args, _ctx(world.root), approval=pending)
    assert again["error"]["kind"] == "denied" and again["error"]["reason"] == "used"
    assert (world.root / "out/a.md").read_text() == "hi\n"  # ran once
    events = [e for e in world.audit_events() if e.get("event", "").startswith("approval.")]
    assert [e["event"] for e in events] == ["approval.requested", "approval.approved", "approval.executed"]
    assert len({e["key"] for e in events}) == 1  # what ran is what was approved
    assert events[2]["status"] == "ok" and events[1]["by"] == "operator:test"


def test_without_an_id_the_approved_request_for_the_same_call_is_used(world):
    registry = _loaded(world)
    args = {"path": "out/b.md", "text": "x"}
    pending = _call(registry, world.write, args, _ctx(world.root))["error"]["approval"]
    # asking again for the same call names the same request, not a second one
    assert _call(registry, world.write, args, _ctx(world.root))["error"]["approval"] == pending
    registry.approvals.decide(pending, approve=True, by="operator:test", channel="operator")
    assert _call(registry, world.write, args, _ctx(world.root))["status"] == "ok"
    assert (world.root / "out/b.md").exists()


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"args": {"path": "out/a.md", "text": "other"}}, "arguments_differ"),
        ({"args": {"path": "out/a.md", "text": "hi", "mode": "overwrite"}}, "arguments_differ"),
        ({"agent": "agent-b"}, "agent_differs"),
        ({"entry": "mcp"}, "entry_differs"),
    ],
)
def test_an_approval_replayed_for_another_call_is_refused_and_voided(world, change, reason):
    registry = _loaded(world)
    args = {"path": "out/a.md", "text": "hi"}
    pending = _call(registry, world.write, args, _ctx(world.root))["error"]["approval"]
    registry.approvals.decide(pending, approve=True, by="operator:test", channel="operator")
    ctx = _ctx(world.root, agent=change.get("agent", "agent-a"), entry=change.get("entry", "router"))
    env = _call(registry, world.write, change.get("args", args), ctx, approval=pending)
    assert env["error"]["kind"] == "denied" and env["error"]["reason"] == reason
    assert "nothing ran" in env["error"]["message"]
    assert not (world.root / "out").exists()
    # void: not even the approved call may use it now
    after = _call(registry, world.write, args, _ctx(world.root), approval=pending)
    assert after["error"]["reason"] == "voided"
    assert not (world.root / "out").exists()
    assert registry.approvals.get(pending).status == "voided"


def test_a_denied_call_is_refused_with_the_reason_the_model_reads(world):
    registry = _loaded(world)
    args = {"path": "out/a.md", "text": "hi"}
    pending = _call(registry, world.write, args, _ctx(world.root))["error"]["approval"]
    registry.approvals.decide(
        pending, approve=False, by="operator:test", channel="operator", reason="not this file"
    )
    env = _call(registry, world.write, args, _ctx(world.root), approval=pending)
    assert env["error"]["reason"] == "denied" and "not this file" in env["error"]["message"]
    assert not (world.root / "out").exists()


def test_a_channel_not_among_the_approvers_cannot_decide(world):
    from reyn_core.host import ApprovalDecisionError

    world.write_profile(extra='approvers = ["operator"]\n')
    registry = _loaded(world)
    pending = _call(registry, world.write, {"path": "out/a.md", "text": "hi"}, _ctx(world.root))
    with pytest.raises(ApprovalDecisionError, match="operator"):
        registry.approvals.decide(pending["error"]["approval"], approve=True, by="me", channel="user")


def test_hooks_see_nothing_of_a_call_waiting_for_approval(world):
    # the check comes before the policy hooks: the audit log's per-call line is the only one written
    # (an after hook sees the refusal), and no before hook ran the handler
    registry = _loaded(world)
    _call(registry, world.write, {"path": "out/a.md", "text": "hi"}, _ctx(world.root))
    calls = [e for e in world.audit_events() if "event" not in e]
    assert [c["status"] for c in calls] == ["approval_required"]


def test_a_standing_approval_runs_the_exact_call_again_but_no_other(world):
    registry = _loaded(world)
    args = {"path": "out/a.md", "text": "hi"}
    pending = _call(registry, world.write, args, _ctx(world.root))["error"]["approval"]
    registry.approvals.decide(pending, approve=True, by="operator:test", channel="operator", standing=True)
    for _ in range(3):
        assert _call(registry, world.write, args, _ctx(world.root), approval=pending)["status"] == "ok"
    assert (world.root / "out/a.md").read_text() == "hi\n" * 3
    other = _call(registry, world.write, {**args, "text": "no"}, _ctx(world.root), approval=pending)
    assert other["error"]["reason"] == "arguments_differ"


@pytest.mark.parametrize(
    ("rule", "field"),
    [
        ('tools = ["apv_writ_note"]', "tools"),
        ('plugins = ["nope"]', "plugins"),
        ('clusters = ["nots"]', "clusters"),
    ],
)
def test_a_rule_naming_nothing_loaded_is_an_error_diagnostic(world, rule, field):
    world.write_profile(extra=f"\n[[approvals.rules]]\n{rule}\n")
    report = load(load_profile()).report
    [diag] = [d for d in report.diagnostics if d.code == "RC009"]
    assert diag.severity == "error" and f"#2 {field} names" in diag.message


def test_a_rule_naming_what_is_loaded_has_no_diagnostic(world):
    # Positive control for the test above.
    world.write_profile(extra=f'\n[[approvals.rules]]\ntools = ["{world.write}"]\nclusters = ["notes"]\n')
    assert not [d for d in load(load_profile()).report.diagnostics if d.code == "RC009"]


def test_an_approved_call_that_fails_is_executed_once_with_its_status(world):
    registry = _loaded(world)
    (world.root / "out/dir").mkdir(parents=True)
    args = {"path": "out/dir", "text": "x"}  # the handler fails: a directory
    pending = _call(registry, world.write, args, _ctx(world.root))["error"]["approval"]
    registry.approvals.decide(pending, approve=True, by="operator:test", channel="operator")
    assert _call(registry, world.write, args, _ctx(world.root), approval=pending)["error"]["kind"] == (
        "execution_error"
    )
    [executed] = [e for e in world.audit_events() if e.get("event") == "approval.executed"]
    assert executed["status"] == "execution_error" and executed["approval"] == pending
    assert registry.approvals.get(pending).status == "consumed"  # it ran: the approval is spent


def test_an_unusable_store_refuses_the_call_and_nothing_runs(world):
    # fail closed: the store's path is a directory, so no request can be recorded
    (world.root / "approvals.sqlite").mkdir()
    registry = _loaded(world)
    env = _call(registry, world.write, {"path": "out/a.md", "text": "hi"}, _ctx(world.root))
    assert env["error"]["kind"] == "denied" and env["error"]["reason"] == "unavailable"
    assert not (world.root / "out").exists()
    # a call no rule holds is not affected
    assert _call(registry, world.read, {"path": "x"}, _ctx(world.root))["status"] == "ok"


def test_a_key_others_can_read_refuses_the_call_naming_no_host_path_to_the_model(
    world, operator_log, monkeypatch, tmp_path
):
    # review 2 (f): the argument-hash key's path (in the user's home) and mode reached the model in the
    # `unavailable` message; now fixed words citing the operator's log, which says why. Control: the
    # tests above, where the key is private and the same call waits for approval.
    import os

    from reyn_core.loading.argument_key import key_path

    # a key of this test's own (the session's shared key must stay private for every other test)
    monkeypatch.setenv("REYN_ARGUMENT_KEY_FILE", str(tmp_path / "shared-home" / "argument-hash.key"))
    key = key_path()
    key.parent.mkdir(parents=True, exist_ok=True)
    key.write_bytes(b"k" * 32)
    os.chmod(key, 0o644)
    _, env = world.reyn_json("tools", "call", world.write, "path=out/b.md", "text=hi")  # a fresh process
    assert env["error"]["kind"] == "denied" and env["error"]["reason"] == "unavailable", env
    message = env["error"]["message"]
    assert str(key.parent) not in message and "0o644" not in message and "RC006" in message
    assert f"{key} is accessible to others" in operator_log.record(message)
    assert not (world.root / "out").exists()


UNSENDABLE_TOOL = """

@tool(cluster="notes", purity="side_effect")
def {pid}_rename(ctx: ToolContext) -> dict:
    \"\"\"Write a marker and name a file whose name is not UTF-8 (a lone surrogate once decoded).\"\"\"
    (ctx.workspace / "renamed").write_text("ran")
    return {{"name": b"caf\\xe9".decode("utf-8", "surrogateescape")}}
"""


def test_an_approved_call_whose_result_cannot_be_sent_is_executed_as_an_error(world):
    # The handler ran (the approval is spent), but its result holds text UTF-8 cannot carry, so the
    # caller gets execution_error: the approval's executed line says so too (it said "ok" while the
    # refusal of the result came after the line was written). The control: an approved call whose
    # result can be sent is executed "ok" (test_an_approved_call_runs_once_and_the_audit_log_proves_it).
    world.add_tools(UNSENDABLE_TOOL, "rename")
    registry = _loaded(world)
    tool = f"{world.pid}_rename"
    pending = _call(registry, tool, {}, _ctx(world.root))["error"]["approval"]
    registry.approvals.decide(pending, approve=True, by="operator:test", channel="operator")
    env = _call(registry, tool, {}, _ctx(world.root), approval=pending)
    assert env["error"]["kind"] == "execution_error" and "/name" in env["error"]["message"], env
    assert (world.root / "renamed").read_text() == "ran"  # it ran
    [executed] = [e for e in world.audit_events() if e.get("event") == "approval.executed"]
    assert executed["status"] == "execution_error" and executed["approval"] == pending
    assert registry.approvals.get(pending).status == "consumed"
