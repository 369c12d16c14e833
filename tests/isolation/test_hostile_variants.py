"""Attacks beyond the hostile plugin's first list, each with its positive control: the worker taking
over the sandbox's init with ptrace to run a program it was not granted, and forged frames written
straight into the protocol pipe (at load and in a call). Real worker processes, the real sandbox."""

from __future__ import annotations

import asyncio
import json
import os
import platform
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import reyn_core.host as host
from reyn_core import ToolContext
from reyn_isolation.protocol import HEADER
from reyn_sandbox import path_within

from .conftest import Listener
from .plugin_kit import declaration, install_package_plugin
from .variant_plugin import PLUGIN


def _frame(body: bytes) -> str:
    return (HEADER.pack(len(body)) + body).hex()


def _json_frame(message: dict[str, Any]) -> str:
    return _frame(json.dumps(message).encode())


def _install(site: Path, pid: str, targets: dict[str, Any] | None = None, **declared: Any) -> None:
    files = {
        "__init__.py": PLUGIN,
        "targets.json": json.dumps(targets or {}),
        "reyn_permissions.toml": declaration(**declared),
    }
    install_package_plugin(site, pid, files)


def _load(toml: str) -> Any:
    return host.load(host.Profile.from_toml_text(toml))


def _isolated(*plugins: str, grants: str = "") -> str:
    enable = ", ".join(f'"{p}"' for p in plugins)
    sections = "".join(f'[plugins.{p}]\nisolation = "process"\nprefix = "{p}_"\n' for p in plugins)
    return f"[plugins]\nenable = [{enable}]\n{sections}{grants}"


def _call(result: Any, name: str, args: dict[str, Any] | None = None) -> dict[str, Any]:
    return asyncio.run(host.dispatch_tool(result.registry, name, args or {}, ToolContext(surface="cli")))


def _status(result: Any, pid: str) -> str:
    return next(i.status for i in result.report.plugins if i.plugin_id == pid)


def _serves_again(result: Any, tool: str, within_s: float = 30.0) -> None:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        reply = _call(result, tool, {"text": "back"})
        if reply["status"] == "ok":
            assert reply["data"] == "back"
            return
        # the stop can fail the call that found it; then the restart's backoff
        assert reply["error"]["kind"] in {"execution_error", "runtime_missing"}, reply
        time.sleep(0.2)
    raise AssertionError(f"{tool} did not answer again within {within_s} s")


@pytest.fixture
def out(tmp_path: Path) -> Path:
    folder = tmp_path / "out"
    folder.mkdir()
    os.chmod(folder, 0o777)  # writable by the sandbox's user: only the grants decide
    return folder


@pytest.fixture
def victim() -> Iterator[subprocess.Popen[bytes]]:
    """A process of the host's user, outside any sandbox, for the in-process control."""
    process = subprocess.Popen(["sleep", "300"])
    time.sleep(0.2)  # in its nanosleep: stopped after a syscall instruction when attached
    yield process
    process.kill()
    process.wait(10)


# ---------------------------------------------------------------- ptrace of the sandbox's init


def test_the_worker_cannot_take_over_the_sandbox_init_to_run_a_program(site: Path, out: Path) -> None:
    """PID 1 of the worker's sandbox is the launcher's supervisor: same user, same Landlock domain, and
    without the worker's exec ban or rlimits. Were it traceable, a worker granted no subprocess could
    make it execve a shell (this test did, before init was made non-dumpable)."""
    _install(site, "variant", filesystem_write=True)
    result = _load(_isolated("variant", grants=f'[plugins.variant.grants]\nwrite = ["{out}"]\n'))
    assert _status(result, "variant") == "loaded", [d.render() for d in result.report.diagnostics]
    # positive control: the granted write works from the worker
    assert _call(result, "variant_write", {"path": str(out / "legit"), "text": "ok"})["data"] == "written"
    shell = ["/bin/sh", "-c", f"echo pwned > {out}/pwned"]
    reply = _call(result, "variant_inject", {"pid": 1, "argv": shell})
    assert reply["status"] == "error", reply
    assert "Operation not permitted" in reply["error"]["message"], reply
    time.sleep(0.5)  # a shell that did start would have written by now
    assert sorted(p.name for p in out.iterdir()) == ["legit"]
    assert _call(result, "variant_echo", {"text": "still here"})["data"] == "still here"


