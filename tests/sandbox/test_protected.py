"""The one rule on write roots and the host's own files (``reyn_sandbox.protected_problem``), and
``resolve_grants`` requiring the list: a root that is, holds (at any depth) or lies inside a host
file is refused, links resolved on both sides, before any root is created; a root beside them is
granted (the positive control)."""

from __future__ import annotations

import os
from pathlib import Path
from types import SimpleNamespace

import pytest

import reyn_sandbox


def _keys(*write_roots: str) -> SimpleNamespace:
    return SimpleNamespace(
        read_roots=(".",), write_roots=write_roots, network=False, hide=(), read_only=(), sandbox="required"
    )


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    (tmp_path / "ws" / "state").mkdir(parents=True)
    (tmp_path / "ws" / "reyn.toml").write_text("")
    (tmp_path / "cache").mkdir()
    return tmp_path / "ws"


def _host(ws: Path) -> dict[str, str]:
    return {
        str(ws / "reyn.toml"): "the host's profile",
        str(ws / "state" / "approvals.sqlite-wal"): "the host's approval store (approvals.sqlite-wal)",
        str(ws.parent / "cache"): "Reyn's user cache folder",
    }


@pytest.mark.parametrize(
    ("root", "words"),
    [
        (".", "is the folder of the host's profile"),
        ("state", "is the folder of the host's approval store (approvals.sqlite-wal)"),
        ("..", "is the folder of Reyn's user cache folder"),
        ("/", "contains the host's profile"),
        ("../cache", "is Reyn's user cache folder"),
        ("../cache/bytecode", "is inside Reyn's user cache folder"),
        ("link", "is the folder of the host's approval store"),  # a link to state/, resolved
    ],
)
def test_a_root_over_a_host_file_is_refused_and_nothing_is_created(ws: Path, root: str, words: str) -> None:
    (ws / "link").symlink_to(ws / "state", target_is_directory=True)
    with pytest.raises(reyn_sandbox.GrantsError, match="could change what the host runs or trusts") as caught:
        reyn_sandbox.resolve_grants(str(ws), _keys(root), _host(ws))
    assert words in str(caught.value)
    assert not (ws.parent / "cache" / "bytecode").exists()  # refused before any root is made


def test_positive_control_a_root_beside_the_host_files_is_granted_and_created(ws: Path) -> None:
    grants = reyn_sandbox.resolve_grants(str(ws), _keys("out"), _host(ws))
    assert grants.write_roots == (str((ws / "out").resolve()),) and (ws / "out").is_dir()
    assert reyn_sandbox.protected_problem([str(ws / "out")], _host(ws)) is None


def test_the_list_is_required(ws: Path) -> None:
    with pytest.raises(TypeError):
        reyn_sandbox.resolve_grants(str(ws), _keys("out"))  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="must map paths"):
        reyn_sandbox.resolve_grants(str(ws), _keys("out"), None)  # type: ignore[arg-type]


def test_every_root_is_named_once_with_all_it_covers(ws: Path) -> None:
    clashes = reyn_sandbox.write_root_clashes([str(ws), str(ws / "out")], _host(ws))
    assert len(clashes) == 1 and clashes[0].startswith(f"write root {ws} ")
    assert "the host's profile" in clashes[0] and "approvals.sqlite-wal" in clashes[0]


# ---------------------------------------------------------------- the host's secret files (hidden)


def _read(*read_roots: str) -> SimpleNamespace:
    return SimpleNamespace(
        read_roots=read_roots, write_roots=(), network=False, hide=(), read_only=(), sandbox="required"
    )


def _secrets(ws: Path) -> dict[str, str]:
    from reyn_core import SecretFile

    (ws / "keys").mkdir()
    (ws / "keys" / "argument-hash.key").write_bytes(b"k" * 32)
    (ws / "logs").mkdir()
    return {
        **_host(ws),
        str(ws / "keys" / "argument-hash.key"): SecretFile("the host's argument key"),
        str(ws / "logs"): SecretFile("Reyn's user log folder"),
        str(ws / "logs" / "remote.log"): SecretFile("the host's remote failure log"),
    }


