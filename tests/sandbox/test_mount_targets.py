"""Mounted as checked, where it was checked, and kept there for the next call.

A mount point below a granted folder is reached through that folder, which other processes may write
while the launcher builds the view. The launcher reaches every mount point from the new root without
following a link, creates missing ones only on its own tmpfs, checks it is the file the host found,
and mounts onto the descriptor. The window is made deterministic here: a driver runs the real
launcher with its source-opening step wrapped, and does the other process's swap right after the
source was opened and checked (as root: the driver's PID 1 must be able to write the host folder).

Inside the sandbox, every folder between a write root and a ``hide`` or ``read_only`` path is a mount
point, so the command cannot rename it to move the path away from the next call's cover; a ``hide``
or ``read_only`` path the host found must still be there at the start (else nothing runs).
"""

from __future__ import annotations

import errno
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

import reyn_sandbox
from reyn_sandbox import Grants, GrantsError
from reyn_sandbox._identity import RootChanged, make_dirs

from .conftest import PACKAGE_PARENT, TIMEOUT, Sandbox

DRIVER = """
import os, sys
sys.path.insert(0, sys.argv[1])
from reyn_sandbox import _filesystem, _launch
action, when, dest = sys.argv[2:5]
opened = _filesystem._open_source
def swapped(mount):
    fd = opened(mount)
    if mount.path == when and action != "none":
        os.rename(when, when + ".moved")
        if action == "link":
            os.symlink(dest, when)
        elif action == "folder":
            os.mkdir(when)
    return fd
_filesystem._open_source = swapped
raise SystemExit(_launch.main(sys.argv[5:]))
"""
WRITE = "import sys; open(sys.argv[1], 'w').write('written')"


def _swap_at_mount(
    action: str, when: str, dest: str, command: list[str], grants: Grants
) -> subprocess.CompletedProcess[str]:
    """Run the real launcher; right after PID 1 opened and checked `when`'s source, another process
    (simulated in PID 1 itself) moves `when` away and puts a link to `dest` ("link"), another folder
    ("folder") or nothing ("missing") there; "none" swaps nothing (the positive control)."""
    argv = reyn_sandbox.launcher_argv(command, grants)
    launch = argv[argv.index("--grants") :]
    return subprocess.run(
        [sys.executable, "-I", "-S", "-c", DRIVER, PACKAGE_PARENT, action, when, dest, *launch],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        env={"PATH": "/usr/bin:/bin"},
        cwd="/",
    )


@pytest.fixture
def git_ws(area: Path) -> tuple[Path, Grants]:
    """A write root holding a `.git` kept read-only."""
    ws = area / "write"
    (ws / ".git").mkdir()
    (ws / ".git").chmod(0o777)
    return ws, Grants(write_roots=(str(ws),), read_only=(str(ws / ".git"),))


