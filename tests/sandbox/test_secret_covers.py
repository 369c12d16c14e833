"""The host's secret files (``Grants.secrets``) are never skipped by the launcher (issue 24, secrets
review F1): one that exists is covered; one that does not — it may appear while the command runs,
as the remote failure log does at its first record — has the folder that would hold it covered, so
the file made there later stays unread; when that folder is a mounted root itself, nothing runs.
The operator's ``hide`` entries are not secrets: a missing ``.env`` is still skipped. Real
launcher, real files made by the host while the confined command waits for them."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from reyn_sandbox import Grants
from reyn_sandbox._secret_covers import secret_covers

from .conftest import TIMEOUT, Sandbox

# say it runs, wait for the host's go-file (bounded), then read each path
WAIT_READ = (
    "import os, sys, time\n"
    "print('running', flush=True)\n"
    "for _ in range(400):\n"
    "    if os.path.exists(sys.argv[1]): break\n"
    "    time.sleep(0.025)\n"
    "for p in sys.argv[2:]:\n"
    "    try: print(p, repr(open(p).read()))\n"
    "    except OSError as e: print(p, 'error', type(e).__name__)\n"
)
READ = "import sys\nfor p in sys.argv[1:]:\n    print(p, repr(open(p).read()))\n"


def _public(path: Path, text: str) -> None:
    """A file every runner's uid could read, were it not covered (only the cover keeps it unread)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.parent.chmod(0o755)
    path.write_text(text)
    path.chmod(0o644)


def test_a_secret_made_while_the_command_runs_is_never_read(sandbox: Sandbox, area: Path) -> None:
    root = area / "read"
    (root / "state").mkdir(mode=0o755)
    log = root / "state" / "reyn" / "remote.log"  # does not exist when the command starts
    go, neighbour = root / "go", root / "made-later.txt"
    grants = Grants(read_roots=(str(root),), secrets=(str(log),))
    proc = subprocess.Popen(
        sandbox.argv([sandbox.python, "-c", WAIT_READ, str(go), str(log), str(neighbour)], grants),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={"PATH": "/usr/bin:/bin"},
        cwd="/",
    )
    try:
        assert proc.stdout is not None and proc.stdout.readline() == "running\n"  # confined by now
        _public(log, "SECRET raw server words")  # the first record, folder included
        _public(neighbour, "made while it ran")
        _public(go, "")
        out, err = proc.communicate(timeout=TIMEOUT)
    finally:
        proc.kill()
    assert proc.returncode == 0, err
    # positive control: a file the host made in the root meanwhile is seen
    assert f"{neighbour} 'made while it ran'" in out, out
    # the secret, made in the same root at the same time: its folder was covered at the start
    assert f"{log} error" in out and "SECRET" not in out


def test_a_missing_secret_the_root_itself_would_hold_stops_the_start(sandbox: Sandbox, area: Path) -> None:
    root = area / "read"
    copy = root / "remote.log.2"  # a rotated copy not made yet, right in the root: nothing to cover
    grants = Grants(read_roots=(str(root),), secrets=(str(copy),))
    refused = sandbox.python_code(READ, grants, str(root / "notes.txt"))
    assert refused.returncode == 125, refused.stderr
    assert f"the folder holding the host's secret file {copy} is {root} itself" in refused.stderr
    assert "notes" not in refused.stdout
    # existing makes no difference: a file the host renamed over it mid-call would be readable
    _public(copy, "SECRET rotated")
    _public(root / "notes.txt", "notes")
    assert sandbox.python_code(READ, grants, str(root / "notes.txt")).returncode == 125
    # positive control: in a folder of its own below the root, it is covered with that folder
    held = root / "logs" / "remote.log.2"
    _public(held, "SECRET rotated")
    grants = Grants(read_roots=(str(root),), secrets=(str(held),))
    code = READ.replace(
        "print(p, repr(open(p).read()))", "print(p, repr(open(p).read()) if 'logs' not in p else 'x')"
    )
    made = sandbox.python_ok(code, grants, str(root / "notes.txt")).stdout
    assert f"{root / 'notes.txt'} 'notes'" in made
    assert sandbox.python_code(READ, grants, str(held)).returncode != 0


