"""A remote failure log the host refuses (``private_files``: a folder of another user or writable by
others, a link at a log file's name) is reported by the load — ``RC013``, with its fix — and shown by
``reyn doctor``, not first at the record it drops; the rest loads. Real folders; each refusal
beside its control (the same folder made right)."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from reyn_core.host import Profile, load

REYN = (str(Path(sys.executable).parent / "reyn"),)


def world_writable(folder: Path, mode: int) -> Callable[[], None]:
    folder.chmod(mode)
    return lambda: folder.chmod(0o700)


def another_users(folder: Path) -> Callable[[], None]:
    if os.geteuid() != 0:
        pytest.skip("making a folder another user owns needs root")
    os.chown(folder, 65534, -1)
    return lambda: os.chown(folder, os.geteuid(), -1)


def link_at_the_log(folder: Path) -> Callable[[], None]:
    target = folder.parent / "elsewhere.txt"
    target.write_text("theirs\n")
    (folder / "remote.log").symlink_to(target)
    return (folder / "remote.log").unlink


REFUSALS = {
    "world-writable": (lambda f: world_writable(f, 0o777), "can be written by others"),
    "sticky world-writable": (lambda f: world_writable(f, 0o1777), "can be written by others"),
    "group-writable": (lambda f: world_writable(f, 0o770), "can be written by others"),
    "another user's": (another_users, "is owned by user id 65534, not by this user"),
    "a link at the log": (link_at_the_log, "remote.log is a symbolic link"),
}


@pytest.fixture
def log_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "logs"
    folder.mkdir(mode=0o700)
    monkeypatch.setenv("REYN_REMOTE_LOG", str(folder / "remote.log"))
    return folder


def rc013(profile: Profile) -> list[str]:
    result = load(profile)
    assert "read_file" in result.registry  # the rest loads
    return [d.render() for d in result.report.diagnostics if d.code == "RC013"]


@pytest.mark.parametrize("refusal", REFUSALS)
def test_the_load_reports_a_refused_log(isolated_profile_env: None, log_folder: Path, refusal: str) -> None:
    make, said = REFUSALS[refusal]
    undo = make(log_folder)
    profile = Profile.model_validate({"plugins": {"enable": ["file"]}})
    found = rc013(profile)
    assert len(found) == 1
    assert "RC013" in found[0] and "the remote failure log cannot be used" in found[0] and said in found[0]
    assert "REYN_REMOTE_LOG" in found[0]  # the fix, from the code's hint
    undo()  # the control: the same folder made right
    assert rc013(profile) == []
    assert (log_folder / "remote.log").is_file() and not (log_folder / "remote.log").is_symlink()


@pytest.mark.parametrize("refusal", ["world-writable", "another user's", "a link at the log"])
def test_reyn_doctor_shows_a_refused_log(reyn_cli, tmp_path: Path, log_folder: Path, refusal: str) -> None:
    make, said = REFUSALS[refusal]
    (tmp_path / "reyn.toml").write_text('[plugins]\nenable = ["file"]\n')
    env = {"REYN_REMOTE_LOG": str(log_folder / "remote.log")}
    undo = make(log_folder)
    refused = reyn_cli("doctor", cwd=tmp_path, command=REYN, env=env, timeout=180)
    undo()
    fixed = reyn_cli("doctor", cwd=tmp_path, command=REYN, env=env, timeout=180)
    assert refused.returncode == 1, refused.stderr
    assert "refused (RC013 below)" in refused.stdout
    assert "RC013" in refused.stdout and said in refused.stdout
    assert "plugins: 1 of 1 enabled loaded" in refused.stdout  # the rest loaded
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr  # the control
    assert "RC013" not in fixed.stdout and "no problems found" in fixed.stdout


def test_reyn_doctor_and_the_writer_agree_on_a_rotated_copy_with_a_second_name(
    reyn_cli, tmp_path: Path, log_folder: Path
) -> None:
    # the review's reproduction: remote.log.3 a hard link to a file elsewhere. The writer only ever
    # renames over a copy, so the log works: no RC013, the file is where records go, every tool
    # loaded (the load-error line says tools may be missing only when one may be)
    (tmp_path / "reyn.toml").write_text('[plugins]\nenable = ["file"]\n')
    (tmp_path / "keep").write_text("kept\n")
    os.link(tmp_path / "keep", log_folder / "remote.log.3")
    env = {"REYN_REMOTE_LOG": str(log_folder / "remote.log")}
    doctor = reyn_cli("doctor", cwd=tmp_path, command=REYN, env=env, timeout=180)
    assert doctor.returncode == 0, doctor.stdout + doctor.stderr
    assert f"remote failure details: the file {log_folder / 'remote.log'} ($" in doctor.stdout
    assert "RC013" not in doctor.stdout
    # the control: a link at the file the writer opens is refused by both — and no tool is missing
    (log_folder / "remote.log").unlink()
    (log_folder / "remote.log").symlink_to(tmp_path / "keep")
    refused = reyn_cli("doctor", cwd=tmp_path, command=REYN, env=env, timeout=180)
    listed = reyn_cli("tools", "list", cwd=tmp_path, command=REYN, env=env, timeout=180)
    assert refused.returncode == 1 and "refused (RC013 below)" in refused.stdout
    assert "1 load error(s) (RC013); every enabled plugin and its tools loaded" in listed.stderr
    assert "some tools may be missing" not in listed.stderr and "read_file" in listed.stdout
    assert (tmp_path / "keep").read_text() == "kept\n"