def test_unswapped_read_only_path_is_mounted_read_only(
    root_sandbox: Sandbox, git_ws: tuple[Path, Grants]
) -> None:
    """Positive control of the swaps below: same driver, nothing swapped."""
    ws, grants = git_ws
    code = WRITE + "\ntry:\n    open(sys.argv[2], 'w')\nexcept OSError as e:\n    print(e.errno)"
    result = _swap_at_mount(
        "none",
        str(ws / ".git"),
        "",
        [sys.executable, "-c", code, str(ws / "ok"), str(ws / ".git" / "hook")],
        grants,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == str(errno.EROFS)
    assert (ws / "ok").read_text() == "written" and not (ws / ".git" / "hook").exists()


@pytest.mark.parametrize(
    ("action", "dest", "refusal"),
    [
        # The reviewer's race: `.git` exchanged for a link to the new root's /usr/share would have
        # put the writable folder's `.git` over the sandbox's /usr/share (or /usr/bin).
        ("link", "/tmp/usr/share", "goes through a symbolic link at {git}, put there after the check"),
        # The read-only mount would have gone over a decoy while the real `.git` stayed writable.
        ("folder", "", "is not where it was checked: another file is at {git} now"),
        # The launcher (root) would have made the missing mount point in the host folder.
        ("missing", "", "is missing where it is mounted, moved since the check"),
    ],
)
def test_a_mount_point_swapped_after_its_source_was_checked_is_refused(
    root_sandbox: Sandbox, git_ws: tuple[Path, Grants], action: str, dest: str, refusal: str
) -> None:
    ws, grants = git_ws
    git = ws / ".git"
    result = _swap_at_mount(action, str(git), dest, ["/bin/true"], grants)
    assert result.returncode == 125
    assert result.stderr.strip() == f"reyn-sandbox: read_only path {git} " + refusal.format(git=git)
    assert action != "missing" or not git.exists()  # nothing made in the host folder


def _hide_keys(**keys: tuple[str, ...]) -> SimpleNamespace:
    base = {"read_roots": (), "write_roots": (".",), "network": False, "hide": (), "read_only": ()}
    return SimpleNamespace(**{**base, **keys})


RENAME = (
    "import os, sys\n"
    "for old in sys.argv[1:]:\n"
    "    try:\n"
    "        os.rename(old, old + '2'); print('moved')\n"
    "    except OSError as e:\n"
    "        print(e.errno)\n"
)


def test_a_folder_above_a_hidden_path_cannot_be_renamed_away(sandbox: Sandbox, area: Path) -> None:
    ws = area / "write"
    (ws / "cfg").mkdir(mode=0o777)
    (ws / "cfg" / "secret").write_text("SECRET")
    (ws / "other").mkdir(mode=0o777)
    keys = _hide_keys(hide=("cfg/secret",))
    grants = reyn_sandbox.resolve_grants(str(ws), keys, {})

    result = sandbox.python_ok(RENAME, grants, str(ws / "cfg"), str(ws / "other"))

    assert result.stdout.split() == [str(errno.EBUSY), "moved"]  # positive control: a plain folder moves
    again = sandbox.python_ok(
        "import sys; print(repr(open(sys.argv[1]).read()))",
        reyn_sandbox.resolve_grants(str(ws), keys, {}),
        str(ws / "cfg" / "secret"),
    )
    assert again.stdout.strip() == "''"


def test_a_folder_above_a_read_only_path_cannot_be_renamed_away(sandbox: Sandbox, area: Path) -> None:
    ws = area / "write"
    (ws / "proj" / ".git" / "hooks").mkdir(parents=True)
    for folder in (ws / "proj", ws / "proj" / ".git", ws / "proj" / ".git" / "hooks"):
        folder.chmod(0o777)
    grants = reyn_sandbox.resolve_grants(str(ws), _hide_keys(read_only=("proj/.git",)), {})

    result = sandbox.python_ok(RENAME + "open(sys.argv[1] + '/file', 'w')", grants, str(ws / "proj"))

    assert result.stdout.split() == [str(errno.EBUSY)]
    assert (ws / "proj" / "file").exists()  # positive control: the folder itself stays writable


def test_a_hidden_path_moved_after_the_check_is_refused_not_skipped(sandbox: Sandbox, area: Path) -> None:
    ws = area / "write"
    (ws / "cfg").mkdir(mode=0o777)
    (ws / "cfg" / "secret").write_text("SECRET")
    grants = reyn_sandbox.resolve_grants(str(ws), _hide_keys(hide=("cfg/secret", ".env")), {})
    assert grants.hide == (str(ws / "cfg" / "secret"),)  # `.env` does not exist: left out, no error
    ok = sandbox.run(["/bin/true"], grants)
    assert ok.returncode == 0, ok.stderr  # positive control
    (ws / "cfg").rename(ws / "cfg2")  # what another process writing the workspace can do meanwhile

    result = sandbox.run(["/bin/cat", str(ws / "cfg2" / "secret")], grants)

    assert result.returncode == 125
    assert result.stderr.strip() == (
        f"reyn-sandbox: the folder {ws / 'cfg'} above hide path {ws / 'cfg' / 'secret'} does not exist "
        f"(there is no {ws / 'cfg'})"
    )


def test_an_entry_through_a_link_stored_in_a_write_root_is_refused(area: Path) -> None:
    """`dlink -> ws/data -> pub`: the command re-points `ws/data`; the next call would grant its target."""
    (area / "read" / "pub").mkdir()
    (area / "write" / "data").symlink_to(area / "read" / "pub")
    (area / "dlink").symlink_to(area / "write" / "data")
    for key in ("read_roots", "hide", "read_only"):
        keys = SimpleNamespace(
            **{**vars(_hide_keys()), "write_roots": (str(area / "write"),), key: (str(area / "dlink"),)}
        )
        with pytest.raises(
            GrantsError,
            match=f"{key} entry '.*/dlink' goes through the symbolic link .*/write/data, inside the write",
        ):
            reyn_sandbox.resolve_grants(str(area), keys, {})
    # positive control: a link stored outside every write root, to a real folder
    (area / "plink").symlink_to(area / "read" / "pub")
    keys = SimpleNamespace(
        **{**vars(_hide_keys()), "write_roots": (str(area / "write"),), "read_roots": ("plink",)}
    )
    assert reyn_sandbox.resolve_grants(str(area), keys, {}).read_roots == (str(area / "read" / "pub"),)


def test_double_slash_is_the_filesystem_root_and_refused(sandbox: Sandbox) -> None:
    assert Grants(read_roots=("//",)).read_roots == ("/",)
    assert Grants(read_roots=("///usr//share/",)).read_roots == ("/usr/share",)
    result = sandbox.run(["/bin/true"], Grants(read_roots=("//",)))
    assert result.returncode == 125
    assert (
        result.stderr.strip()
        == "reyn-sandbox: the filesystem root cannot be a root; grant the directories needed"
    )
    assert sandbox.run(["/bin/true"], Grants(read_roots=("//usr",))).returncode == 0  # positive control


def test_a_root_whose_name_is_not_utf8_is_mounted(root_sandbox: Sandbox, area: Path) -> None:
    """As root, read roots are idmapped: the path used to be encoded as UTF-8 (a traceback, exit 1)."""
    name = os.fsdecode(b"r\xff")
    (area / "read" / name).mkdir()
    (area / "read" / name / "f").write_text("inside")
    result = root_sandbox.run(
        ["/bin/cat", str(area / "read" / name / "f")], Grants(read_roots=(str(area / "read" / name),))
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == "inside"


def test_a_write_root_is_created_without_following_a_link(area: Path) -> None:
    (area / "write" / "link").symlink_to(area / "outside")
    with pytest.raises(RootChanged, match=r"goes through a symbolic link at .*/write/link"):
        make_dirs(str(area / "write" / "link" / "made"), "write root")
    assert not (area / "outside" / "made").exists()
    make_dirs(str(area / "write" / "a" / "b"), "write root")  # positive control
    assert (area / "write" / "a" / "b").is_dir()


def test_a_hidden_log_rotated_in_place_stays_hidden(sandbox: Sandbox, area: Path) -> None:
    """A hidden path is covered whatever file is there at the start: the remote failure log rotates
    (`remote.log` → `remote.log.1`, a new `remote.log`) between an isolated worker's load-time
    grants and its restart; one absent when pinned (`remote.log.1`) is covered once it exists."""
    ws = area / "write"
    log, rotated = ws / "remote.log", ws / "remote.log.1"
    log.write_text("OLD")
    argv = reyn_sandbox.launcher_argv(
        ["/bin/true"], Grants(write_roots=(str(ws),), hide=(str(log), str(rotated)))
    )
    grants = Grants.from_json(argv[argv.index("--grants") + 1])
    assert {entry[0] for entry in grants.identities} == {str(ws), str(log)}
    log.rename(rotated)
    log.write_text("NEW")

    result = sandbox.run(["/bin/cat", str(log), str(rotated), str(ws / "visible")], grants)

    assert result.returncode == 1  # only `visible` is missing: both logs read as empty
    assert result.stdout == "" and "visible" in result.stderr and "remote.log" not in result.stderr
    (ws / "visible").write_text("shown")  # positive control: the same grants read an ordinary file
    assert sandbox.run(["/bin/cat", str(ws / "visible")], grants).stdout == "shown"