@pytest.mark.skipif(platform.machine() != "x86_64", reason="the injection is written for x86_64")
def test_in_process_the_same_injection_makes_another_process_run_a_shell(
    site: Path, out: Path, victim: subprocess.Popen[bytes]
) -> None:
    _install(site, "variant", filesystem_write=True)
    result = _load('[plugins]\nenable = ["variant"]\n')
    shell = ["/bin/sh", "-c", f"echo pwned > {out}/pwned"]
    reply = _call(result, "inject", {"pid": victim.pid, "argv": shell})
    assert reply == {"status": "ok", "data": f"{victim.pid} runs /bin/sh"}, reply
    victim.wait(10)
    assert (out / "pwned").read_text() == "pwned\n"


# ---------------------------------------------------------------- forged frames at load

DEEP = b"[" * 200_000 + b"]" * 200_000

FORGED_AT_LOAD = {
    "nested_too_deeply": _frame(b'{"op":"loaded","hooks":[],"tools":[],"diagnostics":' + DEEP + b"}"),
    "hooks_not_a_list": _json_frame({"op": "loaded", "hooks": 7, "tools": []}),
    "hook_names_not_strings": _json_frame({"op": "loaded", "hooks": [{"a": 1}], "tools": []}),
    "load_failed_naming_another_code": _json_frame({"op": "load_failed", "code": "RL001", "message": "m"}),
    # nests within what json parses, deeper than the host's recursive steps take (before: RI005 and a
    # worker process left running)
    "a_schema_nested_400_deep": _frame(
        b'{"op":"loaded","hooks":[],"tools":[{"served":{"name":"echo","parameters":'
        + b'{"type":"object","properties":{"a":' * 400
        + b"{}"
        + b"}}" * 400
        + b"}}]}"
    ),
    "not_utf8": _frame(b'{"op":"loaded","hooks":[],"tools":[],"x":"\xff\xfe"}'),
    "a_result_instead": _json_frame({"op": "result", "id": 1, "ok": True, "data": "x"}),
}


@pytest.mark.parametrize("kind", sorted(FORGED_AT_LOAD))
def test_a_forged_load_reply_fails_that_plugin_and_the_host_keeps_loading(site: Path, kind: str) -> None:
    _install(site, "forger", {"forge_at_import": FORGED_AT_LOAD[kind]})
    _install(site, "honest")
    result = _load(_isolated("forger", "honest"))
    assert _status(result, "forger") == "failed", [d.render() for d in result.report.diagnostics]
    errors = [d for d in result.report.diagnostics if d.is_error and d.plugin == "forger"]
    assert [d.code for d in errors] == ["RJ005"], [d.render() for d in errors]
    assert "forger_echo" not in result.registry
    # positive control: the same code, not forging, loads beside it and serves
    assert _status(result, "honest") == "loaded"
    assert _call(result, "honest_echo", {"text": "hi"}) == {"status": "ok", "data": "hi"}


# ---------------------------------------------------------------- forged frames in a call

FORGED_IN_CALL = {
    # the first call of a fresh client has id 1
    "nested_too_deeply": (
        _frame(b'{"op":"result","id":1,"ok":true,"data":' + DEEP + b"}"),
        "broke the protocol",
    ),
    "a_reply_to_a_call_never_made": (
        _json_frame({"op": "result", "id": 999_999, "ok": True, "data": "forged"}),
        "a call it was not asked",
    ),
}


@pytest.mark.parametrize("kind", sorted(FORGED_IN_CALL))
def test_a_forged_frame_in_a_call_stops_the_worker_and_it_serves_again(site: Path, kind: str) -> None:
    frame, why = FORGED_IN_CALL[kind]
    _install(site, "forger")
    result = _load(_isolated("forger"))
    assert _status(result, "forger") == "loaded"
    reply = _call(result, "forger_forge", {"frame_hex": frame})
    assert reply["status"] == "error" and reply["error"]["kind"] == "execution_error", reply
    assert why in reply["error"]["message"], reply
    _serves_again(result, "forger_echo")
    # positive control: forging nothing, the same tool answers
    assert _call(result, "forger_forge", {"frame_hex": ""})["data"] == "forged 0 bytes"


def test_a_second_reply_to_one_call_stops_the_worker(site: Path) -> None:
    _install(site, "forger")
    result = _load(_isolated("forger"))
    first = _call(result, "forger_instance")["data"]  # call 1
    # positive control: answering once per call, the same worker keeps serving
    assert _call(result, "forger_forge", {"frame_hex": ""})["data"] == "forged 0 bytes"
    assert _call(result, "forger_instance")["data"] == first
    # the forged reply to call 4 arrives first and is its answer; the worker's own is a second reply
    forged = _json_frame({"op": "result", "id": 4, "ok": True, "data": "x"})
    assert _call(result, "forger_forge", {"frame_hex": forged}) == {"status": "ok", "data": "x"}
    _serves_again(result, "forger_echo")
    assert _call(result, "forger_instance")["data"] != first  # that worker was stopped, this is another


