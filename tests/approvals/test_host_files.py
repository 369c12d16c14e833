"""The host's own files (issue 24, a reviewer's HIGH fail-open): one list per load
(``LoadResult.host_files``), handed by the dispatcher to every call's context on every surface, and
checked by one rule wherever a write root is granted (``reyn_sandbox.resolve_grants``).

The reproduction: a profile in the workspace, the shell pack with ``write_roots = ["."]`` and
``python3``, an ``[approvals]`` rule holding a tool. The held call returns ``approval_required``;
a confined ``python3`` then rewrote the SQLite approval store in the workspace (``status =
'approved'``) and the held call ran. Now the shell call is refused before anything starts, naming
the store, and the held call still needs a real approval. Real sandbox, real SQLite, real processes;
each attack beside its positive control (a write root clear of the host's files works)."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import reyn_sandbox
from reyn_core import ToolContext
from reyn_core.host import dispatch_tool, load, load_profile

PYTHON = shutil.which("python3", path="/usr/bin:/bin") or sys.executable
SANDBOX_UID = 65534
FLIP = (
    "import sqlite3; c = sqlite3.connect('approvals.sqlite'); "
    "c.execute(\"UPDATE approvals SET status='approved', uses=-1\"); c.commit(); print('flipped')"
)
WRITE_OUT = "import pathlib; pathlib.Path('out/made.txt').write_text('made'); print('made')"

needs_sandbox = pytest.mark.skipif(
    not reyn_sandbox.status().available, reason=f"no kernel sandbox here: {reyn_sandbox.status().reason}"
)


def _enable(world: Any, *packs: str, extra: str = "") -> None:
    world.enable_packs(*packs, extra=extra)


def _shell_settings(write_roots: list[str]) -> str:
    return (
        "\n[plugins.shell.settings]\n"
        f"write_roots = {json.dumps(write_roots)}\n"
        f'programs = [{{ name = "python3", path = "{PYTHON}", any_args = true }}]\n'
    )


def _writable_by_sandbox(path: Path) -> None:
    path.mkdir(exist_ok=True)
    if os.geteuid() == 0:
        os.chown(path, SANDBOX_UID, SANDBOX_UID)
    os.chmod(path, 0o777)


def _held(world: Any) -> str:
    """A call the ``[approvals]`` rule holds (through ``reyn tools call``): its approval id."""
    _, envelope = world.reyn_json("tools", "call", world.write, "path=out/a.md", "text=hi")
    assert envelope["error"]["kind"] == "approval_required", envelope
    approval: str = envelope["error"]["approval"]
    return approval


def _status(world: Any, approval: str) -> str:
    with sqlite3.connect(world.root / "approvals.sqlite") as db:
        row = db.execute("SELECT status FROM approvals WHERE id = ?", (approval,)).fetchone()
    return str(row[0])


def _shell(world: Any, code: str) -> dict[str, Any]:
    """``python3 -c CODE`` through the shell pack, dispatched as reyn-loops' phase runner does: the
    context is the host's own, without any host file in it."""
    registry = load(load_profile()).registry
    ctx = ToolContext(surface="phase", agent="t", workspace=world.root)
    assert ctx.host_files == {}
    argv = {"argv": ["python3", "-c", code]}
    return asyncio.run(dispatch_tool(registry, "shell", argv, ctx, allowed_ops=["shell"]))


@needs_sandbox
def test_a_shell_write_root_over_the_approval_store_is_refused_and_the_call_stays_held(world):
    _writable_by_sandbox(world.root)
    _enable(world, "shell", extra=_shell_settings(["."]))
    approval = _held(world)
    envelope = _shell(world, FLIP)
    assert envelope["status"] == "error" and envelope["error"]["kind"] == "denied", envelope
    message = envelope["error"]["message"]
    assert "the roots in [plugins.shell.settings]" in message
    assert (
        f"is the folder of the host's approval store (approvals.sqlite) ({world.root / 'approvals.sqlite'})"
        in (message)
    )
    assert "the host's profile" in message and "the host's audit log" in message
    assert _status(world, approval) == "pending"  # the command never ran
    # the held call still needs a real approval
    code, again = world.reyn_json(
        "tools", "call", world.write, "path=out/a.md", "text=hi", "--approval", approval
    )
    assert code == 1 and again["error"]["kind"] == "approval_required", again
    assert not (world.root / "out" / "a.md").exists()
    assert world.reyn("approvals", "approve", approval).returncode == 0
    code, done = world.reyn_json(
        "tools", "call", world.write, "path=out/a.md", "text=hi", "--approval", approval
    )
    assert code == 0 and done["status"] == "ok", done


