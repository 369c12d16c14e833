"""What the host checked is what the launcher mounts: a root swapped after the check is refused.

The host resolves and checks each root (``resolve_grants``: never over the host's own files); the
launcher mounts it later, from another process. A confined process of another surface that can write
a folder above the root can swap the root (or a folder on its way) for a symbolic link to the host's
workspace, or for another folder, in between. The launcher reaches every root again without
following a link, checks the identity the host recorded, and refuses to start otherwise.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path
from types import SimpleNamespace

import pytest

import reyn_sandbox
from reyn_sandbox import Grants, GrantsError

from .conftest import TIMEOUT, Sandbox

WRITE = "import sys; open(sys.argv[1], 'w').write('written')"
PROFILE = "[plugins.shell]\nenabled = true\n"


def _keys(write_roots: tuple[str, ...] = (), read_roots: tuple[str, ...] = ()) -> SimpleNamespace:
    return SimpleNamespace(
        read_roots=read_roots, write_roots=write_roots, network=False, hide=(), read_only=()
    )


@pytest.fixture
def ws(area: Path) -> Path:
    """A workspace holding the host's profile, writable by anyone (so only the sandbox keeps the
    confined user out of it), with ``shared``: another surface's write root, holding ours."""
    ws = area / "ws"
    (ws / "shared" / "out").mkdir(parents=True)
    for folder in (ws, ws / "shared", ws / "shared" / "out"):
        folder.chmod(0o777)
    (ws / "reyn.toml").write_text(PROFILE)
    (ws / "reyn.toml").chmod(0o666)
    return ws


def _resolved(ws: Path, root: str) -> Grants:
    return reyn_sandbox.resolve_grants(str(ws), _keys((root,)), {str(ws / "reyn.toml"): "the host's profile"})


def test_the_same_grants_unswapped_write_into_the_root(sandbox: Sandbox, ws: Path) -> None:
    """Positive control of the swaps below: the grants as resolved run and write into the root."""
    grants = _resolved(ws, "shared/out")
    assert [entry[0] for entry in grants.identities] == [str(ws / "shared" / "out")]

    result = sandbox.python_code(WRITE, grants, str(ws / "shared" / "out" / "reyn.toml"))

    assert result.returncode == 0, result.stderr
    assert (ws / "shared" / "out" / "reyn.toml").read_text() == "written"


def test_a_root_swapped_for_a_link_to_the_workspace_is_refused(sandbox: Sandbox, ws: Path) -> None:
    out = ws / "shared" / "out"
    grants = _resolved(ws, "shared/out")
    out.rename(ws / "shared" / "out-moved")  # what a process writing `shared` can do after the check
    out.symlink_to(ws)

    result = sandbox.python_code(WRITE, grants, str(out / "reyn.toml"))

    assert result.returncode == 125
    assert result.stderr.strip() == (
        f"reyn-sandbox: write root {out} goes through a symbolic link at {out}: a root is granted by its "
        "real path (the link may have been put there after the host checked it)"
    )
    assert (ws / "reyn.toml").read_text() == PROFILE


def test_a_folder_on_the_way_swapped_for_a_link_is_refused(sandbox: Sandbox, ws: Path) -> None:
    (ws / "shared" / "mid" / "out").mkdir(parents=True)
    (ws / "shared" / "mid").chmod(0o777)
    (ws / "shared" / "mid" / "out").chmod(0o777)
    (ws / "out").mkdir()  # the link's target has an `out` too, writable: only the identity refuses
    (ws / "out").chmod(0o777)
    grants = _resolved(ws, "shared/mid/out")
    (ws / "shared" / "mid").rename(ws / "shared" / "mid-moved")
    (ws / "shared" / "mid").symlink_to(ws)

    result = sandbox.python_code(WRITE, grants, str(ws / "shared" / "mid" / "out" / "planted"))

    assert result.returncode == 125
    assert f"goes through a symbolic link at {ws / 'shared' / 'mid'}:" in result.stderr
    assert not (ws / "out" / "planted").exists()


def test_a_root_swapped_for_another_real_folder_is_refused(sandbox: Sandbox, ws: Path) -> None:
    out = ws / "shared" / "out"
    grants = _resolved(ws, "shared/out")
    out.rename(ws / "shared" / "out-moved")
    out.mkdir()
    out.chmod(0o777)

    result = sandbox.python_code(WRITE, grants, str(out / "planted"))

    assert result.returncode == 125
    assert f"reyn-sandbox: write root {out} is not what the host checked: another folder is at its path" in (
        result.stderr
    )
    assert "Nothing was run" in result.stderr
    assert not (out / "planted").exists()


def test_a_root_missing_from_the_identities_is_refused_by_the_launcher(sandbox: Sandbox, area: Path) -> None:
    """A command line written by hand (or by an older reyn-sandbox): no root is mounted unchecked."""
    marker = area / "write" / "ran"
    argv = sandbox.argv(["sh", "-c", f"echo ran > {marker}"], Grants(write_roots=(str(area / "write"),)))
    at = argv.index("--grants") + 1
    data = json.loads(argv[at])
    assert [entry[0] for entry in data["identities"]] == [str(area / "write")]
    data["identities"] = []
    argv[at] = json.dumps(data)

    result = subprocess.run(argv, capture_output=True, text=True, timeout=TIMEOUT, cwd="/")

    assert result.returncode == 125
    assert f"reyn-sandbox: write root {area / 'write'} has no identity" in result.stderr
    assert not marker.exists()