# ---------------------------------------------------------------- write roots over the host's code, records

DROPPED = "import pathlib\npathlib.Path(__file__).with_name('ran-in-the-host').write_text('pwned')\n"


def _overlaps(site: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, tuple[Path, str]]:
    """Write roots that overlap what the host runs or trusts: (root, a file the worker would write)."""
    outer = tmp_path / "outer"
    (outer / "lib").mkdir(parents=True)
    monkeypatch.syspath_prepend(str(outer / "lib"))  # the host imports from a folder inside the root
    logs = tmp_path / "logs"
    logs.mkdir()
    keys = tmp_path / "keys"
    monkeypatch.setenv("REYN_ARGUMENT_KEY_FILE", str(keys / "argument-hash.key"))
    home = tmp_path / "home"
    monkeypatch.setenv("REYN_CACHE_DIR", str(home / "cache"))  # the load's caches, as the host finds them
    (home / "cache" / "bytecode").mkdir(parents=True)
    (tmp_path / "xdg" / "reyn").mkdir(parents=True, exist_ok=True)
    return {
        "an_import_path_entry": (site, "reyn_dropped.py"),
        "a_folder_holding_an_import_path_entry": (outer, "lib/reyn_dropped.py"),
        "a_folder_inside_an_import_path_entry": (site / "reyn_dropped", "__init__.py"),
        "the_audit_log_folder": (logs, "audit.jsonl"),
        "the_argument_key_folder": (keys, "reyn_dropped.py"),  # calls and sessions are hashed with it
        # the next load trusts and runs the compiled bytecode it finds there (and the digests)
        "the_bytecode_cache": (home / "cache" / "bytecode", "reyn_dropped.bin"),
        "a_folder_holding_the_cache": (home, "cache/digests.json"),
        "the_user_configuration_folder": (tmp_path / "xdg" / "reyn", "reyn.toml"),
    }