@needs_sandbox
def test_positive_control_a_write_root_clear_of_the_host_files_runs_and_writes_there(world):
    _writable_by_sandbox(world.root / "out")
    _enable(world, "shell", extra=_shell_settings(["out"]))
    approval = _held(world)
    made = _shell(world, WRITE_OUT)
    assert made["status"] == "ok" and made["data"]["stdout"].strip() == "made", made
    assert (world.root / "out" / "made.txt").read_text() == "made"
    # the same command that flipped the store before: the kernel refuses its write now
    flip = _shell(world, FLIP)
    assert (
        flip["status"] == "ok" and flip["data"]["exit_code"] != 0 and "flipped" not in flip["data"]["stdout"]
    )
    assert _status(world, approval) == "pending"


@needs_sandbox
@pytest.mark.parametrize("write_roots", [["."], ["/"], ["sub/.."]], ids=["workspace", "root", "dotdot"])
def test_every_form_of_a_root_over_the_workspace_is_refused(world, write_roots):
    # "sub/.." is refused as an entry by the grant keys' own check; "/" and "." by the host files
    _writable_by_sandbox(world.root)
    _enable(world, "shell", extra=_shell_settings(write_roots))
    load_result = load(load_profile())
    if write_roots == ["sub/.."]:
        assert "shell" not in load_result.registry  # refused at load with the settings
        return
    envelope = _shell(world, WRITE_OUT)
    assert envelope["status"] == "error" and "the host's approval store" in envelope["error"]["message"]
    assert not (world.root / "out" / "made.txt").exists()


# ---------------------------------------------------------------- the list itself


def test_the_load_names_every_host_file_with_what_it_is(world):
    result = load(load_profile())
    files = result.host_files
    assert files is result.registry.host_files
    store = str(world.root / "approvals.sqlite")
    assert files[store] == "the host's approval store (approvals.sqlite)"
    for sibling in ("-wal", "-shm", "-journal"):
        assert files[store + sibling] == f"the host's approval store (approvals.sqlite{sibling})"
    assert files[str(world.profile)] == "the host's profile"
    assert files[str(world.root / "reyn.lock")] == "the host's lock"
    assert files[str(world.root / "audit.jsonl")] == "the host's audit log"
    assert "the host's argument key" in files.values()
    assert any(what.startswith("Reyn's user cache folder") for what in files.values())
    assert all(os.path.isabs(path) for path in files)


def test_a_context_a_host_built_cannot_drop_them(world):
    # a host that sets its own host_files gets the load's merged in: the registry's list wins
    registry = load(load_profile()).registry
    ctx = ToolContext(surface="cli", workspace=world.root, host_files={"/srv/extra": "a host's own file"})
    tool = registry.get(world.write)
    seen = registry.context_for(tool, ctx).host_files
    assert seen["/srv/extra"] == "a host's own file"
    assert all(seen[path] == what for path, what in registry.host_files.items())
    lying = ToolContext(surface="cli", workspace=world.root, host_files={str(world.profile): "nothing"})
    assert registry.context_for(tool, lying).host_files[str(world.profile)] == "the host's profile"


# ---------------------------------------------------------------- an mcp stdio server


PROBE = Path(__file__).parents[1] / "packs" / "mcp" / "servers" / "probe_server.py"


