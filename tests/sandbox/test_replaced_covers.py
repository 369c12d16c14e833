"""What a cover holds when the host changes files while a command runs, and the launcher's other
setup refusals that must end in one line and exit 125.

A cover is a mount on the file found at its path when the command starts, not on the path: a file
the host later renames over it, or writes after rotating it away, is a new file, uncovered. So the
host's secret files are hidden by their *folder's* cover (``secret_hides``), which holds any file put
there; a hidden file with a second name (a hard link an earlier command made before the host hid it)
is refused; limits the launcher cannot give are refused before anything runs (the mount API's
refusal: ``test_status_agrees.py``).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

import reyn_sandbox
from reyn_sandbox import Grants, GrantsError

from .conftest import TIMEOUT, Sandbox

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
