"""The host's secret files are unreadable by construction (issue 24, last stop's note (a)).

The argument-hash key and the remote failure log lie in a folder the operator granted for reading
(``read_roots = ["."]``, as with ``XDG_CONFIG_HOME`` or ``$REYN_REMOTE_LOG`` inside the workspace):
a confined shell command and an mcp stdio server read a file beside the secrets' folders, with the
same owner and mode, and never the secret's bytes — each secret's folder is hidden as a whole, so a
file the host puts at its path mid-call is hidden too; the file pack refuses the secrets and reads
their neighbours. Real kernel sandbox, real
processes, a real MCP SDK server over stdio; every attack beside its positive control."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import reyn_sandbox
from reyn_core import SecretFile, ToolContext
from reyn_core.host import dispatch_tool, load, load_profile

from .conftest import LOG, private

PYTHON = shutil.which("python3", path="/usr/bin:/bin") or sys.executable
READ = (
    "import sys\n"
    "for p in sys.argv[1:]:\n"
    "    try:\n"
    "        print(p, repr(open(p, 'rb').read()))\n"
    "    except OSError as e:\n"
    "        print(p, 'error', type(e).__name__)\n"
)
PROBE = Path(__file__).parents[1] / "packs" / "mcp" / "servers" / "probe_server.py"

needs_sandbox = pytest.mark.skipif(
    not reyn_sandbox.status().available, reason=f"no kernel sandbox here: {reyn_sandbox.status().reason}"
)


def _enable(world: Any, pack: str, settings: str) -> None:
    world.enable_packs(pack, extra=settings)


def _shell_settings(read_roots: list[str]) -> str:
    return (
        "\n[plugins.shell.settings]\n"
        f"read_roots = {json.dumps(read_roots)}\n"
        f'programs = [{{ name = "python3", path = "{PYTHON}", any_args = true }}]\n'
    )


def _shell(world: Any, *paths: str) -> dict[str, Any]:
    registry = load(load_profile()).registry
    ctx = ToolContext(surface="phase", agent="t", workspace=world.root)
    args = {"argv": ["python3", "-c", READ, *paths]}
    return asyncio.run(dispatch_tool(registry, "shell", args, ctx, allowed_ops=["shell"]))


def test_the_load_marks_the_key_and_the_remote_log_secret_and_nothing_else(secrets):
    files = load(load_profile()).host_files
    root = secrets.root
    secret = {path for path, what in files.items() if isinstance(what, SecretFile)}
    assert secret == {
        str(root / "keys" / "argument-hash.key"),
        str(root / "logs" / "remote.log"),
        *(f"{root / 'logs' / 'remote.log'}.{n}" for n in (1, 2, 3)),
    }
    # the decided others: written by no confined process, read by whoever the operator grants
    for plain in (root / "reyn.toml", root / "reyn.lock", root / "audit.jsonl", root / "approvals.sqlite"):
        assert str(plain) in files and not isinstance(files[str(plain)], SecretFile)


@needs_sandbox
def test_a_confined_shell_command_reads_the_neighbours_and_never_the_secrets(secrets):
    _enable(secrets, "shell", _shell_settings(["."]))
    envelope = _shell(
        secrets,
        "keys/argument-hash.key",
        "logs/remote.log",
        "logs/remote.log.1",
        "keys/neighbour.txt",
        "beside.txt",
    )
    assert envelope["status"] == "ok", envelope
    out = envelope["data"]["stdout"]
    # positive control: same owner, same mode, beside the secrets' folders: read
    assert 'beside.txt b"beside the secrets\' folders"' in out, out
    # the secrets: their folders covered by an empty mount (neighbours in them too)
    for path in ("keys/argument-hash.key", "logs/remote.log", "logs/remote.log.1", "keys/neighbour.txt"):
        assert f"{path} error PermissionError" in out, out
    assert "SECRET" not in out and "SECRET" not in envelope["data"]["stderr"]


@needs_sandbox
def test_the_secrets_in_reyns_own_log_folder_are_hidden_with_the_folder(secrets, monkeypatch):
    """The default log (no ``$REYN_REMOTE_LOG``) is in Reyn's own log folder, hidden as a whole: a
    rotation renames files, and a file made while a command runs is covered only by its folder's."""
    monkeypatch.delenv("REYN_REMOTE_LOG")
    monkeypatch.setenv("XDG_STATE_HOME", str(secrets.root / "state"))
    private(secrets.root / "state" / "reyn" / "remote.log", LOG.encode())
    private(secrets.root / "state" / "other.txt", b"beside the log folder")
    _enable(secrets, "shell", _shell_settings(["."]))
    envelope = _shell(secrets, "state/reyn/remote.log", "state/other.txt")
    out = envelope["data"]["stdout"]
    assert "state/other.txt b'beside the log folder'" in out, envelope
    assert "state/reyn/remote.log error PermissionError" in out and "SECRET" not in out