def _mcp_settings(world: Any, write_roots: list[str]) -> str:
    shutil.copy(PROBE, world.root / "probe_server.py")
    return (
        "\n[plugins.mcp.settings.servers.probe]\n"
        f"command = {json.dumps(sys.executable)}\n"
        'args = ["probe_server.py"]\n'
        f"cwd = {json.dumps(str(world.root))}\n"
        f"write_roots = {json.dumps(write_roots)}\n"
        f'env = {{ PATH = "/usr/bin:/bin", HOME = {json.dumps(str(world.root))} }}\n'
    )


def _probe(world: Any) -> dict[str, Any]:
    registry = load(load_profile()).registry
    ctx = ToolContext(surface="router", agent="t", workspace=world.root)
    args = {"server": "probe", "tool": "read_file", "arguments": {"path": "probe_server.py"}}
    return asyncio.run(dispatch_tool(registry, "call_mcp_tool", args, ctx))


@needs_sandbox
def test_an_mcp_server_whose_write_root_covers_the_store_and_profile_is_not_started(world):
    _writable_by_sandbox(world.root)
    _enable(world, "mcp", extra=_mcp_settings(world, ["."]))
    approval = _held(world)
    envelope = _probe(world)
    assert envelope["status"] == "error", envelope
    message = envelope["error"]["message"]
    assert envelope["error"]["kind"] == "denied" and "MCP server 'probe' is not started" in message
    assert "[plugins.mcp.settings.servers.probe]" in message
    assert f"is the folder of the host's profile ({world.profile})" in message
    assert "the host's approval store (approvals.sqlite-wal)" in message and "-wal-wal" not in message
    assert _status(world, approval) == "pending"


@needs_sandbox
def test_positive_control_an_mcp_server_writing_elsewhere_starts(world):
    _writable_by_sandbox(world.root / "out")
    _enable(world, "mcp", extra=_mcp_settings(world, ["out"]))
    envelope = _probe(world)
    assert envelope["status"] == "ok" and "MCPServer" in str(envelope["data"]), envelope


# ---------------------------------------------------------------- the file pack, on every surface


FILE_SETTINGS = '\n[plugins.file.settings]\nread_roots = ["."]\nwrite_roots = ["."]\nprotected = []\n'


@pytest.mark.parametrize("target", ["approvals.sqlite-wal", "reyn.toml"])
def test_the_file_pack_refuses_the_host_files_through_reyn_tools_call(world, target):
    # protected = []: the pack's own default patterns are off; the load's list alone refuses
    _enable(world, "file", extra=FILE_SETTINGS)
    before = world.profile.read_text()
    code, envelope = world.reyn_json("tools", "call", "write_file", f"path={target}", "content=x")
    assert code == 1 and envelope["error"]["kind"] == "denied", envelope
    assert "is protected by the host" in envelope["error"]["message"]
    assert not (world.root / "approvals.sqlite-wal").exists() and world.profile.read_text() == before
    # positive control: the same call to a file of no concern to the host
    code, envelope = world.reyn_json("tools", "call", "write_file", "path=notes.txt", "content=x")
    assert code == 0 and (world.root / "notes.txt").read_text() == "x", envelope


async def test_the_file_pack_refuses_the_host_files_through_reyn_loops(world, server, llm_client):
    from reyn_loops import RouterLoop
    from reyn_loops.testing.scripted_server import ScriptedReply as R

    _enable(world, "file", extra=FILE_SETTINGS)
    before = world.profile.read_text()
    registry = load(load_profile()).registry
    server.add(
        R.calls(("write_file", {"path": "approvals.sqlite-wal", "content": "x"})),
        R.calls(("write_file", {"path": "reyn.toml", "content": "x"})),
        R.calls(("write_file", {"path": "notes.txt", "content": "x"})),  # the positive control
        R.text("done"),
    )
    ctx = ToolContext(surface="router", agent="writer", workspace=world.root)  # no host files set
    run = await RouterLoop(registry, model="openai/scripted", ctx=ctx, client=llm_client).run("write")
    assert run.status == "done", run
    answers = [json.loads(m["content"]) for m in server.requests[3].body["messages"] if m["role"] == "tool"]
    assert [a["status"] for a in answers] == ["error", "error", "ok"], answers
    assert all("is protected by the host" in a["error"]["message"] for a in answers[:2])
    assert not (world.root / "approvals.sqlite-wal").exists() and world.profile.read_text() == before
    assert (world.root / "notes.txt").read_text() == "x"


