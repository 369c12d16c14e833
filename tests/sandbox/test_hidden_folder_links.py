"""A file inside a hidden folder is reachable by no other name.

Pre-staging: call 1 (the folder not hidden yet) makes ``sec/k`` and a hard link ``k2`` to it; the
operator then hides ``sec`` and writes a secret into ``sec/k`` in place. The cover hides the path
``sec``, not the inode: without a check, call 2 reads the secret through ``k2``. No kernel mechanism
hides an inode's other names (``reyn_sandbox._one_name``), so every file under a hidden folder is
checked for a second name, by the host when it makes the grants (``GrantsError``) and by the launcher
on the folder it covers (exit 125) — bounded in entries and depth, refusing past a bound. Each attack
beside its positive control, with the real launcher.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from types import SimpleNamespace

import pytest

import reyn_sandbox
from reyn_sandbox import GrantsError
from reyn_sandbox._one_name import MAX_HIDDEN_DEPTH, MAX_HIDDEN_ENTRIES

from .conftest import TIMEOUT, Sandbox

SECRET = "API_KEY=operator-secret"


def _keys(ws: Path, *hide: str) -> SimpleNamespace:
    return SimpleNamespace(
        read_roots=(), write_roots=(str(ws),), network=False, hide=hide, read_only=(), sandbox="required"
    )


@pytest.mark.parametrize("depth", ["sec", "sec/deeper/still"])
def test_a_file_in_a_hidden_folder_with_a_second_name_is_refused(
    sandbox: Sandbox, area: Path, depth: str
) -> None:
    ws = area / "write"
    keys = _keys(ws, "sec")
    first = reyn_sandbox.resolve_grants(str(ws), _keys(ws), {})  # `sec` not hidden yet
    planted = sandbox.run(
        ["/bin/sh", "-c", f"mkdir -p {depth} && touch {depth}/k && ln {depth}/k k2"], first, cwd=str(ws)
    )
    assert planted.returncode == 0, planted.stderr
    with (ws / depth / "k").open("a") as handle:  # the operator writes into it in place
        handle.write(SECRET + "\n")

    with pytest.raises(GrantsError, match=rf"hide path {ws}/sec holds {ws}/{depth}/k, which has 2 names"):
        reyn_sandbox.resolve_grants(str(ws), keys, {})

    # The launcher checks again under the folder it covers: grants made before the link was.
    (ws / "k2").unlink()
    argv = sandbox.argv(["/bin/cat", "k2"], reyn_sandbox.resolve_grants(str(ws), keys, {}))
    os.link(ws / depth / "k", ws / "k2")
    result = subprocess.run(argv, capture_output=True, text=True, timeout=TIMEOUT, cwd=str(ws),
                            env={"PATH": "/usr/bin:/bin"})  # fmt: skip
    assert result.returncode == 125, result.stderr
    assert f"holds /{str(ws / depth / 'k').lstrip('/')}, which has 2 names (hard links)" in result.stderr
    assert SECRET not in result.stdout and len(result.stderr.splitlines()) == 1

    # positive control: with one name, the folder is hidden and the command runs
    (ws / "k2").unlink()
    grants = reyn_sandbox.resolve_grants(str(ws), keys, {})
    result = sandbox.run(["/bin/sh", "-c", f"cat {depth}/k; ls -A sec; echo ran"], grants, cwd=str(ws))
    assert result.returncode == 0 and result.stdout.strip().endswith("ran"), result.stderr
    assert SECRET not in result.stdout


def test_a_second_name_made_inside_the_hidden_folder_itself_is_refused_too(
    root_sandbox: Sandbox, area: Path
) -> None:
    """Both names under the cover hide nothing from the command, but the rule is per file, not per
    place of the other name (that could be anywhere on the file system): refused all the same."""
    ws = area / "write"
    (ws / "sec").mkdir()
    (ws / "sec" / "k").write_text(SECRET)
    os.link(ws / "sec" / "k", ws / "sec" / "k-copy")
    with pytest.raises(GrantsError, match=r"which has 2 names"):
        reyn_sandbox.resolve_grants(str(ws), _keys(ws, "sec"), {})
    (ws / "sec" / "k-copy").unlink()
    grants = reyn_sandbox.resolve_grants(str(ws), _keys(ws, "sec"), {})
    assert root_sandbox.run(["/bin/true"], grants, cwd=str(ws)).returncode == 0


def test_a_hidden_folder_over_the_entry_bound_is_refused(root_sandbox: Sandbox, area: Path) -> None:
    ws = area / "write"
    big = ws / "sec"
    big.mkdir()
    for index in range(MAX_HIDDEN_ENTRIES):
        (big / f"f{index}").touch()
    # positive control: exactly at the bound, it is checked and hidden
    grants = reyn_sandbox.resolve_grants(str(ws), _keys(ws, "sec"), {})
    result = root_sandbox.run(["/bin/sh", "-c", "ls -A sec | wc -l"], grants, cwd=str(ws))
    assert result.returncode == 0 and result.stdout.strip() == "0", result.stderr

    (big / "one-more").touch()
    with pytest.raises(GrantsError, match=rf"more than {MAX_HIDDEN_ENTRIES:,} entries"):
        reyn_sandbox.resolve_grants(str(ws), _keys(ws, "sec"), {})
    # the launcher refuses it too, for grants made before the folder grew
    (big / "one-more").unlink()
    argv = root_sandbox.argv(
        ["/bin/echo", "COMMAND-RAN"], reyn_sandbox.resolve_grants(str(ws), _keys(ws, "sec"), {})
    )
    (big / "one-more").touch()
    result = subprocess.run(argv, capture_output=True, text=True, timeout=TIMEOUT, cwd=str(ws),
                            env={"PATH": "/usr/bin:/bin"})  # fmt: skip
    assert result.returncode == 125 and "COMMAND-RAN" not in result.stdout
    assert f"more than {MAX_HIDDEN_ENTRIES:,} entries" in result.stderr


def test_a_hidden_folder_deeper_than_the_bound_is_refused(root_sandbox: Sandbox, area: Path) -> None:
    ws = area / "write"
    deep = ws / "sec"
    for _ in range(MAX_HIDDEN_DEPTH):
        deep = deep / "d"
    deep.mkdir(parents=True)
    # positive control: MAX_HIDDEN_DEPTH levels below the hidden folder are checked and hidden
    grants = reyn_sandbox.resolve_grants(str(ws), _keys(ws, "sec"), {})
    assert root_sandbox.run(["/bin/true"], grants, cwd=str(ws)).returncode == 0
    (deep / "d").mkdir()
    with pytest.raises(GrantsError, match=rf"more than {MAX_HIDDEN_DEPTH} levels deep"):
        reyn_sandbox.resolve_grants(str(ws), _keys(ws, "sec"), {})


def test_a_hidden_folder_the_launcher_cannot_read_through_is_refused(sandbox: Sandbox, area: Path) -> None:
    """Started unprivileged, the launcher reads as its user: a subfolder it cannot list might hold a
    file with a second name, so it is refused (as root it reads everything: the control)."""
    ws = area / "write"
    closed = ws / "sec" / "closed"
    closed.mkdir(parents=True)
    (closed / "k").write_text(SECRET)
    closed.chmod(0o700)  # root's: uid 65534 cannot list it
    grants = reyn_sandbox.resolve_grants(str(ws), _keys(ws, "sec"), {})  # the host (root) reads it
    result = sandbox.run(["/bin/echo", "COMMAND-RAN"], grants, cwd=str(ws))
    if sandbox.runner == "root":
        assert result.returncode == 0 and "COMMAND-RAN" in result.stdout, result.stderr
    else:
        assert result.returncode == 125 and "COMMAND-RAN" not in result.stdout
        assert f"{closed} cannot be read (Permission denied)" in result.stderr


@pytest.mark.parametrize("depth", ["sec", "sec/deeper/still"])
def test_a_symbolic_link_in_a_hidden_folder_is_refused(sandbox: Sandbox, area: Path, depth: str) -> None:
    """Call 1 (``sec`` not there yet, so not hidden) plants ``sec/k -> ../loot`` and
    ``sec/keys -> ../out``; the operator then writes a secret into ``sec/k`` and copies a key into
    ``sec/keys/``, which land in ``loot`` and ``out/``; call 2 hides ``sec`` and would read them there.
    A symbolic link under a hidden folder is refused, by the host and by the launcher."""
    ws = area / "write"
    keys = _keys(ws, "sec")
    first = reyn_sandbox.resolve_grants(str(ws), keys, {})
    assert first.hide == ()  # `sec` does not exist: nothing to hide yet
    up = "../" * (depth.count("/") + 1)
    plant = f"mkdir -p {depth} out && ln -s {up}loot {depth}/k && ln -s {up}out {depth}/keys"
    planted = sandbox.run(["/bin/sh", "-c", plant], first, cwd=str(ws))
    assert planted.returncode == 0, planted.stderr
    with (ws / depth / "k").open("a") as handle:  # the operator writes through the names it sees
        handle.write(SECRET + "\n")
    (ws / depth / "keys" / "id_ed25519").write_text("PRIVATE-KEY\n")
    assert (ws / "loot").read_text() == SECRET + "\n"  # where the writes went

    with pytest.raises(
        GrantsError, match=rf"hide path {ws}/sec holds {ws}/{depth}/(k|keys), a symbolic link"
    ):
        reyn_sandbox.resolve_grants(str(ws), keys, {})

    # The launcher checks again under the folder it covers: grants made before the links were.
    for name in ("k", "keys"):
        (ws / depth / name).unlink()
    argv = sandbox.argv(
        ["/bin/cat", "loot", "out/id_ed25519"], reyn_sandbox.resolve_grants(str(ws), keys, {})
    )
    os.symlink(f"{up}loot", ws / depth / "k")
    result = subprocess.run(argv, capture_output=True, text=True, timeout=TIMEOUT, cwd=str(ws),
                            env={"PATH": "/usr/bin:/bin"})  # fmt: skip
    assert result.returncode == 125, result.stderr
    assert f"holds {ws}/{depth}/k, a symbolic link (to {up}loot)" in result.stderr
    assert SECRET not in result.stdout and len(result.stderr.splitlines()) == 1

    # positive control: the same folder holding the files themselves is hidden and the command runs
    (ws / depth / "k").unlink()
    (ws / "loot").unlink()
    (ws / "out" / "id_ed25519").unlink()
    (ws / depth / "k").write_text(SECRET + "\n")
    (ws / depth / "keys").mkdir()
    (ws / depth / "keys" / "id_ed25519").write_text("PRIVATE-KEY\n")
    grants = reyn_sandbox.resolve_grants(str(ws), keys, {})
    result = sandbox.run(
        ["/bin/sh", "-c", f"cat {depth}/k loot out/*; ls -A sec; echo ran"], grants, cwd=str(ws)
    )
    assert result.returncode == 0 and result.stdout.strip() == "ran", (result.stdout, result.stderr)


def test_a_hidden_path_that_is_itself_a_symbolic_link_is_refused(root_sandbox: Sandbox, area: Path) -> None:
    """A hidden file or folder that is a link is refused by the walk that reaches it (no link on the
    way); a hidden folder holding a plain file is the control."""
    ws = area / "write"
    (ws / "loot").write_text(SECRET)
    os.symlink("loot", ws / ".env")
    with pytest.raises(GrantsError, match="symbolic link"):
        reyn_sandbox.resolve_grants(str(ws), _keys(ws, ".env"), {})
    (ws / ".env").unlink()
    (ws / ".env").write_text(SECRET)
    grants = reyn_sandbox.resolve_grants(str(ws), _keys(ws, ".env"), {})
    result = root_sandbox.run(["/bin/cat", ".env"], grants, cwd=str(ws))
    assert result.returncode == 0 and SECRET not in result.stdout, result.stderr


def test_a_symbolic_link_pointing_inside_the_hidden_folder_is_refused_in_true_words(
    root_sandbox: Sandbox, area: Path
) -> None:
    """A link under a hidden folder pointing inside it is refused too (its target can change after
    the check); the refusal does not claim it points outside the cover, and tells the operator to look
    where it points for what was already written through it before removing it."""
    ws = area / "write"
    (ws / "sec").mkdir()
    (ws / "sec" / "real").write_text(SECRET)
    os.symlink("real", ws / "sec" / "alias")
    with pytest.raises(GrantsError) as refused:
        reyn_sandbox.resolve_grants(str(ws), _keys(ws, "sec"), {})
    words = str(refused.value)
    assert f"holds {ws}/sec/alias, a symbolic link (to real)" in words
    assert "lands where it points, outside the cover" not in words
    assert "what it points to can change after any check" in words
    assert "Look where it points for anything already written through it" in words
    # positive control: without the link the folder is hidden and the command runs without it
    (ws / "sec" / "alias").unlink()
    grants = reyn_sandbox.resolve_grants(str(ws), _keys(ws, "sec"), {})
    result = root_sandbox.run(["/bin/sh", "-c", "cat sec/real; echo ran"], grants, cwd=str(ws))
    assert result.returncode == 0 and result.stdout.strip() == "ran", (result.stdout, result.stderr)
