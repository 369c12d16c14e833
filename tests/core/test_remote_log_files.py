"""The remote failure log's files stay the user's alone through every rotation (issue 24, log review):
the handler opens each file itself relative to its checked folder — never through a link, created
and set 0600, checked to be a regular file of the user's with one name — and a rotation renames and
reopens the same way. A folder others may write (or another user's) is refused with a clear error;
a relative ``$REYN_REMOTE_LOG`` is one absolute file for marking and writing. Real files, real
rotation by size; a refusal never reaches the caller (the record is dropped, the operator told on
stderr). Each attack beside its positive control."""

from __future__ import annotations

import logging
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from reyn_core.private_files import LogFileRefused
from reyn_core.private_log_file import PrivateRotatingFileHandler
from reyn_core.remote_log import BACKUP_COUNT, log_remote_failure, make_log_files

NAMES = ["remote.log", *(f"remote.log.{n}" for n in range(1, BACKUP_COUNT + 1))]


@pytest.fixture(autouse=True)
def loose_umask() -> Iterator[None]:
    """The umask most hosts have: the stock handler made its rotated file 0644 under it."""
    old = os.umask(0o022)
    yield
    os.umask(old)


def private_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "logs"
    folder.mkdir(mode=0o700)
    return folder


def write(handler: logging.Handler, count: int, text: str = "x" * 60) -> None:
    logger = logging.getLogger(f"test.private_log.{id(handler)}")
    logger.propagate = False
    logger.addHandler(handler)
    try:
        for n in range(count):
            logger.warning("%d %s", n, text)
    finally:
        logger.removeHandler(handler)


def modes(folder: Path) -> dict[str, int]:
    return {p.name: stat.S_IMODE(p.lstat().st_mode) for p in folder.iterdir()}


def test_the_files_stay_0600_through_rotations_by_size(tmp_path: Path) -> None:
    folder = private_folder(tmp_path)
    handler = PrivateRotatingFileHandler(folder / "remote.log", max_bytes=300, backup_count=BACKUP_COUNT)
    try:
        write(handler, 40)  # about 70 bytes a record: a rotation every four records
        handler.doRollover()  # the reviewer's sequence: a rollover, then a record
        write(handler, 1, "after")
    finally:
        handler.close()
    assert modes(folder) == dict.fromkeys(NAMES, 0o600)
    assert "after" in (folder / "remote.log").read_text()
    assert "39 " in (folder / "remote.log.1").read_text()  # the records rotated, the newest kept