# ---------------------------------------------------------------- what a store says its files are


FACTORY = """
from pathlib import Path
from reyn_approvals_sqlite import SqliteApprovalStore

class Factory:
    def __call__(self, settings, base):
        return SqliteApprovalStore(Path(base) / "custom.sqlite")

    def host_files(self, settings, base):
        {body}

open_store = Factory()
"""


def _custom_store(world: Any, body: str, settings: str = 'settings.file = "x.db"') -> dict[str, str]:
    """The load's host files with the store ``custom`` whose ``host_files`` runs ``body``."""
    from site_plugin import install_distribution

    package = f"reyn_store_{world.pid}"
    # a backend name of its own: one process serves one extension per entry point, and an earlier
    # test's store under the same name would be "the previous version" (refused, RI009)
    backend = f"custom_{world.pid}"
    install_distribution(
        world.site,
        f"reyn-store-{world.pid.replace('_', '-')}",
        package,
        {"__init__.py": "", "store.py": FACTORY.replace("{body}", body)},
        f"[reyn.approval_stores]\n{backend} = {package}.store:open_store\n",
    )
    text = world.profile.read_text().replace(
        'settings.file = "approvals.sqlite"', f'backend = "{backend}"\n{settings}'
    )
    world.profile.write_text(text)
    result = load(load_profile())
    refused = [d.message for d in result.report.diagnostics if d.code == "RC011"]
    assert not refused, refused
    return {path: what for path, what in result.host_files.items() if "approval store" in what}


def _paths(files: dict[str, str]) -> set[str]:
    return set(files)


def _with_siblings(*paths: Path) -> set[str]:
    return {f"{p}{s}" for p in paths for s in ("", "-wal", "-shm", "-journal")}


def test_a_relative_answer_resolves_against_the_profile_folder(world):
    assert _paths(_custom_store(world, 'return [Path("state/db")]')) == _with_siblings(
        world.root / "state" / "db"
    )


def test_a_home_answer_is_expanded(world, monkeypatch):
    monkeypatch.setenv("HOME", str(world.root / "home"))
    files = _custom_store(world, 'return ["~/store.db"]')
    assert _paths(files) == _with_siblings(world.root / "home" / "store.db")


def test_a_single_string_answer_is_one_file_not_its_letters(world):
    assert _paths(_custom_store(world, 'return "single.db"')) == _with_siblings(world.root / "single.db")


def test_two_files_of_the_same_name_are_both_kept(world):
    files = _custom_store(world, 'return [Path("a/db"), Path("b/db")]')
    assert _paths(files) == _with_siblings(world.root / "a" / "db", world.root / "b" / "db")


@pytest.mark.parametrize(
    "body", ['raise RuntimeError("no idea")', "return 42", "return [None]"], ids=["raises", "int", "none"]
)
def test_a_store_that_cannot_say_protects_every_string_of_its_settings(world, body):
    settings = 'settings.file = "x.db"\nsettings.nested.deep = ["y/z.db", 7]'
    files = _custom_store(world, body, settings)
    assert _paths(files) == _with_siblings(world.root / "x.db", world.root / "y" / "z.db")


def test_a_store_that_is_not_installed_protects_its_settings_and_the_default(world):
    # the documented sqlite store from nowhere: its default file and its settings' strings
    text = world.profile.read_text().replace(
        'settings.file = "approvals.sqlite"', 'settings.file = "kept.db"'
    )
    world.profile.write_text(text)
    result = load(load_profile(), review="lock")  # a review imports no store
    files = {p for p, what in result.host_files.items() if "approval store" in what}
    assert files == _with_siblings(world.root / "kept.db", world.root / "reyn-approvals.sqlite")
    # positive control: the ordinary load asks the store, which names its file and its two siblings
    files = {p for p, what in load(load_profile()).host_files.items() if "approval store" in what}
    assert files == _with_siblings(world.root / "kept.db")


