"""A pack's own trusted files join the host's one list (issue 24, left from the last review: (c)).

The memory pack's database and the mcp pack's import-mode snapshot are read back as truth (a model
trusts what it recalls; the next load builds tools from the snapshot), so a confined process must not
write them, exactly as it must not write the host's approval store. Each pack names them through
``reyn_trusted_files``; the load puts them in ``LoadResult.host_files``, and the one rule
(``reyn_sandbox.resolve_grants``) refuses a shell write root that covers them. Real sandbox, real
SQLite, real processes, each attack beside its positive control. Then the hook's bad answers:
``RI013`` refuses that plugin alone, and the rest loads."""

from __future__ import annotations

import asyncio
import hashlib
import json
from typing import Any

import pytest

from reyn_core import ToolContext
from reyn_core.host import dispatch_tool, load, load_profile

from .test_host_files import WRITE_OUT, _enable, _shell, _shell_settings, _writable_by_sandbox, needs_sandbox

OVERWRITE = "import pathlib; pathlib.Path({path!r}).write_bytes(b'forged'); print('forged')"


def _digest(path: Any) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _remember(world: Any) -> None:
    """One shared memory, written through the memory pack (it creates the SQLite store)."""
    registry = load(load_profile()).registry
    ctx = ToolContext(surface="router", agent="t", workspace=world.root)
    entry = {"slug": "deploy", "name": "Deploy", "description": "how to deploy", "type": "project"}
    done = asyncio.run(dispatch_tool(registry, "remember_shared", {**entry, "body": "use the script"}, ctx))
    assert done["status"] == "ok", done


MEMORY = '\n[plugins.memory.settings]\npath = "state/memory.db"\n'


@needs_sandbox
def test_a_shell_write_root_over_the_memory_database_is_refused_naming_it(world):
    _writable_by_sandbox(world.root / "state")
    _enable(world, "shell", "memory", extra=_shell_settings(["state"]) + MEMORY)
    _remember(world)
    db = world.root / "state" / "memory.db"
    before = _digest(db)
    envelope = _shell(world, OVERWRITE.format(path="state/memory.db"))
    assert envelope["status"] == "error" and envelope["error"]["kind"] == "denied", envelope
    message = envelope["error"]["message"]
    assert f"is the folder of the memory pack's database (plugin 'memory') ({db})" in message
    assert _digest(db) == before  # the command never ran


@needs_sandbox
def test_positive_control_a_write_root_beside_the_memory_database_runs(world):
    _writable_by_sandbox(world.root / "out")
    _enable(world, "shell", "memory", extra=_shell_settings(["out"]) + MEMORY)
    _remember(world)
    made = _shell(world, WRITE_OUT)
    assert made["status"] == "ok" and made["data"]["stdout"].strip() == "made", made
    # the store stays out of reach of the kernel too: the same write is refused there
    db = world.root / "state" / "memory.db"
    before = _digest(db)
    forged = _shell(world, OVERWRITE.format(path="state/memory.db"))
    assert forged["status"] == "ok" and forged["data"]["exit_code"] != 0, forged
    assert _digest(db) == before


SNAPSHOT = '\n[plugins.mcp.settings]\nsnapshot_file = "tools/mcp-tools.json"\n'


@needs_sandbox
def test_a_shell_write_root_over_the_mcp_snapshot_is_refused_naming_it(world):
    snap = world.root / "tools" / "mcp-tools.json"
    _writable_by_sandbox(snap.parent)
    snap.write_text(json.dumps({"version": 1, "servers": {}}))
    _enable(world, "shell", "mcp", extra=_shell_settings(["tools"]) + SNAPSHOT)
    envelope = _shell(world, OVERWRITE.format(path="tools/mcp-tools.json"))
    assert envelope["status"] == "error" and envelope["error"]["kind"] == "denied", envelope
    assert (
        f"is the folder of the mcp pack's tool snapshot (import mode) (plugin 'mcp') ({snap})"
        in envelope["error"]["message"]
    )
    assert json.loads(snap.read_text()) == {"version": 1, "servers": {}}