@pytest.mark.parametrize(
    "kind",
    [
        "an_import_path_entry",
        "a_folder_holding_an_import_path_entry",
        "a_folder_inside_an_import_path_entry",
        "the_audit_log_folder",
        "the_argument_key_folder",
        "the_bytecode_cache",
        "a_folder_holding_the_cache",
        "the_user_configuration_folder",
    ],
)
def test_a_write_root_over_the_host_code_or_records_is_refused(
    site: Path, tmp_path: Path, out: Path, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    """From such a root the worker could drop a module the host then imports (or forge the audit log):
    the plugin is refused before any worker starts (``RJ011``). Before this check, it loaded and the
    host imported the module the worker dropped on its import path."""
    root, target = _overlaps(site, tmp_path, monkeypatch)[kind]
    root.mkdir(exist_ok=True)
    os.chmod(root, 0o777)
    _install(site, "variant", filesystem_write=True)
    audit = f'[audit]\nlog = "{tmp_path / "logs" / "audit.jsonl"}"\n'
    grants = f'[plugins.variant.grants]\nwrite = ["{root}"]\n'
    result = _load(audit + _isolated("variant", grants=grants))
    assert _status(result, "variant") == "refused", [d.render() for d in result.report.diagnostics]
    rj011 = [d for d in result.report.diagnostics if d.code == "RJ011"]
    assert len(rj011) == 1 and str(root) in rj011[0].message, [d.render() for d in rj011]
    assert "variant_write" not in result.registry
    assert not (root / target).exists()
    # positive control: the same plugin with a write root clear of them loads and writes there
    grants = f'[plugins.variant.grants]\nwrite = ["{out}"]\n'
    result = _load(audit + _isolated("variant", grants=grants))
    assert _status(result, "variant") == "loaded", [d.render() for d in result.report.diagnostics]
    written = _call(result, "variant_write", {"path": str(out / "reyn_dropped.py"), "text": DROPPED})
    assert written["data"] == "written"


def test_a_write_root_over_an_editable_installs_code_is_refused(
    site: Path, out: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The web pack in this tree's venv is installed editable from a flat layout: setuptools reaches
    it through its meta-path finder, on no ``sys.path`` entry (the tree's root is on it only when
    the tests run as ``python -m pytest`` from there: left out, as for a host started by ``reyn``).
    A worker granted its folder could rewrite code the host runs unconfined; that write root was
    accepted (the host's code was the import path, the Python installation and the worker's own
    code). Now ``RJ011`` names it."""
    import reyn_tools_web

    code = os.path.realpath(os.path.dirname(reyn_tools_web.__file__))
    monkeypatch.setattr(
        sys, "path", [p for p in sys.path if not path_within(code, os.path.realpath(p or "."))]
    )
    _install(site, "variant", filesystem_write=True)
    result = _load(_isolated("variant", grants=f'[plugins.variant.grants]\nwrite = ["{code}"]\n'))
    assert _status(result, "variant") == "refused", [d.render() for d in result.report.diagnostics]
    rj011 = [d.message for d in result.report.diagnostics if d.code == "RJ011"]
    assert len(rj011) == 1 and f"write root {code} is the code of module 'reyn_tools_web'" in rj011[0], rj011
    # positive control: the same plugin with a write root clear of it loads and writes there
    result = _load(_isolated("variant", grants=f'[plugins.variant.grants]\nwrite = ["{out}"]\n'))
    assert _status(result, "variant") == "loaded", [d.render() for d in result.report.diagnostics]
    written = _call(result, "variant_write", {"path": str(out / "reyn_dropped.py"), "text": DROPPED})
    assert written["data"] == "written"


# ---------------------------------------------------------------- a service's socket inside a read root


@pytest.fixture
def service(tmp_path: Path) -> Iterator[tuple[Path, Listener]]:
    """A folder to grant read on, holding a file and a live service's socket (a database's, docker's)."""
    folder = tmp_path / "project"
    folder.mkdir()
    os.chmod(folder, 0o755)
    (folder / "notes.txt").write_text("notes")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(str(folder / "service.sock"))
    os.chmod(folder / "service.sock", 0o777)  # connectable by the sandbox's user: only the sandbox decides
    sock.listen(4)
    server = Listener(sock)
    yield folder, server
    server.close()


def test_a_read_grant_does_not_reach_a_service_whose_socket_lies_inside(
    site: Path, service: tuple[Path, Listener]
) -> None:
    """The kernel lets a process connect to a socket file on a read-only mount, and Landlock (up to
    ABI 7) does not check connect(2): before the worker refused itself unix sockets, a plugin granted
    only read on this folder sent the service what it liked."""
    folder, server = service
    _install(site, "variant", filesystem_read=True, network=True)
    sock = str(folder / "service.sock")
    result = _load(_isolated("variant", grants=f'[plugins.variant.grants]\nread = ["{folder}"]\n'))
    assert _status(result, "variant") == "loaded", [d.render() for d in result.report.diagnostics]
    # positive control: what the read grant is for works
    assert _call(result, "variant_read", {"path": str(folder / "notes.txt")})["data"] == "notes"
    reply = _call(result, "variant_unix_send", {"path": sock, "text": "pwned"})
    assert reply["status"] == "error" and "PermissionError" in reply["error"]["message"], reply
    assert server.received == []
    # the worker's own machinery (asyncio's socketpair) is untouched: it keeps serving
    assert _call(result, "variant_echo", {"text": "still here"})["data"] == "still here"
    # positive control: granted network (talking to services), the same call reaches the service
    grants = f'[plugins.variant.grants]\nread = ["{folder}"]\nnetwork = true\n'
    result = _load(_isolated("variant", grants=grants))
    assert _call(result, "variant_unix_send", {"path": sock, "text": "granted"})["data"] == "sent"
    deadline = time.monotonic() + 10
    while not server.received and time.monotonic() < deadline:
        time.sleep(0.05)
    assert server.received == [b"granted"]


# ---------------------------------------------------------------- processes without a subprocess grant


def test_a_worker_granted_no_subprocess_makes_no_process_but_keeps_its_threads(site: Path) -> None:
    """Its memory limit is per process: were fork allowed, each child would bring another allowance
    (up to max_processes of them), enough to push the host into the OOM killer. Before, a worker
    granted nothing forked freely (only execve was refused)."""
    _install(site, "variant", subprocess=True)
    result = _load(_isolated("variant"))
    assert _status(result, "variant") == "loaded", [d.render() for d in result.report.diagnostics]
    reply = _call(result, "variant_fork_children", {"count": 4, "megabytes": 8})
    assert reply["status"] == "error" and "PermissionError" in reply["error"]["message"], reply
    # positive control: threads (asyncio's, a plugin's own pool) still start; the worker serves on
    assert _call(result, "variant_threads", {"count": 8})["data"] == 8
    assert _call(result, "variant_echo", {"text": "still here"})["data"] == "still here"
    # positive control: granted subprocess, the same call forks
    result = _load(_isolated("variant", grants="[plugins.variant.grants]\nsubprocess = true\n"))
    assert _call(result, "variant_fork_children", {"count": 4, "megabytes": 8})["data"] == "forked 4"


# ---------------------------------------------------------------- granted roots swapped for links


def test_a_root_inside_a_write_root_is_refused(site: Path, tmp_path: Path) -> None:
    """From a write root, a worker can move a folder inside it aside and leave a symlink at its path
    (the mount moves with the folder); the next start resolves the root to the link's target, anywhere
    on the host. Before, a worker with write on data/ and read on data/shelf/ref did that and died: its
    restarted worker was given ~/.ssh. So no granted root may lie inside a write root (``RJ011``)."""
    data, other = tmp_path / "data", tmp_path / "other"
    ref = data / "shelf" / "ref"
    for folder in (ref, other):
        folder.mkdir(parents=True)
    os.chmod(data, 0o777)  # writable by the sandbox's user: only the grants decide
    _install(site, "variant", filesystem_read=True, filesystem_write=True)
    _install(site, "peer", filesystem_read=True, filesystem_write=True)
    cases = {
        "its own": f'[plugins.variant.grants]\nread = ["{ref}"]\nwrite = ["{data}"]\n',
        "plugin 'peer'": (
            f'[plugins.variant.grants]\nread = ["{ref}"]\n[plugins.peer.grants]\nwrite = ["{data}"]\n'
        ),
    }
    for owner, grants in cases.items():
        result = _load(_isolated("variant", "peer", grants=grants))
        assert _status(result, "variant") == "refused", [d.render() for d in result.report.diagnostics]
        rj011 = [d.message for d in result.report.diagnostics if d.code == "RJ011" and d.plugin == "variant"]
        assert rj011 and f"{ref} lies inside {owner}'s write root {data}" in rj011[0], rj011
    # positive control: roots side by side load, and the read root is read
    (other / "notes.txt").write_text("notes")
    grants = f'[plugins.variant.grants]\nread = ["{other}"]\nwrite = ["{data}"]\n'
    result = _load(_isolated("variant", grants=grants))
    assert _status(result, "variant") == "loaded", [d.render() for d in result.report.diagnostics]
    assert _call(result, "variant_read", {"path": str(other / "notes.txt")})["data"] == "notes"


def test_a_granted_root_swapped_after_load_stops_the_restart(site: Path, tmp_path: Path) -> None:
    """Whoever swaps a root for a symlink after load (another process of the host's user), the
    restarted worker is not given the link's target: the launcher checks at every start that each
    root is still the folder found at load (its identity, reached without following a link)."""
    ssh = tmp_path / "home" / ".ssh"
    ssh.mkdir(parents=True)
    (ssh / "id_ed25519").write_text("PRIVATE KEY")
    ref = tmp_path / "data" / "ref"
    ref.mkdir(parents=True)
    (ref / "notes.txt").write_text("notes")
    _install(site, "variant", filesystem_read=True)
    result = _load(_isolated("variant", grants=f'[plugins.variant.grants]\nread = ["{ref}"]\n'))
    garbage = {"frame_hex": _frame(b"not json")}  # the host stops a worker that breaks the protocol
    # positive control: a worker stopped this way is restarted with its root and reads it
    assert _call(result, "variant_forge", garbage)["error"]["kind"] == "execution_error"
    _serves_again(result, "variant_echo")
    assert _call(result, "variant_read", {"path": str(ref / "notes.txt")})["data"] == "notes"
    ref.rename(ref.with_name("ref-moved"))
    ref.symlink_to(ssh)
    assert _call(result, "variant_forge", garbage)["error"]["kind"] == "execution_error"
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        reply = _call(result, "variant_read", {"path": str(ref / "id_ed25519")})
        if reply["status"] == "ok" or "symbolic link" in reply["error"]["message"]:
            break
        time.sleep(0.2)
    assert reply["status"] == "error" and reply["error"]["kind"] == "runtime_missing", reply
    assert f"read root {ref} goes through a symbolic link at {ref}" in reply["error"]["message"], reply


def test_a_result_nesting_too_deep_is_refused_by_the_worker_which_keeps_serving(site: Path) -> None:
    _install(site, "variant")
    result = _load(_isolated("variant"))
    first = _call(result, "variant_instance")["data"]
    # positive control: a result nested deep, but within the frame's depth, arrives whole
    assert _call(result, "variant_nested", {"depth": 100})["data"] == json.loads("[" * 100 + "]" * 100)
    reply = _call(result, "variant_nested", {"depth": 300})
    assert reply["status"] == "error" and reply["error"]["kind"] == "execution_error", reply
    assert "nests deeper than the 128 levels" in reply["error"]["message"], reply
    assert _call(result, "variant_instance")["data"] == first  # the same worker: nothing was forged