@needs_sandbox
@pytest.mark.parametrize("write_roots", [["."], ["out"]], ids=["over_the_store", "control"])
def test_reyn_mcp_refresh_checks_the_same_list(world, write_roots):
    # `reyn mcp refresh` starts the server outside any tool call: the load's list is passed too
    _writable_by_sandbox(world.root / "out")
    _enable(world, "mcp", extra=_mcp_settings(world, write_roots))
    done = world.reyn("mcp", "refresh", "--server", "probe", "--json")
    report = json.loads(done.stdout)["servers"][0]
    if write_roots == ["."]:
        assert (
            report["status"] == "error" and "ToolDenied: MCP server 'probe' is not started" in report["error"]
        )
        assert "the host's approval store (approvals.sqlite)" in report["error"]
    else:
        assert report["status"] != "error" and done.returncode == 0, (report, done.stderr)


@needs_sandbox
def test_a_write_root_on_the_hosts_import_path_is_refused(world, monkeypatch):
    """A folder on the host's ``sys.path`` (here a ``lib`` of the workspace, as ``PYTHONPATH=lib``
    puts it) is code the host runs: a module or ``.pth`` planted there runs in the host, unconfined.
    A shell write root over it is refused naming it; control: without ``lib`` on the path, the same
    root runs the command."""
    lib = world.root / "lib"
    _writable_by_sandbox(lib)
    _enable(world, "shell", extra=_shell_settings(["lib"]))
    plant = "import pathlib; pathlib.Path('lib/zz_planted.pth').write_text('import os\\n'); print('planted')"
    made = _shell(world, plant)  # control first: lib is not yet on the host's path
    assert made["status"] == "ok" and made["data"]["stdout"].strip() == "planted", made
    (lib / "zz_planted.pth").unlink()
    monkeypatch.syspath_prepend(str(lib))
    assert load(load_profile()).host_files[str(lib.resolve())] == "an entry of the host's import path"
    refused = _shell(world, plant)
    assert refused["status"] == "error" and refused["error"]["kind"] == "denied", refused
    assert "an entry of the host's import path" in refused["error"]["message"]
    assert not (lib / "zz_planted.pth").exists()


@needs_sandbox
def test_a_write_root_over_an_editable_installs_code_is_refused(world, monkeypatch):
    """The reviewer's reproduction (task W): an operator's plugin installed editable from a flat
    layout is reached through setuptools' meta-path finder, not a ``sys.path`` entry — as the web
    pack is in this tree's venv (the tree's root is on the path only when the tests run as ``python
    -m pytest`` from there: left out, as for a host started by ``reyn``). A shell write root equal to
    its folder was accepted, and a confined ``python3`` appended code the host ran unconfined at its
    next import. Now the call is refused before anything runs, naming the module; control: a write
    root in the workspace runs the command."""
    import reyn_tools_web

    code = Path(reyn_tools_web.__file__).resolve().parent
    kept = [p for p in sys.path if not reyn_sandbox.path_within(str(code), os.path.realpath(p or "."))]
    monkeypatch.setattr(sys, "path", kept)
    _writable_by_sandbox(world.root / "out")
    plain = world.profile.read_text()
    _enable(world, "shell", extra=_shell_settings(["out"]))
    made = _shell(world, WRITE_OUT)  # control first: a write root in the workspace
    assert made["status"] == "ok" and made["data"]["stdout"].strip() == "made", made
    world.profile.write_text(plain)
    _enable(world, "shell", extra=_shell_settings([str(code)]))
    refused = _shell(world, "print('ran')")
    assert refused["status"] == "error" and refused["error"]["kind"] == "denied", refused
    message = refused["error"]["message"]
    assert (
        f"write root {code} is the code of module 'reyn_tools_web' (an editable install's finder" in message
    )


