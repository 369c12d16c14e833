"""An isolated plugin's worker never reads the host's secret files (issue 24, last stop's note (a)):
the argument key and the remote failure log lying inside its read grant are hidden from its sandbox
with their folder, while a file beside that folder, of the same owner and mode, is read (the positive
control); a read grant that is a secret, or the folder holding one, refuses the plugin (``RJ011``).
Real worker processes, the real sandbox."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import reyn_core.host as host
from reyn_core import ToolContext

from .plugin_kit import declaration, install_package_plugin
from .variant_plugin import PLUGIN

KEY = b"SECRET-KEY-" + b"k" * 21


def _load(grants: str) -> Any:
    plugin = '[plugins.variant]\nisolation = "process"\nprefix = "variant_"\n'
    toml = f'[plugins]\nenable = ["variant"]\n{plugin}{grants}'
    return host.load(host.Profile.from_toml_text(toml))


def _read(result: Any, path: Path) -> dict[str, Any]:
    args = {"path": str(path)}
    return asyncio.run(host.dispatch_tool(result.registry, "variant_read", args, ToolContext(surface="cli")))


@pytest.fixture
def granted(site: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    install_package_plugin(
        site,
        "variant",
        {
            "__init__.py": PLUGIN,
            "targets.json": "{}",
            "reyn_permissions.toml": declaration(filesystem_read=True),
        },
    )
    folder = tmp_path / "project"
    (folder / "private").mkdir(parents=True)
    os.chmod(folder, 0o755)
    os.chmod(folder / "private", 0o755)
    for name, data in (
        ("private/argument-hash.key", KEY),
        ("private/remote.log", b"ref=1 SECRET-LOG-LINE"),
        ("notes.txt", b"notes"),
    ):
        (folder / name).write_bytes(data)
        os.chmod(folder / name, 0o600)  # the same mode for the secrets and the control
    monkeypatch.setenv("REYN_ARGUMENT_KEY_FILE", str(folder / "private" / "argument-hash.key"))
    monkeypatch.setenv("REYN_REMOTE_LOG", str(folder / "private" / "remote.log"))
    return folder


def test_a_worker_reads_its_grant_but_not_the_secrets_inside(granted: Path) -> None:
    result = _load(f'[plugins.variant.grants]\nread = ["{granted}"]\n')
    status = next(i.status for i in result.report.plugins if i.plugin_id == "variant")
    assert status == "loaded", [d.render() for d in result.report.diagnostics]
    assert _read(result, granted / "notes.txt")["data"] == "notes"  # the positive control
    for secret in ("argument-hash.key", "remote.log"):
        reply = _read(result, granted / "private" / secret)
        assert "SECRET" not in str(reply) and reply.get("data") in (None, ""), reply  # never the bytes
    assert "SECRET" not in (granted / "notes.txt").read_text()


@pytest.mark.parametrize(
    ("grant", "words"),
    [("private/argument-hash.key", "is the host's argument key"), ("private", "is the folder")],
)
def test_a_read_grant_that_is_a_secret_or_holds_one_refuses_the_plugin(
    granted: Path, grant: str, words: str
) -> None:
    result = _load(f'[plugins.variant.grants]\nread = ["{granted / grant}"]\n')
    info = next(i for i in result.report.plugins if i.plugin_id == "variant")
    assert info.status == "refused"
    found = [d for d in result.report.diagnostics if d.code == "RJ011"]
    assert found and "the worker could read the host's secrets" in found[0].message
    assert words in found[0].message


def test_a_worker_started_before_the_first_failure_never_reads_the_log(granted: Path, monkeypatch) -> None:
    """A worker starts at load and lives on; the remote failure log is made at the first failure. The
    load makes Reyn's log folder first, so the worker's sandbox covers it from the start."""
    monkeypatch.delenv("REYN_REMOTE_LOG")
    monkeypatch.setenv("XDG_STATE_HOME", str(granted / "state"))
    (granted / "state").mkdir(mode=0o755)
    result = _load(f'[plugins.variant.grants]\nread = ["{granted}"]\n')
    assert next(i.status for i in result.report.plugins if i.plugin_id == "variant") == "loaded"
    code = "from reyn_core import log_remote_failure as log; log('web', 'failed', 'Bearer SECRET-sk-456')"
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)  # another process of the host
    assert "SECRET-sk-456" in (granted / "state" / "reyn" / "remote.log").read_text()
    (granted / "state" / "new.txt").write_text("made after the worker started")
    os.chmod(granted / "state" / "new.txt", 0o644)
    # positive control: the worker sees a file made next to the log folder after it started
    assert _read(result, granted / "state" / "new.txt")["data"] == "made after the worker started"
    reply = _read(result, granted / "state" / "reyn" / "remote.log")
    assert reply["status"] == "error" and "PermissionError" in reply["error"]["message"], reply
    assert "SECRET" not in str(reply)
