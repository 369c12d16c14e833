"""Approvals across real processes, real SQLite and the real ``reyn`` command: a call waits, an
operator approves it in another process, a third runs it — once. Every replay that is not the
approved call is refused with its reason and runs nothing (the handler's marker file stays absent):
other arguments, a second use, after expiry, after the plugin's files changed, after the lock
changed; and two processes racing to use one approval run the call once."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import time

CALL = ("path=out/a.md", "text=hi")


def _request(world, *args: str) -> str:
    code, envelope = world.reyn_json("tools", "call", world.write, *(args or CALL))
    assert code == 1 and envelope["error"]["kind"] == "approval_required", envelope
    return envelope["error"]["approval"]


def _approve(world, approval: str) -> None:
    done = world.reyn("approvals", "approve", approval, "--by", "ops")
    assert done.returncode == 0, done.stderr
    assert "approved" in done.stdout


def _run(world, approval: str, *args: str) -> tuple[int, dict]:
    return world.reyn_json("tools", "call", world.write, *(args or CALL), "--approval", approval)


def _marker(world) -> str | None:
    path = world.root / "out/a.md"
    return path.read_text() if path.exists() else None


def test_not_interactive_the_cli_refuses_and_names_how_to_approve(world):
    done = world.reyn("tools", "call", world.write, *CALL, "--json")
    assert done.returncode == 1
    envelope = json.loads(done.stdout)
    assert envelope["error"]["kind"] == "approval_required"
    assert f"reyn approvals approve {envelope['error']['approval']}" in done.stderr
    assert _marker(world) is None


def test_approved_in_one_process_run_in_another_once(world):
    approval = _request(world)
    code, shown = world.reyn_json("approvals", "show", approval)
    assert code == 0 and shown["status"] == "pending" and shown["request"]["tool"] == world.write
    assert shown["request"]["version"] == "1.0" and shown["request"]["plugin"] == world.pid
    _approve(world, approval)
    assert _marker(world) is None
    code, envelope = _run(world, approval)
    assert code == 0 and envelope["status"] == "ok"
    assert _marker(world) == "hi\n"


def test_replayed_for_other_arguments_is_refused(world):
    approval = _request(world)
    _approve(world, approval)
    code, envelope = _run(world, approval, "path=out/a.md", "text=rm -rf")
    assert code == 1 and envelope["error"]["reason"] == "arguments_differ"
    assert _marker(world) is None
    code, envelope = _run(world, approval)  # void now, for the approved call too
    assert envelope["error"]["reason"] == "voided" and _marker(world) is None


def test_replayed_a_second_time_is_refused(world):
    approval = _request(world)
    _approve(world, approval)
    assert _run(world, approval)[1]["status"] == "ok"
    code, envelope = _run(world, approval)
    assert code == 1 and envelope["error"]["reason"] == "used"
    assert _marker(world) == "hi\n"  # once


def test_replayed_after_expiry_is_refused(world):
    approval = _request(world)
    _approve(world, approval)
    # Time passing, made deterministic: the request's expiry moved into the past in the store itself.
    with sqlite3.connect(world.root / "approvals.sqlite") as db:
        db.execute("UPDATE approvals SET expires_at = ? WHERE id = ?", (time.time() - 1, approval))
    code, envelope = _run(world, approval)
    assert code == 1 and envelope["error"]["reason"] == "expired"
    assert _marker(world) is None
    assert "approval.expired" in [e.get("event") for e in world.audit_events()]


def test_replayed_after_the_plugin_files_changed_is_refused(world):
    approval = _request(world)
    _approve(world, approval)
    world.reinstall("\n# an update: same tools, other bytes\n")
    code, envelope = _run(world, approval)
    assert code == 1 and envelope["error"]["reason"] == "plugin_changed"
    assert _marker(world) is None
    assert "approval.voided" in [e.get("event") for e in world.audit_events()]


def test_replayed_after_the_lock_changed_is_refused(world):
    from site_plugin import install_site_plugin

    world.write_profile(extra="\n[lock]\nenforce = true\n")
    assert world.reyn("plugins", "lock").returncode == 0
    approval = _request(world)
    _approve(world, approval)
    # another plugin enabled and locked: this plugin is unchanged, the lock is not
    other = world.pid + "x"
    install_site_plugin(world.site, other, "REYN_API = 1\n")
    text = world.profile.read_text().replace(
        f'enable = ["{world.pid}"]', f'enable = ["{world.pid}", "{other}"]'
    )
    world.profile.write_text(text)
    assert world.reyn("plugins", "lock").returncode == 0
    code, envelope = _run(world, approval)
    assert code == 1 and envelope["error"]["reason"] == "lock_changed", envelope
    assert _marker(world) is None


def test_the_lock_unchanged_the_locked_call_runs(world):
    # Positive control for the test above: under the same enforced lock, the approval is good.
    world.write_profile(extra="\n[lock]\nenforce = true\n")
    assert world.reyn("plugins", "lock").returncode == 0
    approval = _request(world)
    _approve(world, approval)
    assert _run(world, approval)[1]["status"] == "ok" and _marker(world) == "hi\n"


def test_two_processes_racing_for_one_approval_run_the_call_once(world):
    approval = _request(world)
    _approve(world, approval)
    outcomes = world.racing_calls(approval, *CALL)
    statuses = sorted(o["status"] for o in outcomes)
    assert statuses == ["error", "ok"]
    [lost] = [o for o in outcomes if o["status"] == "error"]
    assert lost["error"]["reason"] == "used"
    assert _marker(world) == "hi\n"  # one line: it ran once


def _on_terminal(world, answer: bytes) -> tuple[dict, str]:
    """``reyn tools call`` with stdin and stderr on a pseudo-terminal; ``answer`` typed at the prompt."""
    import os
    import pty
    import select

    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "reyn_core", "tools", "call", world.write, *CALL, "--json"],
        cwd=world.root,
        env=world.env(),
        stdin=slave,
        stderr=slave,
        stdout=subprocess.PIPE,
    )
    os.close(slave)
    seen = b""
    deadline = time.monotonic() + 120  # a deadlock guard only
    while b"[y/N]" not in seen and time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], 1)
        if ready:
            seen += os.read(master, 4096)
    os.write(master, answer)
    out, _ = proc.communicate(timeout=120)
    os.close(master)
    return json.loads(out), seen.decode(errors="replace")


def test_on_a_terminal_the_user_approves_the_exact_call_and_it_runs(world):
    envelope, prompt = _on_terminal(world, b"y\n")
    assert envelope["status"] == "ok" and _marker(world) == "hi\n"
    assert world.write in prompt and '"text": "hi"' in prompt  # the approver saw the exact call
    assert "can touch  no sandbox: it runs in the host process" in prompt  # and what it can touch
    assert "[y/N]" in prompt and "[y/s/N]" not in prompt  # no session here: no "for this session"
    approved = [e for e in world.audit_events() if e.get("event") == "approval.approved"]
    assert approved and approved[0]["by"].startswith("user:")


def test_on_a_terminal_a_no_denies_and_nothing_runs(world):
    envelope, _ = _on_terminal(world, b"n\n")
    assert envelope["error"]["reason"] == "denied" and _marker(world) is None