@needs_sandbox
def test_positive_control_a_write_root_beside_the_mcp_snapshot_runs(world):
    _writable_by_sandbox(world.root / "out")
    _enable(world, "shell", "mcp", extra=_shell_settings(["out"]) + SNAPSHOT)
    made = _shell(world, WRITE_OUT)
    assert made["status"] == "ok" and made["data"]["stdout"].strip() == "made", made
    assert (world.root / "out" / "made.txt").read_text() == "made"


def test_the_packs_files_are_in_the_load_list_with_the_hosts(world):
    _enable(world, "memory", "mcp", extra=MEMORY + SNAPSHOT)
    files = load(load_profile()).host_files
    db = str(world.root / "state" / "memory.db")
    assert files[db] == "the memory pack's database (plugin 'memory')"
    assert files[db + "-wal"] == "the memory pack's database (wal file) (plugin 'memory')"
    assert files[str(world.root / "tools" / "mcp-tools.json")].startswith("the mcp pack's tool snapshot")
    assert files[str(world.profile)] == "the host's profile"  # one list: the host's files are there too


# ---------------------------------------------------------------- a plugin's bad answer

HOOK = """

@hookimpl
def reyn_trusted_files(settings):
    {body}
"""

BAD_ANSWERS = {
    "not_a_mapping": ("return ['/srv/state.db']", "returned a list, not a mapping of absolute paths"),
    "relative": (
        "return {'state/own.db': 'its database'}",
        "named 'state/own.db', which is not an absolute path",
    ),
    "huge": (
        "return {f'/srv/{i}': 'a file' for i in range(200_000)}",
        "named 200,000 paths, more than 1,000",
    ),
    "raising": ("raise RuntimeError('no settings yet')", "reyn_trusted_files raised RuntimeError"),
    "bad_what": ("return {'/srv/own.db': 'two\\nlines'}", "described '/srv/own.db' as 'two\\nlines'"),
}


@pytest.mark.parametrize("case", sorted(BAD_ANSWERS))
def test_a_bad_answer_refuses_that_plugin_alone_with_ri013(world, case):
    body, said = BAD_ANSWERS[case]
    world.reinstall(HOOK.format(body=body))
    _enable(world, "memory", extra=MEMORY)
    result = load(load_profile())
    info = {i.plugin_id: i for i in result.report.plugins}
    assert info[world.pid].status == "failed"
    (diag,) = [d for d in info[world.pid].diagnostics if d.code == "RI013"]
    assert diag.severity == "error" and said in diag.message, diag.message
    assert f"the files plugin {world.pid!r} trusts are unknown and it is not loaded" in diag.message
    assert world.write not in result.registry  # its tools are not registered
    # the rest keeps loading, its files protected
    assert info["memory"].status == "loaded" and "remember_shared" in result.registry
    assert str(world.root / "state" / "memory.db") in result.host_files


def test_positive_control_a_good_answer_joins_the_list_and_the_plugin_loads(world, tmp_path):
    own = tmp_path / "own.db"
    dotted = f"{tmp_path}/x/../y"
    world.reinstall(HOOK.format(body=f"return {{{str(own)!r}: 'its database', {dotted!r}: 'y'}}"))
    result = load(load_profile())
    assert world.write in result.registry
    assert result.host_files[str(own)] == f"its database (plugin {world.pid!r})"
    assert result.host_files[str(tmp_path / "y")] == f"y (plugin {world.pid!r})"  # normalised
    assert not [d for d in result.report.diagnostics if d.code == "RI013"]


def _write_file(world: Any, path: str) -> dict[str, Any]:
    registry = load(load_profile()).registry
    ctx = ToolContext(surface="router", agent="t", workspace=world.root)
    return asyncio.run(dispatch_tool(registry, "write_file", {"path": path, "content": "forged"}, ctx))


def test_the_file_pack_does_not_write_the_memory_database(world):
    _enable(world, "file", "memory", extra='\n[plugins.file.settings]\nwrite_roots = ["state"]\n' + MEMORY)
    refused = _write_file(world, "state/memory.db")
    assert refused["status"] == "error" and refused["error"]["kind"] == "denied", refused
    assert "'state/memory.db' is protected by the host" in refused["error"]["message"]
    assert not (world.root / "state" / "memory.db").exists()
    # positive control: a file beside it, in the same write root, is written
    done = _write_file(world, "state/notes.txt")
    assert done["status"] == "ok", done
    assert (world.root / "state" / "notes.txt").read_text() == "forged"