def test_the_secrets_inside_a_read_root_are_hidden_and_a_plain_host_file_is_not(ws: Path) -> None:
    host = _secrets(ws)
    (ws / "link").symlink_to(ws / "keys", target_is_directory=True)
    grants = reyn_sandbox.resolve_grants(str(ws), _read("."), host)
    # the log inside the hidden log folder needs no cover of its own; the profile is only unwritable
    assert set(grants.secrets) == {str(ws / "keys" / "argument-hash.key"), str(ws / "logs")}
    assert grants.hide == ()  # the operator's hides stay apart: a missing one is skipped, a secret never
    # through a link the root resolves, and so does the secret: hidden all the same
    (ws / "outer" / "inner").mkdir(parents=True)
    (ws / "link2").symlink_to(ws / "outer", target_is_directory=True)
    host[str(ws / "outer" / "inner" / "k")] = host[str(ws / "keys" / "argument-hash.key")]
    grants = reyn_sandbox.resolve_grants(str(ws), _read("link2"), host)
    assert grants.secrets == (str(ws / "outer" / "inner" / "k"),)
    # positive control: a root that holds no secret hides nothing; the operator's own hides stay
    keys = SimpleNamespace(**{**vars(_read("state")), "hide": ("state/x",)})
    (ws / "state" / "x").write_text("")
    assert reyn_sandbox.resolve_grants(str(ws), keys, host).hide == (str(ws / "state" / "x"),)


@pytest.mark.parametrize(
    ("root", "words"),
    [
        ("keys/argument-hash.key", "is the host's argument key"),
        ("logs", "is Reyn's user log folder"),
        ("logs/sub", "lies inside Reyn's user log folder"),
        # the root holds a secret file directly: only its folder's cover holds a file the host puts
        # at that path mid-call, and that folder is the grant itself
        ("keys", "is the folder holding the host's argument key"),
        ("link", "is the folder holding the host's argument key"),
    ],
)
def test_a_read_root_that_is_or_lies_inside_a_secret_is_refused(ws: Path, root: str, words: str) -> None:
    host = _secrets(ws)
    (ws / "logs" / "sub").mkdir()
    (ws / "link").symlink_to(ws / "keys", target_is_directory=True)
    with pytest.raises(reyn_sandbox.GrantsError, match="could read the host's secrets") as caught:
        reyn_sandbox.resolve_grants(str(ws), _read(".", root), host)
    assert words in str(caught.value) and "no confined process may read" in str(caught.value)


def test_the_mark_is_read_not_the_words() -> None:
    from reyn_core import SecretFile

    plain = {"/h/key": "the host's argument key"}  # the same words, unmarked: only unwritable
    assert reyn_sandbox.secret_hides(["/h"], plain) == ((), [])
    hide, problems = reyn_sandbox.secret_hides(["/h"], {"/h/k/key": SecretFile("anything")})
    assert hide == ("/h/k/key",) and problems == []
    # a root that is the folder holding a secret file: its cover would take the grant away
    hide, problems = reyn_sandbox.secret_hides(["/h"], {"/h/key": SecretFile("anything")})
    assert len(problems) == 1 and "root /h is the folder holding anything (/h/key)" in problems[0]


def test_a_root_inside_a_folder_holding_a_secret_it_never_sees_is_granted() -> None:
    """A remote log at ``~/x.log`` and a workspace ``~/proj``: the root ``~/proj/src`` does not hold
    the log, so no cover is made and nothing is refused (a reviewer found it refused)."""
    from reyn_core import SecretFile

    log = {"/h/x.log": SecretFile("the host's remote failure log")}
    assert reyn_sandbox.secret_hides(["/h/proj/src", "/h/proj/out"], log) == ((), [])
    # control: when another root makes the log seen, its folder is covered and a root inside it goes
    hide, problems = reyn_sandbox.secret_hides(["/", "/h/proj/src"], log)
    assert hide == ("/h/x.log",) and len(problems) == 1
    assert "root /h/proj/src lies inside the folder holding the host's remote failure log" in problems[0]


def test_a_secret_in_a_folder_every_command_sees_is_hidden_without_any_grant() -> None:
    """The launcher mounts the system folders and the Python installation for every command: a
    secret kept there (an argument key in ``/etc``) is hidden though no root names it."""
    from reyn_core import SecretFile

    secret = os.path.join(os.path.realpath("/etc"), "reyn-test-secret", "argument-hash.key")
    assert reyn_sandbox.secret_hides([], {secret: SecretFile("the host's argument key")}) == ((secret,), [])
    # positive control: a secret outside every mounted folder and root needs no cover
    assert reyn_sandbox.secret_hides([], {"/srv/reyn/argument-hash.key": SecretFile("key")}) == ((), [])
