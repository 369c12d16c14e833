"""The files the ``reyn`` command rewrites keep their identity: ``reyn plugins enable`` edits the file
a linked ``reyn.toml`` names and keeps its mode; ``reyn init`` and ``reyn plugins lock`` make files
with the umask's mode, as any program would — the real command in a subprocess, on real files."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from reyn_core.host import Profile

PROFILE = '# our profile\n[plugins]\nenable = ["example"]\n'


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_enable_edits_the_file_a_linked_profile_names_and_keeps_the_link(tmp_path, reyn_cli):
    real = tmp_path / "dotfiles" / "reyn.toml"
    real.parent.mkdir()
    real.write_text(PROFILE)
    project = tmp_path / "project"
    project.mkdir()
    (project / "reyn.toml").symlink_to(real)
    proc = reyn_cli("plugins", "enable", "file", cwd=project)
    assert proc.returncode == 0, proc.stderr
    assert (project / "reyn.toml").is_symlink() and os.readlink(project / "reyn.toml") == str(real)
    assert Profile.from_toml_text(real.read_text()).enabled == ("example", "file")
    assert sorted(p.name for p in real.parent.iterdir()) == ["reyn.toml"]


def test_enable_keeps_the_profile_mode(tmp_path, reyn_cli, umask):
    path = tmp_path / "reyn.toml"
    path.write_text(PROFILE)
    path.chmod(0o664)
    with umask(0o022):
        proc = reyn_cli("plugins", "enable", "file", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert mode(path) == 0o664 and '"file"' in path.read_text()


def test_init_and_lock_make_files_with_the_umask_mode(tmp_path, reyn_cli, umask):
    with umask(0o022):
        assert reyn_cli("init", cwd=tmp_path).returncode == 0
        assert reyn_cli("plugins", "enable", "example", cwd=tmp_path).returncode == 0
        proc = reyn_cli("plugins", "lock", cwd=tmp_path)
        control = tmp_path / "control"
        control.write_text("")  # positive control: what any program makes under this umask
    assert proc.returncode == 0, proc.stderr
    assert mode(tmp_path / "reyn.toml") == mode(tmp_path / "reyn.lock") == mode(control) == 0o644
