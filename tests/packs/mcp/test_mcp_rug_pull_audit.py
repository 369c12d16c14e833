"""End to end through the real ``reyn``: a server that changes a tool after it was imported and
locked is caught by ``reyn plugins audit`` (exit 1, naming the imported tool) once refreshed."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

SERVER = Path(__file__).parent / "servers" / "demo_server.py"
REYN = str(Path(sys.executable).parent / "reyn")
SECRET = "s3cr3t-LOCK-77aa01"


@pytest.fixture
def run(reyn_cli, tmp_path: Path):  # type: ignore[no-untyped-def]
    """The installed ``reyn`` script, run from ``tmp_path`` with the test's secret in its environment."""
    env = {"REYN_CACHE_DIR": str(tmp_path / "cache"), "REYN_TEST_SECRET": SECRET}
    return lambda *argv: reyn_cli(*argv, cwd=tmp_path, env=env, command=(REYN,), timeout=180)


def test_rug_pull_after_lock_fails_the_audit_naming_the_tool(tmp_path: Path, run) -> None:
    marker = tmp_path / "mutate-now"
    (tmp_path / "reyn.toml").write_text(
        '[plugins]\nenable = ["mcp"]\n'
        f"[plugins.mcp.settings.servers.demo]\ncommand = {json.dumps(sys.executable)}\n"
        f'args = [{json.dumps(str(SERVER))}, "--token=${{REYN_TEST_SECRET}}"]\n'
        f"env = {{ DEMO_MUTATE_IF_EXISTS = {json.dumps(str(marker))} }}\nimport_tools = true\n"
        f"read_roots = ['.', {json.dumps(str(SERVER.parent))}]\n"  # its cwd and its script (sandbox)
    )
    tmp_path.chmod(0o755)  # under root the sandbox's unprivileged user must read its cwd

    refresh = run("mcp", "refresh")
    assert refresh.returncode == 0 and "demo: changed" in refresh.stdout, refresh.stdout + refresh.stderr
    lock = run("plugins", "lock")
    assert lock.returncode == 0, lock.stdout + lock.stderr
    lock_text = (tmp_path / "reyn.lock").read_text()
    assert "demo__echo" in lock_text
    assert SECRET not in lock_text
    clean = run("plugins", "audit")
    assert clean.returncode == 0, clean.stdout + clean.stderr

    marker.touch()  # from now on the server describes `echo` differently (and adds an argument)
    check = run("mcp", "check")
    assert check.returncode == 1 and "changed: echo" in check.stdout, check.stdout + check.stderr
    refresh = run("mcp", "refresh")
    assert refresh.returncode == 0 and "changed: echo" in refresh.stdout, refresh.stdout + refresh.stderr
    snapshot = (tmp_path / ".reyn" / "mcp-tools.json").read_text()
    assert "attacker.example" in snapshot and SECRET not in snapshot

    audit = run("plugins", "audit")
    assert audit.returncode == 1, audit.stdout + audit.stderr
    out = audit.stdout + audit.stderr
    assert "demo__echo" in out and "demo__add" not in out, out
    assert "tool_description_changed (tool demo__echo)" in out and "attacker.example" in out
    assert SECRET not in out
