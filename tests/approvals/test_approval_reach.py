"""What the approver sees the call can touch: an isolated plugin's sandbox and its grants (the
profile's ``[plugins.<id>.grants]``, as the worker gets them), or that an in-process plugin runs
unconfined in the host process. Shown by ``reyn approvals show`` (text and ``--json``), the request
record a router host reads, the MCP elicitation message, and the terminal prompt (see
test_approvals_processes.py and test_mcp_approvals.py for those two surfaces)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import reyn_sandbox
from reyn_core import ToolContext
from reyn_core.host import dispatch_tool, load, load_profile


def test_an_in_process_plugin_is_shown_as_unconfined(world):
    done = world.reyn("tools", "call", world.write, "path=out/a.md", "text=hi", "--json")
    approval = json.loads(done.stdout)["error"]["approval"]
    code, shown = world.reyn_json("approvals", "show", approval)
    assert code == 0 and shown["request"]["can_touch"]["sandbox"] is None
    text = world.reyn("approvals", "show", approval).stdout
    assert "can touch  no sandbox: it runs in the host process" in text


@pytest.fixture
def isolated_file_pack(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, isolated_profile_env: None):
    if not reyn_sandbox.status().available:
        pytest.skip(f"the kernel sandbox is unavailable here: {reyn_sandbox.status().reason}")
    ws = tmp_path / "ws"
    (ws / "out").mkdir(parents=True)
    os.chmod(tmp_path, 0o755)
    for folder in (ws, ws / "out"):
        os.chmod(folder, 0o777)  # the worker runs as an unprivileged user
    profile = tmp_path / "reyn.toml"
    profile.write_text(
        '[plugins]\nenable = ["file"]\n[plugins.file]\nisolation = "process"\n'
        f'[plugins.file.grants]\nread = ["{ws}"]\nwrite = ["{ws / "out"}"]\n'
        '[plugins.file.settings]\nread_roots = ["."]\nwrite_roots = ["out"]\n'
        '[approvals]\nsettings.file = "approvals.sqlite"\n[[approvals.rules]]\ntools = ["write_file"]\n'
    )
    monkeypatch.setenv("REYN_PROFILE_FILE", str(profile))
    return ws


def test_an_isolated_plugin_shows_its_sandbox_and_grants_on_every_view(isolated_file_pack):
    ws = isolated_file_pack
    registry = load(load_profile()).registry
    ctx = ToolContext(surface="router", workspace=ws, session="s-1")
    envelope = asyncio.run(dispatch_tool(registry, "write_file", {"path": "out/b.txt", "content": "x"}, ctx))
    approval = envelope["error"]["approval"]
    assert not (ws / "out" / "b.txt").exists()
    # the record a router host reads for a pending call
    reach = registry.approvals.get(approval).request["can_touch"]
    assert reach["sandbox"] == "process"
    assert reach["grants"]["filesystem_write"] == [str(ws / "out")]
    assert reach["grants"]["filesystem_read"] == [str(ws)]
    assert reach["grants"]["network"] is False and reach["grants"]["subprocess"] is False
    assert f"write {ws / 'out'}" in reach["summary"] and "network: no" in reach["summary"]
    # the MCP elicitation message
    from reyn_tools_mcp.serve_approvals import approval_message

    message = approval_message(registry.approvals.get(approval))
    assert f"It can touch: a sandboxed worker that may read {ws}" in message
    # reyn approvals show, text and JSON, in another process
    env = dict(os.environ)
    show = [sys.executable, "-m", "reyn_core", "approvals", "show", approval]
    text = subprocess.run(show, env=env, capture_output=True, text=True, timeout=120, cwd=ws)
    assert f"can touch  a sandboxed worker that may read {ws}; write {ws / 'out'}" in text.stdout, text
    shown = json.loads(
        subprocess.run([*show, "--json"], env=env, capture_output=True, text=True, timeout=120).stdout
    )
    assert shown["request"]["can_touch"]["grants"]["filesystem_write"] == [str(ws / "out")]
    # approved, the call runs in the sandboxed worker (the positive control)
    registry.approvals.decide(approval, approve=True, by="user:t", channel="user")
    done = asyncio.run(
        dispatch_tool(registry, "write_file", {"path": "out/b.txt", "content": "x"}, ctx, approval=approval)
    )
    assert done["status"] == "ok" and (ws / "out" / "b.txt").read_text() == "x"


@pytest.mark.parametrize("review", [None, "lock", "audit"])
def test_a_write_root_over_the_approval_store_refuses_the_plugin(isolated_file_pack, review):
    # A worker that could write the SQLite store could flip its own request to approved: a write
    # root over the store (or its WAL) is refused like one over the audit log (RJ011), and the
    # plugin's tools are not loaded. The store (reyn-approvals-sqlite) names its files; a review
    # (`reyn plugins lock` / `audit`) does not import it, and takes its settings' strings as files
    # instead. The fixture's own layout (store beside the profile) is the positive control:
    # test_an_isolated_plugin_shows_its_sandbox_and_grants_on_every_view.
    ws = isolated_file_pack
    profile = Path(os.environ["REYN_PROFILE_FILE"])
    store = ws / "out" / "a.sqlite"
    profile.write_text(profile.read_text().replace('file = "approvals.sqlite"', f'file = "{store}"'))
    result = load(load_profile(), review=review)
    found = [d.render() for d in result.report.diagnostics if d.code == "RJ011"]
    assert found and "the host's approval store" in found[0], [d.render() for d in result.report.diagnostics]
    assert "write_file" not in result.registry


def test_an_approval_does_not_cover_the_call_once_its_grants_changed(isolated_file_pack):
    # What the call can touch is part of what the approver approved: the same call after the
    # operator widened the worker's write grant is not the call approved (standing or not).
    ws = isolated_file_pack
    profile = Path(os.environ["REYN_PROFILE_FILE"])
    ctx = ToolContext(surface="router", workspace=ws)
    args = {"path": "out/b.txt", "content": "x"}
    registry = load(load_profile()).registry
    approval = asyncio.run(dispatch_tool(registry, "write_file", args, ctx))["error"]["approval"]
    registry.approvals.decide(approval, approve=True, by="user:t", channel="user", standing=True)
    # positive control: under the grants shown, the approved call runs (in another load too)
    again = load(load_profile()).registry
    assert asyncio.run(dispatch_tool(again, "write_file", args, ctx, approval=approval))["status"] == "ok"
    (ws / "out" / "b.txt").unlink()

    profile.write_text(profile.read_text().replace(f'write = ["{ws / "out"}"]', f'write = ["{ws}"]'))
    widened = load(load_profile()).registry
    asked = asyncio.run(dispatch_tool(widened, "write_file", args, ctx))
    assert asked.get("error", {}).get("approval") not in (None, approval), asked
    refused = asyncio.run(dispatch_tool(widened, "write_file", args, ctx, approval=approval))
    assert refused.get("error", {}).get("reason") == "reach_changed", refused
    assert not (ws / "out" / "b.txt").exists()