TOY_PROJECT = """\
[build-system]
requires = ["setuptools>=64"]
build-backend = "setuptools.build_meta"

[project]
name = "toy-plug"
version = "0.1"

[tool.setuptools]
packages = ["toy_plug"]
"""
SHELL_HOST = """\
import asyncio, json, os, site, sys
site.addsitedir(sys.argv[1])  # as the interpreter does at start for its site-packages
from reyn_core import ToolContext
from reyn_core.host import dispatch_tool, load, load_profile
registry = load(load_profile()).registry
ctx = ToolContext(surface="phase", agent="t", workspace=os.getcwd())
call = {"argv": ["python3", "-c", sys.argv[2]]}
print(json.dumps(asyncio.run(dispatch_tool(registry, "shell", call, ctx, allowed_ops=["shell"]))))
"""


@needs_sandbox
def test_a_real_editable_install_of_a_flat_layout_is_protected_in_a_fresh_host(world, tmp_path):
    """The reviewer's setup end to end: ``pip install -e`` of a flat-layout project (setuptools
    installs its finder, so the package is on no ``sys.path`` entry), a host process started fresh
    with that site folder, the shell pack granted the package's folder as a write root. The confined
    ``python3`` appended code to its ``__init__.py``, which the host's next import ran unconfined;
    now the call is refused and the file is unchanged. Control: the same host with a write root in
    the workspace runs the command."""
    project = tmp_path / "proj"
    package = project / "toy_plug"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (project / "pyproject.toml").write_text(TOY_PROJECT)
    prefix = tmp_path / "prefix"
    pip = [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation", "--no-index"]
    subprocess.run([*pip, "--prefix", str(prefix), "-e", str(project)], check=True, timeout=300)
    site_dir = next(prefix.glob("lib/python*/site-packages"))
    assert list(site_dir.glob("__editable___toy_plug*_finder.py")) and not (site_dir / "toy_plug").exists()
    _writable_by_sandbox(package)
    os.chmod(package / "__init__.py", 0o666)  # so only the grant decides
    _writable_by_sandbox(world.root / "out")

    def shell(write_roots: list[str], code: str) -> dict[str, Any]:
        world.profile.write_text(plain)
        _enable(world, "shell", extra=_shell_settings(write_roots))
        done = world.python("-c", SHELL_HOST, str(site_dir), code)
        assert done.returncode == 0, done.stderr
        return dict(json.loads(done.stdout.splitlines()[-1]))

    plain = world.profile.read_text()
    made = shell(["out"], WRITE_OUT)  # control
    assert made["status"] == "ok" and made["data"]["stdout"].strip() == "made", made
    plant = f"open({str(package / '__init__.py')!r}, 'a').write('import os  # planted\\n')"
    refused = shell([str(package)], plant)
    assert refused["status"] == "error" and refused["error"]["kind"] == "denied", refused
    assert (
        "the code of module 'toy_plug' (an editable install's finder maps it)" in refused["error"]["message"]
    )
    assert (package / "__init__.py").read_text() == ""


def test_the_files_the_profile_search_tries_first_are_protected(world, monkeypatch, tmp_path):
    """With the profile in the user's config folder, ``./reyn.toml`` and ``./pyproject.toml`` come
    first in the search: a model that wrote one would choose the next load's profile, so both are the
    host's. Control: with ``./reyn.toml`` as the profile, ``./pyproject.toml`` is not protected (the
    search never reaches it)."""
    monkeypatch.chdir(world.root)
    local = load(load_profile()).host_files
    assert str(world.root.resolve() / "pyproject.toml") not in local  # control
    user = tmp_path / "xdg" / "reyn"
    user.mkdir(parents=True, exist_ok=True)
    (user / "reyn.toml").write_text(world.profile.read_text())
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv("REYN_PROFILE_FILE", raising=False)
    world.profile.rename(world.root / "elsewhere.toml")
    found = load(load_profile()).host_files
    for name in ("reyn.toml", "pyproject.toml"):
        assert found[str(world.root.resolve() / name)] == "where the next load looks for its profile first"
