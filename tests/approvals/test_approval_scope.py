"""An approval covers the call its approver was shown, in every field shown (issue 24, review F3/F4):
the workspace, the surface beside the entry point, the session, what the call can touch. The key is
derived from the approver's view, so a field added to the view is bound with it. Real loads, the
real SQLite store; each attack beside its positive control (the approved call itself runs, once)."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from pathlib import Path

from reyn_core import ToolContext
from reyn_core.context import PhaseCallerState
from reyn_core.host import dispatch_tool, load, load_profile

DELETE_TOOL = """

@tool(cluster="notes", purity="side_effect")
def {pid}_delete(path: str, ctx: ToolContext) -> str:
    \"\"\"Delete a file in the workspace.\"\"\"
    (ctx.workspace / path).unlink()
    return f"deleted {{path}}"
"""

DB = {"path": "important.db"}


def _projects(world) -> tuple[str, Path, Path]:
    """The delete tool beside write and read, and two workspaces holding important.db each."""
    world.add_tools(DELETE_TOOL, "delete")
    a, b = world.root / "projA", world.root / "projB"
    for ws in (a, b):
        ws.mkdir()
        (ws / "important.db").write_text("data")
    return f"{world.pid}_delete", a, b


def _call(registry, tool, ws, approval=None, *, surface="router", session=None):
    # a host that names its entry point: the entry is "myhost" on every surface (F4)
    phase = PhaseCallerState(allowed_ops=("notes",)) if surface == "phase" else None
    ctx = ToolContext(
        surface="router", agent="assistant", workspace=ws, entry="myhost", phase_state=phase, session=session
    )
    return asyncio.run(dispatch_tool(registry, tool, DB, ctx, approval=approval, surface=surface))


def _refusal(envelope) -> str:
    """The reason of a refused call ("ran" when it ran)."""
    return envelope.get("error", {}).get("reason", envelope.get("error", {}).get("kind", "ran"))


def _approved(registry, tool, ws, *, surface="router", standing=False) -> str:
    pending = _call(registry, tool, ws, surface=surface)["error"]
    assert pending["kind"] == "approval_required", pending
    registry.approvals.decide(
        pending["approval"], approve=True, by="operator:alice", channel="operator", standing=standing
    )
    return pending["approval"]


def test_an_approval_for_one_workspace_does_not_run_the_call_in_another(world):
    # F3: the approver was shown workspace A; the same id used in workspace B must not delete B's file
    tool, a, b = _projects(world)
    registry = load(load_profile()).registry
    approval = _approved(registry, tool, a)
    assert registry.approvals.get(approval).request["workspace"] == str(a)
    refused = _call(registry, tool, b, approval)
    assert _refusal(refused) == "workspace_differs", refused
    assert "another workspace" in refused["error"]["message"] and "nothing ran" in refused["error"]["message"]
    assert (b / "important.db").exists() and (a / "important.db").exists()
    assert registry.approvals.get(approval).status == "voided"

    # positive control: approved in A, used in A, it runs there once
    approval = _approved(registry, tool, a)
    assert _call(registry, tool, a, approval)["status"] == "ok"
    assert not (a / "important.db").exists() and (b / "important.db").exists()
    assert _refusal(_call(registry, tool, a, approval)) == "used"


def test_a_standing_approval_in_a_shared_store_does_not_follow_the_call_to_another_workspace(world):
    # F3, the automatic path: a host serving workspace B (another load of the same profile, so the
    # same store, as two `reyn mcp serve --workspace` do) makes the identical call without an id. It
    # must open a request of its own, not consume A's standing approval.
    tool, a, b = _projects(world)
    approval = _approved(load(load_profile()).registry, tool, a, standing=True)
    serving_b = load(load_profile()).registry
    asked = _call(serving_b, tool, b)
    assert _refusal(asked) == "approval_required" and asked["error"]["approval"] != approval, asked
    assert (b / "important.db").exists()
    assert serving_b.approvals.get(approval).status == "approved"  # A's approval is untouched

    # positive control: a host serving A runs the call by the standing approval, without its id
    assert _call(load(load_profile()).registry, tool, a)["status"] == "ok"
    assert not (a / "important.db").exists() and (b / "important.db").exists()


def test_an_approval_on_one_surface_does_not_run_the_call_on_another_with_the_same_entry(world):
    # F4: the host names its entry point ("myhost") on every surface; the approver was shown the
    # router surface, so a phase call must not use the approval, neither by its id nor without one
    tool, a, _ = _projects(world)
    registry = load(load_profile()).registry
    standing = _approved(registry, tool, a, standing=True)
    assert registry.approvals.get(standing).request["surface"] == "router"
    asked = _call(registry, tool, a, surface="phase")
    assert _refusal(asked) == "approval_required" and asked["error"]["approval"] != standing, asked
    refused = _call(registry, tool, a, standing, surface="phase")
    assert _refusal(refused) == "surface_differs", refused
    assert (a / "important.db").exists()

    # positive control: approved on the phase surface, the phase call runs once
    approval = _approved(registry, tool, a, surface="phase")
    assert _call(registry, tool, a, approval, surface="phase")["status"] == "ok"
    assert not (a / "important.db").exists()


def test_every_field_the_approver_is_shown_is_bound_by_the_key(world):
    # derived, not listed: the key holds a digest of each field of the stored view, and a field a
    # later version adds to the view drifts like any other
    from reyn_core.approvals.key import CallArguments, CallKey

    tool, a, _ = _projects(world)
    registry = load(load_profile()).registry
    gate = registry.approvals
    record = gate.get(_call(registry, tool, a, session="s1")["error"]["approval"])
    assert set(record.components.get("shown", ())) == set(record.request), record.components
    definition = registry.get(tool)
    args = CallArguments(bound=DB, given=DB)
    key = CallKey.of(definition, args, record.request, lock=gate.lock, hasher=gate.hasher)
    assert key.digest(gate.hasher) == record.key and key.drift(record.components) is None
    for name, value in record.request.items():
        changed = CallKey.of(
            definition, args, {**record.request, name: ["changed", value]}, lock=None, hasher=gate.hasher
        )
        assert changed.drift(record.components) is not None, name
    later = CallKey.of(
        definition, args, {**record.request, "later_field": 1}, lock=gate.lock, hasher=gate.hasher
    )
    drift = later.drift(record.components)
    assert drift is not None and drift.code == "request_differs" and "later_field" in drift.words


def test_an_approval_stored_under_the_earlier_key_format_is_refused_clearly(world):
    # A record from before the key bound the view (components without `shown`): it never matches,
    # naming it gives a clear refusal and voids it, and the call without an id asks again.
    from reyn_core.approvals.terminal import describe

    tool, a, _ = _projects(world)
    registry = load(load_profile()).registry
    gate = registry.approvals
    approval = _approved(registry, tool, a, standing=True)
    old = {k: v for k, v in gate.get(approval).components.items() if k not in ("shown", "format")}
    with sqlite3.connect(world.root / "approvals.sqlite") as db:
        db.execute(
            "UPDATE approvals SET components = ?, key = ? WHERE id = ?",
            (json.dumps(old), gate.hasher(old), approval),
        )
    gate.store.disconnect()  # as a fresh process would open it
    assert "workspace  " in describe(gate.get(approval))  # `reyn approvals show` still reads it
    asked = _call(registry, tool, a)
    assert _refusal(asked) == "approval_required" and asked["error"]["approval"] != approval, asked
    asked = asked["error"]
    refused = _call(registry, tool, a, approval)
    assert _refusal(refused) == "key_format_changed", refused
    assert "earlier key format" in refused["error"]["message"] and (a / "important.db").exists()
    assert gate.get(approval).status == "voided"

    # positive control: the request asked under the current format, approved, runs once
    gate.decide(asked["approval"], approve=True, by="operator:alice", channel="operator")
    assert _call(registry, tool, a, asked["approval"])["status"] == "ok"
    assert not (a / "important.db").exists()
