"""The load's check of the remote failure log is its writer's own (issue 24, review of the merge
84aa7e9): ``make_log_files`` asks exactly what ``PrivateRotatingFileHandler`` will ask of the files
it opens (the log) and renames (the rotation's sources) — so the load refuses what the writer would
and nothing else — and a rotation that cannot proceed sends its records to standard error, where a
log refused at the load sends them. Real files, real rotations; each refusal beside its control."""

from __future__ import annotations

import logging
import os
import re
from pathlib import Path

import pytest

from reyn_core.private_files import LogFileRefused
from reyn_core.private_log_file import PrivateRotatingFileHandler
from reyn_core.remote_log import BACKUP_COUNT, make_log_files


def private_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "logs"
    folder.mkdir(mode=0o700)
    return folder


def write(handler: logging.Handler, text: str) -> None:
    logger = logging.getLogger(f"test.one_rule.{id(handler)}")
    logger.propagate = False
    logger.addHandler(handler)
    try:
        logger.warning("%s", text)
    finally:
        logger.removeHandler(handler)


def rotate_and_write(folder: Path, text: str) -> None:
    handler = PrivateRotatingFileHandler(folder / "remote.log", max_bytes=300, backup_count=BACKUP_COUNT)
    try:
        write(handler, "before the rotation")
        write(handler, f"{text} {'x' * 300}")  # past max_bytes: this record rotates the log first
    finally:
        handler.close()


@pytest.mark.parametrize("copy", [f"remote.log.{n}" for n in range(1, BACKUP_COUNT + 1)])
def test_a_rotated_copy_with_a_second_name_is_used_by_the_load_as_by_the_writer(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, copy: str
) -> None:
    # the reviewer's reproduction: remote.log.3 a hard link to a file elsewhere. The writer never
    # opens a copy (a rotation renames over it), so nothing written after reaches the other name.
    folder = private_folder(tmp_path)
    keep = tmp_path / "keep"
    keep.write_text("kept\n")
    os.link(keep, folder / copy)
    monkeypatch.setenv("REYN_REMOTE_LOG", str(folder / "remote.log"))
    assert make_log_files() == folder / "remote.log"  # not refused: the writer uses it as it is
    rotate_and_write(folder, "after the rotation")
    assert "after the rotation" in (folder / "remote.log").read_text()
    assert keep.read_text() == "kept\n"  # no record reached the other name


def test_the_live_log_with_a_second_name_is_refused_by_both(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # the control: the file the writer opens is checked for one name, at the load and by the writer
    folder = private_folder(tmp_path)
    (tmp_path / "keep").write_text("")
    os.link(tmp_path / "keep", folder / "remote.log")
    monkeypatch.setenv("REYN_REMOTE_LOG", str(folder / "remote.log"))
    with pytest.raises(LogFileRefused, match="has 2 names"):
        make_log_files()
    with pytest.raises(LogFileRefused, match="has 2 names"):
        PrivateRotatingFileHandler(folder / "remote.log", max_bytes=300, backup_count=BACKUP_COUNT)


def test_a_fifo_at_a_rotated_copy_is_refused_at_the_load_and_its_records_go_to_stderr(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = private_folder(tmp_path)
    os.mkfifo(folder / "remote.log.1", 0o600)
    monkeypatch.setenv("REYN_REMOTE_LOG", str(folder / "remote.log"))
    with pytest.raises(LogFileRefused, match=r"remote\.log\.1 is not a regular file: remove it"):
        make_log_files()  # RC013 at the load: "until it is fixed, standard error"
    rotate_and_write(folder, "a record the rotation could not place")
    err = capsys.readouterr().err
    assert "remote.log.1 is not a regular file" in err
    assert "a record the rotation could not place" in err  # on standard error, not dropped
    assert (folder / "remote.log.1").exists() and not (folder / "remote.log.1").is_file()  # nothing moved
    (folder / "remote.log.1").unlink()  # control: the same folder without the FIFO
    assert make_log_files() == folder / "remote.log"
    rotate_and_write(folder, "placed")
    assert "placed" in (folder / "remote.log").read_text()
    assert "placed" not in capsys.readouterr().err


@pytest.mark.parametrize("copy", [f"remote.log.{n}" for n in range(1, BACKUP_COUNT + 1)])
def test_a_folder_at_any_rotated_copy_is_refused_at_the_load_and_its_records_go_to_stderr(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str], copy: str
) -> None:
    # review of the merge 0d3d884: a folder at the oldest copy passed the load (only the sources a
    # rotation moves were checked), then every rotation failed renaming over it and its record was
    # dropped with a traceback. The oldest is renamed over, so it is checked as the others are.
    folder = private_folder(tmp_path)
    (folder / copy).mkdir()
    monkeypatch.setenv("REYN_REMOTE_LOG", str(folder / "remote.log"))
    with pytest.raises(LogFileRefused, match=re.escape(f"{copy} is not a regular file: remove it")):
        make_log_files()
    rotate_and_write(folder, "a record the rotation could not place")
    err = capsys.readouterr().err
    assert "a record the rotation could not place" in err and "Traceback" not in err
    (folder / copy).rmdir()  # control: the same folder without it
    assert make_log_files() == folder / "remote.log"
    rotate_and_write(folder, "placed")
    assert "placed" in (folder / "remote.log").read_text()
