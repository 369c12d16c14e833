"""What a cover holds when the host changes files while a command runs, and the launcher's other
setup refusals that must end in one line and exit 125.

A cover is a mount on the file found at its path when the command starts, not on the path: a file
the host later renames over it, or writes after rotating it away, is a new file, uncovered. So the
host's secret files are hidden by their *folder's* cover (``secret_hides``), which holds any file put
there; a hidden file with a second name (a hard link an earlier command made before the host hid it)
is refused; limits the launcher cannot give and a kernel without the mount API on descriptors are
refused before anything runs.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

import reyn_sandbox
from reyn_sandbox import Grants, GrantsError

from .conftest import PACKAGE_PARENT, TIMEOUT, Sandbox

# Waits for the test's "go" (a file in the read root), then reads the secret's path and an ordinary
# file's; the test replaces both by rename in between, as an atomic save or a log rotation does.
READ_AFTER_GO = """
import os, sys, time
read, write = sys.argv[1:3]
open(os.path.join(write, "ready"), "w").close()
deadline = time.monotonic() + 30
while not os.path.exists(os.path.join(read, "go")) and time.monotonic() < deadline:
    time.sleep(0.02)
for path in (os.path.join(read, "keys", "remote.log"), os.path.join(read, "plain")):
    try:
        print(path, open(path).read())
    except OSError as exc:
        print(path, "unreadable", exc.strerror)
"""


def _keys(*read_roots: str, write: str) -> SimpleNamespace:
    return SimpleNamespace(
        read_roots=read_roots, write_roots=(write,), network=False, hide=(), read_only=(), sandbox="required"
    )


def _replace(path: Path, text: str) -> None:
    fresh = path.with_name(path.name + ".new")
    fresh.write_text(text)
    fresh.chmod(0o644)
    fresh.rename(path)


def test_a_host_secret_replaced_while_a_command_runs_stays_hidden(sandbox: Sandbox, area: Path) -> None:
    from reyn_core import SecretFile

    read, write = area / "read", area / "write"
    (read / "keys").mkdir(mode=0o755)
    (read / "keys" / "remote.log").write_text("OLD-SECRET")
    (read / "plain").write_text("OLD-PLAIN")
    for name in ("keys/remote.log", "plain"):
        (read / name).chmod(0o644)
    host = {str(read / "keys" / "remote.log"): SecretFile("the host's remote failure log")}
    grants = reyn_sandbox.resolve_grants(str(area), _keys(str(read), write=str(write)), host)
    assert grants.secrets == (str(read / "keys" / "remote.log"),) and grants.hide == ()

    argv = sandbox.argv([sandbox.python, "-c", READ_AFTER_GO, str(read), str(write)], grants)
    with subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd="/",
                          env={"PATH": "/usr/bin:/bin"}) as process:  # fmt: skip
        deadline = time.monotonic() + TIMEOUT
        while not (write / "ready").exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        _replace(read / "keys" / "remote.log", "NEW-SECRET")  # the host's atomic replace, mid-call
        _replace(read / "plain", "NEW-PLAIN")
        (read / "go").touch()
        out, err = process.communicate(timeout=TIMEOUT)

    assert process.returncode == 0, err
    assert "SECRET" not in out and f"{read / 'keys' / 'remote.log'} unreadable" in out
    # positive control: the same replacement of an ordinary file is seen by the same call
    assert f"{read / 'plain'} NEW-PLAIN" in out


def test_a_root_that_directly_holds_a_host_secret_file_is_refused(area: Path) -> None:
    from reyn_core import SecretFile

    (area / "read" / "keys").mkdir()
    host = {str(area / "read" / "keys" / "argument-hash.key"): SecretFile("the host's argument key")}
    with pytest.raises(GrantsError, match=r"is the folder holding the host's argument key"):
        reyn_sandbox.resolve_grants(str(area), _keys("read/keys", write="write"), host)
    # positive control: granted side by side, the folder beside the secret's is granted
    (area / "read" / "other").mkdir()
    grants = reyn_sandbox.resolve_grants(str(area), _keys("read/other", write="write"), host)
    assert grants.read_roots == (str(area / "read" / "other"),) and grants.secrets == ()


def test_a_hidden_file_with_a_second_name_is_refused(sandbox: Sandbox, area: Path) -> None:
    """Call 1 (no .env yet) makes `.env` and a hard link to it; the host hides `.env` later and the
    operator writes a secret into it in place: call 2 would read it through the link."""
    ws = area / "write"
    keys = SimpleNamespace(
        read_roots=(), write_roots=(str(ws),), network=False, hide=(".env",), read_only=(), sandbox="required"
    )
    first = reyn_sandbox.resolve_grants(str(ws), keys, {})
    assert first.hide == ()
    planted = sandbox.run(["/bin/sh", "-c", "touch .env && ln .env .x"], first, cwd=str(ws))
    assert planted.returncode == 0, planted.stderr
    with (ws / ".env").open("a") as handle:
        handle.write("API_KEY=operator-secret\n")

    with pytest.raises(GrantsError, match=r"hide path .*\.env has 2 names \(hard links\)"):
        reyn_sandbox.resolve_grants(str(ws), keys, {})

    # The launcher checks again on the file it covers: grants pinned before the link was made.
    (ws / ".x").unlink()
    argv = sandbox.argv(["/bin/cat", ".x"], reyn_sandbox.resolve_grants(str(ws), keys, {}))
    os.link(ws / ".env", ws / ".x")
    result = subprocess.run(argv, capture_output=True, text=True, timeout=TIMEOUT, cwd=str(ws),
                            env={"PATH": "/usr/bin:/bin"})  # fmt: skip
    assert result.returncode == 125 and "2 names (hard links)" in result.stderr
    assert "operator-secret" not in result.stdout and len(result.stderr.splitlines()) == 1

    # positive control: with one name the file is hidden and the command runs
    (ws / ".x").unlink()
    grants = reyn_sandbox.resolve_grants(str(ws), keys, {})
    result = sandbox.run(["/bin/cat", ".env"], grants, cwd=str(ws))
    assert result.returncode == 0 and result.stdout == ""


@pytest.mark.skipif(shutil.which("prlimit") is None, reason="needs prlimit (util-linux)")
def test_a_limit_above_the_inherited_hard_limit_exits_125_with_one_line(sandbox: Sandbox, area: Path) -> None:
    marker = area / "write" / "ran"
    command = ["/bin/sh", "-c", f"touch {marker}"]
    grants = Grants(write_roots=(str(area / "write"),))
    argv = ["prlimit", "--nofile=512:512", "--", *sandbox.argv(command, grants)]
    result = subprocess.run(argv, capture_output=True, text=True, timeout=TIMEOUT, cwd="/")
    assert result.returncode == 125 and not marker.exists()
    assert result.stderr.startswith("reyn-sandbox: open_files (1024) is above the hard limit")
    assert len(result.stderr.splitlines()) == 1
    # positive control: a limit within the inherited one runs
    grants = Grants(write_roots=(str(area / "write"),), open_files=256)
    argv = ["prlimit", "--nofile=512:512", "--", *sandbox.argv(command, grants)]
    result = subprocess.run(argv, capture_output=True, text=True, timeout=TIMEOUT, cwd="/")
    assert result.returncode == 0, result.stderr
    assert marker.exists()


# A seccomp filter making one system call fail with ENOSYS, as an old kernel or a container's
# profile does, then exec of the rest of argv.
NO_SYSCALL = """
import ctypes, os, platform, struct, sys
arch = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}[platform.machine()]
def op(code, jt, jf, k):
    return struct.pack("HBBI", code, jt, jf, k)