def test_a_root_inside_a_secret_stops_the_start(sandbox: Sandbox, area: Path) -> None:
    folder = area / "read" / "state" / "reyn"
    _public(folder / "remote.log", "SECRET")
    refused = sandbox.python_code(
        READ, Grants(read_roots=(str(folder),), secrets=(str(folder),)), str(folder / "remote.log")
    )
    assert refused.returncode == 125 and "is or lies inside the host's secret file" in refused.stderr
    assert "SECRET" not in refused.stdout
    # positive control: the folder above it, granted, runs with the secret covered
    grants = Grants(read_roots=(str(area / "read"),), secrets=(str(folder),))
    made = sandbox.python_code(READ, grants, str(folder / "remote.log"))
    assert made.returncode != 0 and "SECRET" not in made.stdout and "PermissionError" in made.stderr


def test_an_operators_hide_that_does_not_exist_is_still_skipped(sandbox: Sandbox, area: Path) -> None:
    root = area / "read"
    _public(root / "notes.txt", "notes")
    grants = Grants(read_roots=(str(root),), hide=(str(root / ".env"),))  # no .env in this project
    assert "'notes'" in sandbox.python_ok(READ, grants, str(root / "notes.txt")).stdout


def test_a_secret_in_a_read_only_path_outside_the_write_roots_is_covered(
    sandbox: Sandbox, area: Path
) -> None:
    """``read_only`` mounts a path readable wherever it is: a secret inside is covered as in a root."""
    outside = area / "outside"
    _public(outside / "keys" / "argument-hash.key", "SECRET-KEY")
    _public(outside / "neighbour.txt", "neighbour")
    grants = Grants(read_only=(str(outside),), secrets=(str(outside / "keys" / "argument-hash.key"),))
    assert "'neighbour'" in sandbox.python_ok(READ, grants, str(outside / "neighbour.txt")).stdout
    hidden = sandbox.python_code(READ, grants, str(outside / "keys" / "argument-hash.key"))
    assert hidden.returncode != 0 and "SECRET" not in hidden.stdout


def test_what_covers_each_secret(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    (root / "state" / "deep").mkdir(parents=True)
    (root / "keys").mkdir()
    (root / "keys" / "key").write_text("k")
    secrets = [
        str(root / "keys" / "key"),  # exists: its folder is covered (holds a replacement too)
        str(root / "state" / "deep" / "reyn" / "remote.log"),  # missing: its nearest existing folder
        str(root / "state" / "deep" / "reyn" / "remote.log.1"),  # the same cover, once
        "/srv/elsewhere/key",  # in no mount: not in the view
    ]
    assert secret_covers(secrets, [str(root), "/usr"]) == (str(root / "keys"), str(root / "state" / "deep"))
    # under an operator's cover that must be there, a secret is out of sight already
    assert secret_covers(secrets[:2], [str(root)], [str(root / "state")]) == (str(root / "keys"),)
    # directly in the root, missing or not: covering its folder would take the grant away
    (root / "direct.key").write_text("k")
    for secret in ("missing.key", "direct.key"):
        with pytest.raises(ValueError, match="itself, which is mounted"):
            secret_covers([str(root / secret)], [str(root)])
    # directly in a fixed mount (a system folder): nothing to re-grant, the file itself is covered
    assert secret_covers([str(root / "direct.key")], [str(root)], fixed=[str(root)]) == (
        str(root / "direct.key"),
    )


@pytest.mark.parametrize("hide", ["state", "state/reyn/x"], ids=["above_the_secret", "inside_the_secret"])
def test_an_operators_hide_beside_a_secret_cover_starts(sandbox: Sandbox, area: Path, hide: str) -> None:
    """The operator's covers and the secrets' meet without refusing the start: a secret under a
    hidden folder is out of sight there; a hidden path inside a secret is covered, then the secret."""
    root = area / "read"
    _public(root / "state" / "reyn" / "remote.log", "SECRET")
    _public(root / "state" / "reyn" / "x", "hidden by the operator")
    _public(root / "notes.txt", "notes")
    grants = Grants(
        read_roots=(str(root),), hide=(str(root / hide),), secrets=(str(root / "state" / "reyn"),)
    )
    code = (
        "import sys\n"
        "for p in sys.argv[1:]:\n"
        "    try: print(p, repr(open(p).read()))\n"
        "    except OSError as e: print(p, 'error', type(e).__name__)\n"
    )
    log, x = root / "state" / "reyn" / "remote.log", root / "state" / "reyn" / "x"
    out = sandbox.python_ok(code, grants, str(root / "notes.txt"), str(log), str(x)).stdout
    assert f"{root / 'notes.txt'} 'notes'" in out  # positive control: it ran, the root is read
    assert f"{log} error" in out and f"{x} error" in out and "SECRET" not in out and "operator" not in out