def test_the_default_log_is_0600_after_a_rollover(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("REYN_REMOTE_LOG", raising=False)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    path = make_log_files()
    assert path == tmp_path / "state" / "reyn" / "remote.log"
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    log_remote_failure("test", "first", "raw one")
    handler = next(
        h for h in logging.getLogger("reyn.remote").handlers if isinstance(h, PrivateRotatingFileHandler)
    )
    handler.doRollover()
    log_remote_failure("test", "second", "raw two")
    assert modes(path.parent) == dict.fromkeys(NAMES, 0o600)
    assert "raw one" in Path(f"{path}.1").read_text() and "raw two" in path.read_text()


@pytest.mark.parametrize(
    ("name", "said"),
    [("remote.log", "is a symbolic link: .* remove it")]
    + [(n, "is not a regular file: remove it") for n in NAMES[1:-1]],  # the oldest is only replaced
)
def test_a_link_planted_at_a_log_name_is_refused_at_the_load(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, name: str, said: str
) -> None:
    folder = private_folder(tmp_path)
    target = tmp_path / "elsewhere.txt"
    target.write_text("theirs\n")
    (folder / name).symlink_to(target)
    monkeypatch.setenv("REYN_REMOTE_LOG", str(folder / "remote.log"))
    with pytest.raises(LogFileRefused, match=said):
        make_log_files()
    assert target.read_text() == "theirs\n" and stat.S_IMODE(target.stat().st_mode) == 0o644
    (folder / name).unlink()  # control: the same folder without the link
    assert make_log_files() == folder / "remote.log"
    assert modes(folder) == dict.fromkeys(NAMES, 0o600)


@pytest.mark.parametrize("name", ["remote.log", "remote.log.1"])
def test_a_link_planted_while_the_handler_runs_is_refused_at_the_rotation(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    folder = private_folder(tmp_path)
    target = tmp_path / "elsewhere.txt"
    target.write_text("theirs\n")
    handler = PrivateRotatingFileHandler(folder / "remote.log", max_bytes=300, backup_count=BACKUP_COUNT)
    try:
        write(handler, 2)
        (folder / name).unlink(missing_ok=True)  # planted while the handler runs
        (folder / name).symlink_to(target)
        write(handler, 10, "through the link?")  # does not raise: the records are dropped
        assert f"{name} is not a regular file: remove it" in capsys.readouterr().err
        assert target.read_text() == "theirs\n" and (folder / name).is_symlink()
        (folder / name).unlink()  # control: once it is gone the log goes on
        write(handler, 1, "back")
    finally:
        handler.close()
    assert "back" in (folder / "remote.log").read_text()
    assert target.read_text() == "theirs\n"
    assert stat.S_IMODE((folder / "remote.log").stat().st_mode) == 0o600


def test_a_fifo_at_the_log_is_refused_without_blocking(tmp_path: Path) -> None:
    folder = private_folder(tmp_path)
    os.mkfifo(folder / "remote.log", 0o600)
    with pytest.raises(LogFileRefused, match=r"remote\.log is not a regular file: remove it"):
        PrivateRotatingFileHandler(folder / "remote.log", max_bytes=300, backup_count=BACKUP_COUNT)
    (folder / "remote.log").unlink()  # control
    PrivateRotatingFileHandler(folder / "remote.log", max_bytes=300, backup_count=BACKUP_COUNT).close()


def test_a_file_with_a_second_name_is_refused(tmp_path: Path) -> None:
    folder = private_folder(tmp_path)
    (folder / "remote.log").write_text("")
    os.link(folder / "remote.log", tmp_path / "other-name")
    with pytest.raises(LogFileRefused, match="has 2 names"):
        PrivateRotatingFileHandler(folder / "remote.log", max_bytes=300, backup_count=BACKUP_COUNT)
    (tmp_path / "other-name").unlink()  # control
    PrivateRotatingFileHandler(folder / "remote.log", max_bytes=300, backup_count=BACKUP_COUNT).close()


@pytest.mark.parametrize("mode", [0o777, 0o1777, 0o770, 0o722])
def test_a_folder_others_may_write_is_refused(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str], mode: int
) -> None:
    folder = tmp_path / "shared"
    folder.mkdir()
    folder.chmod(mode)
    monkeypatch.setenv("REYN_REMOTE_LOG", str(folder / "remote.log"))
    with pytest.raises(LogFileRefused, match=r"can be written by others .* \(chmod go-w\)"):
        make_log_files()
    assert list(folder.iterdir()) == []  # nothing made in it
    message = log_remote_failure("test", "a failure", "raw words")  # never raises
    assert "ref " in message
    err = capsys.readouterr().err
    assert "can be written by others" in err
    assert list(folder.iterdir()) == []
    folder.chmod(0o755)  # control: the same folder, writable by its owner only
    assert make_log_files() == folder / "remote.log"
    handler = PrivateRotatingFileHandler(folder / "remote.log", max_bytes=300, backup_count=BACKUP_COUNT)
    try:
        write(handler, 1, "raw words")
    finally:
        handler.close()
    assert "raw words" in (folder / "remote.log").read_text()


def test_a_folder_of_another_user_is_refused(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("making a folder another user owns needs root")
    folder = tmp_path / "theirs"
    folder.mkdir(mode=0o755)
    os.chown(folder, 65534, -1)
    monkeypatch.setenv("REYN_REMOTE_LOG", str(folder / "remote.log"))
    with pytest.raises(LogFileRefused, match="is owned by user id 65534, not by this user"):
        make_log_files()
    os.chown(folder, os.geteuid(), -1)  # control
    assert make_log_files() == folder / "remote.log"


def test_a_relative_log_is_one_absolute_file(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    first, later = tmp_path / "first", tmp_path / "later"
    first.mkdir()
    later.mkdir()
    monkeypatch.chdir(first)
    monkeypatch.setenv("REYN_REMOTE_LOG", f"rel-{tmp_path.name}/remote.log")
    marked = make_log_files()
    assert marked == first / f"rel-{tmp_path.name}" / "remote.log"
    monkeypatch.chdir(later)  # the host changes folder before the first failure
    log_remote_failure("test", "a failure", "relative raw")
    assert "relative raw" in marked.read_text()
    assert list(later.iterdir()) == []


def test_a_remote_partys_text_is_shown_escaped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Whatever source writes it, a remote party's text cannot start a record of its own (each of
    its lines after the first is begun with ``  | ``) nor put a control character in the log.
    Control: plain text reads as it was written."""
    log = private_folder(tmp_path) / "remote.log"
    monkeypatch.setenv("REYN_REMOTE_LOG", str(log))
    log_remote_failure("mcp", "a server failed", "plain words\tand a tab")
    log_remote_failure(
        "mcp", "a server failed", "x\n2026-01-01 00:00:00,000 reyn.remote.mcp WARNING ref=0\x1b[2J\r\x85"
    )
    lines = log.read_text(encoding="utf-8").splitlines()
    assert lines[1] == "  | plain words\tand a tab"  # control
    assert lines[3:] == [
        "  | x",
        "  | 2026-01-01 00:00:00,000 reyn.remote.mcp WARNING ref=0\\x1b[2J\\x0d\\x85",
    ]