program = b"".join([
    op(0x20, 0, 0, 4), op(0x15, 1, 0, arch), op(0x06, 0, 0, 0x7FFF0000),
    op(0x20, 0, 0, 0), op(0x15, 0, 1, int(sys.argv[1])), op(0x06, 0, 0, 0x00050000 | 38),
    op(0x06, 0, 0, 0x7FFF0000),
])
buffer = ctypes.create_string_buffer(program)
class Prog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]
prog = Prog(len(program) // 8, ctypes.addressof(buffer))
libc = ctypes.CDLL(None, use_errno=True)
assert libc.prctl(38, 1, 0, 0, 0) == 0
assert libc.prctl(22, 2, ctypes.byref(prog), 0, 0) == 0
os.execv(sys.argv[2], sys.argv[2:])
"""
STATUS = (
    f"import sys; sys.path.insert(0, {PACKAGE_PARENT!r}); import reyn_sandbox; "
    "s = reyn_sandbox.status(); print(s.available, s.reason)"
)


@pytest.mark.parametrize(
    ("name", "number"), [("open_tree", 428), ("move_mount", 429), ("mount_setattr", 442)]
)
def test_without_the_mount_api_status_says_unavailable(name: str, number: int) -> None:
    if not reyn_sandbox.status().available:
        pytest.skip(f"no kernel sandbox here: {reyn_sandbox.status().reason}")
    filtered = [sys.executable, "-c", NO_SYSCALL, str(number), sys.executable, "-I", "-c", STATUS]
    result = subprocess.run(filtered, capture_output=True, text=True, timeout=TIMEOUT)
    assert result.stdout.startswith(f"False the kernel refuses {name} (ENOSYS)"), result.stderr
    # the launcher agrees: exit 125 with the same reason, nothing run
    launcher = reyn_sandbox.launcher_argv(["/bin/echo", "COMMAND-RAN"], Grants())
    refused = subprocess.run([sys.executable, "-c", NO_SYSCALL, str(number), *launcher],
                             capture_output=True, text=True, timeout=TIMEOUT, cwd="/")  # fmt: skip
    assert refused.returncode == 125 and "COMMAND-RAN" not in refused.stdout
    assert refused.stderr == f"reyn-sandbox: cannot confine commands here: {result.stdout.split(' ', 1)[1]}"
    # positive control: the same probe without the filter
    plain = subprocess.run(
        [sys.executable, "-I", "-c", STATUS], capture_output=True, text=True, timeout=TIMEOUT
    )
    assert plain.stdout.startswith("True None")