def test_a_root_path_of_many_components_is_reached_and_written(sandbox: Sandbox, area: Path) -> None:
    deep = area / "write" / os.path.join(*["d"] * 600)  # ~1,200 characters, 600 folders to walk
    deep.mkdir(parents=True)
    for folder in (deep, *list(deep.parents)[:599]):
        folder.chmod(0o777)
    grants = reyn_sandbox.resolve_grants(str(area), _keys((str(deep),)), {})

    result = sandbox.python_code(WRITE, grants, str(deep / "file"))

    assert result.returncode == 0, result.stderr
    assert (deep / "file").read_text() == "written"


def test_a_symlink_loop_on_the_way_is_refused_when_pinned_and_when_launched(
    sandbox: Sandbox, area: Path
) -> None:
    loop = area / "write" / "loop"
    loop.symlink_to(area / "write" / "loop")
    words = f"read root {loop}/x goes through a symbolic link at {loop}:"
    with pytest.raises(GrantsError, match=re.escape(words)):
        reyn_sandbox.launcher_argv(["true"], Grants(read_roots=(str(loop / "x"),)))
    # pinned while it was a folder, then made a loop: the launcher refuses it
    folder = area / "write" / "folder"
    folder.mkdir()
    grants = reyn_sandbox.resolve_grants(str(area), _keys(read_roots=(str(folder),)), {})
    folder.rmdir()
    folder.symlink_to(folder)

    result = sandbox.run(["true"], grants)

    assert result.returncode == 125
    assert f"read root {folder} goes through a symbolic link at {folder}" in result.stderr


def test_identities_are_checked_when_grants_are_made() -> None:
    for bad, words in (
        ((("/a", 1, 2),), "is not (path, device, inode, is_dir)"),
        ((("/a", 1, -2, True),), "is not (path, device, inode, is_dir)"),
        ((("/a", 1, 2, 1),), "is not (path, device, inode, is_dir)"),
        ((("/b", 1, 2, True),), "'/b' is not one of the roots"),
        ((("/a", 1, 2, True), ("/a/", 1, 3, True)), "/a is given two identities"),
        ("/a", "must be a tuple"),
    ):
        with pytest.raises(GrantsError, match=re.escape(words)):
            Grants(read_roots=("/a",), identities=bad)  # type: ignore[arg-type]
    # positive control: one identity per root, the path normalized on both sides, survives JSON
    grants = Grants(read_roots=("/a/",), identities=(("/a//", 1, 2, True),))
    assert grants.identities == (("/a", 1, 2, True),)
    assert Grants.from_json(grants.to_json()) == grants


def test_a_root_inside_a_write_root_of_the_same_grants_is_refused(area: Path) -> None:
    """What a command writes, it could replace with a link: a root inside a write root would be
    granted, at the next resolution, wherever that link points."""
    (area / "write" / "out" / "ref").mkdir(parents=True)
    for read, write in ((("out/ref",), ("out",)), ((), ("out", "out/ref"))):
        kind = "read_roots" if read else "write_roots"
        with pytest.raises(GrantsError, match=f"{kind} entry 'out/ref' lies inside the write root .*/out:"):
            reyn_sandbox.resolve_grants(str(area / "write"), _keys(write, read), {})
    # positive control: folders side by side, and a read root equal to the write root
    (area / "write" / "ref").mkdir()
    grants = reyn_sandbox.resolve_grants(str(area / "write"), _keys(("out",), ("ref", "out")), {})
    assert grants.read_roots == (str(area / "write" / "ref"), str(area / "write" / "out"))


def test_a_read_only_path_a_command_linked_out_of_its_write_root_is_refused(
    sandbox: Sandbox, ws: Path
) -> None:
    """A command plants `.git` as a link to a folder it cannot read; the next call would have mounted
    that folder read-only (a read grant): it is refused instead, and the command never runs."""
    secret = ws.parent / "outside"
    (secret / "id_key").write_text("PRIVATE")
    keys = SimpleNamespace(
        read_roots=(), write_roots=("shared",), network=False, hide=(), read_only=("shared/.git",)
    )
    (ws / "shared" / ".git").mkdir()
    # positive control: `.git` as a folder is kept read-only inside the write root
    grants = reyn_sandbox.resolve_grants(str(ws), keys, {})
    assert grants.read_only == (str(ws / "shared" / ".git"),)
    denied = sandbox.python_code(WRITE, grants, str(ws / "shared" / ".git" / "hook"))
    assert denied.returncode != 0 and not (ws / "shared" / ".git" / "hook").exists()
    (ws / "shared" / ".git").rmdir()  # gone: grants made now leave it out (it did not exist)
    planted = sandbox.run(
        ["ln", "-s", str(secret), str(ws / "shared" / ".git")], reyn_sandbox.resolve_grants(str(ws), keys, {})
    )
    assert planted.returncode == 0, planted.stderr

    link = ws / "shared" / ".git"
    with pytest.raises(
        GrantsError, match=f"read_only entry 'shared/.git' goes through the symbolic link {link}, inside"
    ):
        reyn_sandbox.resolve_grants(str(ws), keys, {})