@needs_sandbox
@pytest.mark.parametrize(
    "root", ["keys/argument-hash.key", "state/reyn", "keys"], ids=["the_key", "in_log_folder", "key_folder"]
)
def test_a_read_root_that_is_a_secret_is_refused_naming_it(secrets, monkeypatch, root):
    monkeypatch.delenv("REYN_REMOTE_LOG")
    monkeypatch.setenv("XDG_STATE_HOME", str(secrets.root / "state"))
    private(secrets.root / "state" / "reyn" / "remote.log", LOG.encode())
    _enable(secrets, "shell", _shell_settings([root]))
    envelope = _shell(secrets, "keys/argument-hash.key")
    assert envelope["status"] == "error" and envelope["error"]["kind"] == "denied", envelope
    message = envelope["error"]["message"]
    assert "the roots in [plugins.shell.settings]" in message and "no confined process may read" in message
    assert ("Reyn's user log folder" if root == "state/reyn" else "the host's argument key") in message
    assert "SECRET" not in message
    # positive control: the workspace that holds it is granted (the secret hidden inside it)
    text = secrets.profile.read_text().replace(f'read_roots = ["{root}"]', 'read_roots = ["."]')
    secrets.profile.write_text(text)
    made = _shell(secrets, "beside.txt", "keys/argument-hash.key")
    assert made["status"] == "ok", made
    assert "beside the secrets' folders" in made["data"]["stdout"] and "SECRET" not in made["data"]["stdout"]


def probe_reader(world: Any) -> Callable[[str], dict[str, Any]]:
    """The mcp pack with the probe stdio server (read root: the workspace) enabled; a function calling
    its ``read_file`` through the registry and returning the call's data (the envelope must be ok)."""
    shutil.copy(PROBE, world.root / "probe_server.py")
    os.chmod(world.root / "probe_server.py", 0o644)
    _enable(
        world,
        "mcp",
        "\n[plugins.mcp.settings.servers.probe]\n"
        f"command = {json.dumps(sys.executable)}\n"
        'args = ["probe_server.py"]\n'
        f"cwd = {json.dumps(str(world.root))}\n"
        'read_roots = ["."]\n'
        f'env = {{ PATH = "/usr/bin:/bin", HOME = {json.dumps(str(world.root))} }}\n',
    )
    registry = load(load_profile()).registry
    ctx = ToolContext(surface="router", agent="t", workspace=world.root)

    def read(path: str) -> dict[str, Any]:
        args = {"server": "probe", "tool": "read_file", "arguments": {"path": path}}
        envelope = asyncio.run(dispatch_tool(registry, "call_mcp_tool", args, ctx))
        assert envelope["status"] == "ok", envelope
        return dict(envelope["data"])

    return read


@needs_sandbox
def test_an_mcp_stdio_server_reads_the_neighbour_and_never_the_key(secrets):
    read = probe_reader(secrets)
    assert "beside the secrets' folders" in json.dumps(read("beside.txt"))  # the positive control
    for secret in ("keys/argument-hash.key", "logs/remote.log"):
        assert "SECRET" not in json.dumps(read(secret))


FILE_SETTINGS = '\n[plugins.file.settings]\nread_roots = ["."]\nwrite_roots = ["out"]\n'


def test_the_file_pack_refuses_to_read_a_secret_and_reads_its_neighbour(secrets):
    _enable(secrets, "file", FILE_SETTINGS)
    for secret, shown in (
        ("keys/argument-hash.key", "keys/argument-hash.key"),
        ("logs/remote.log", "logs/remote.log"),
        ("./logs//remote.log.1", "logs/remote.log.1"),
        (str(secrets.root / "keys" / "argument-hash.key"), "keys/argument-hash.key"),
    ):
        code, envelope = secrets.reyn_json("tools", "call", "read_file", f"path={secret}")
        assert code == 1 and envelope["error"]["kind"] == "denied", envelope
        message = envelope["error"]["message"]
        assert f"{shown!r} is one of the host's secret files" in message, message
        assert str(secrets.root) not in message and "SECRET" not in json.dumps(envelope)
    code, envelope = secrets.reyn_json("tools", "call", "read_file", "path=keys/neighbour.txt")
    assert code == 0 and envelope["data"]["content"] == "neighbour key-folder text", envelope
    # a search over the folder skips the secrets, says so, and finds the neighbour
    code, envelope = secrets.reyn_json("tools", "call", "grep_files", "pattern=SECRET|neighbour", "path=.")
    assert code == 0, envelope
    found = {m["path"] for m in envelope["data"]["matches"]}
    assert found == {"keys/neighbour.txt", "logs/neighbour.log"}, envelope
    # the key, the log and its three rotated copies (the load made .2 and .3: secrets exist before
    # anything runs confined)
    assert "5 of the host's secret files were skipped (never read)" in envelope["data"]["note"]
    assert "SECRET" not in json.dumps(envelope["data"]["matches"])
    # named alone, a grep is a read: refused like read_file
    code, envelope = secrets.reyn_json(
        "tools", "call", "grep_files", "pattern=.", "path=keys/argument-hash.key"
    )
    assert code == 1 and "one of the host's secret files" in envelope["error"]["message"], envelope
