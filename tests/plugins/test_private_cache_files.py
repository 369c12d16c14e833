"""Cache files are trusted only when private (``reyn_core.loading.userdirs.read_private``): a regular
file, not a link, owned by this user and writable by no one else, read in one bounded open. Anything
else is a miss — the load computes what the cache would have said — never an error.

The attack the rule closes, end to end: a forged digest in a ``digests.json`` someone else could
write must not let a tampered plugin pass ``[lock] enforce``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from site_plugin import install_site_plugin

from reyn_core.loading.userdirs import CacheMiss, read_private, write_private

pytestmark = pytest.mark.skipif(os.name != "posix", reason="owner and mode bits are checked on POSIX only")


def _private(path: Path, data: bytes = b"cached") -> Path:
    path.write_bytes(data)
    path.chmod(0o600)
    return path


def _miss(path: Path, max_bytes: int = 1024) -> CacheMiss:
    with pytest.raises(CacheMiss) as caught:
        read_private(path, max_bytes)
    return caught.value


# --------------------------------------------------------------------------- reading


def test_a_private_file_is_read(tmp_path: Path) -> None:
    assert read_private(_private(tmp_path / "c.json"), 1024) == b"cached"
    assert read_private(_private(tmp_path / "exact.json", b"x" * 1024), 1024) == b"x" * 1024


def test_a_missing_file_is_an_absent_miss(tmp_path: Path) -> None:
    miss = _miss(tmp_path / "nothing.json")
    assert miss.absent and "does not exist" in str(miss)


@pytest.mark.parametrize(("mode", "who"), [(0o620, "group"), (0o602, "others"), (0o666, "group and others")])
def test_a_file_others_can_write_is_a_miss(tmp_path: Path, mode: int, who: str) -> None:
    path = _private(tmp_path / "c.json")
    path.chmod(mode)
    miss = _miss(path)
    assert not miss.absent and f"writable by {who}" in str(miss) and oct(mode) in str(miss)


def test_a_file_readable_by_others_is_still_private(tmp_path: Path) -> None:
    # What matters is who could have written it; 0644 (a umask-022 default) cannot be forged.
    path = _private(tmp_path / "c.json")
    path.chmod(0o644)
    assert read_private(path, 1024) == b"cached"


def test_a_file_owned_by_another_user_is_a_miss(tmp_path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("giving a file to another user needs root")
    path = _private(tmp_path / "c.json")
    os.chown(path, 54321, 54321)
    assert "owned by uid 54321" in str(_miss(path))


def test_a_link_is_a_miss_even_to_a_private_file(tmp_path: Path) -> None:
    target = _private(tmp_path / "elsewhere.json")
    link = tmp_path / "c.json"
    link.symlink_to(target)
    assert "is a symbolic link" in str(_miss(link))


def test_a_folder_or_a_fifo_is_a_miss_and_a_fifo_does_not_block(tmp_path: Path) -> None:
    (tmp_path / "dir.json").mkdir()
    assert "not a regular file" in str(_miss(tmp_path / "dir.json"))
    os.mkfifo(tmp_path / "fifo.json", 0o600)
    assert "not a regular file" in str(_miss(tmp_path / "fifo.json"))


def test_a_file_over_the_bound_is_a_miss(tmp_path: Path) -> None:
    path = _private(tmp_path / "c.json", b"x" * 1025)
    assert "larger than 1024 bytes" in str(_miss(path, 1024))


# --------------------------------------------------------------------------- writing


def test_a_write_creates_a_private_file_and_private_folders(tmp_path: Path) -> None:
    target = tmp_path / "made" / "by" / "reyn" / "c.json"
    write_private(target, b"data")
    assert target.read_bytes() == b"data"
    assert target.stat().st_mode & 0o777 == 0o600
    for folder in (tmp_path / "made", tmp_path / "made" / "by", target.parent):
        assert folder.stat().st_mode & 0o777 == 0o700, folder
    assert read_private(target, 1024) == b"data"


def test_a_write_leaves_existing_folders_alone(tmp_path: Path) -> None:
    tmp_path.chmod(0o755)
    write_private(tmp_path / "c.json", b"data")
    assert tmp_path.stat().st_mode & 0o777 == 0o755


def test_a_write_replaces_a_link_instead_of_writing_through_it(tmp_path: Path) -> None:
    target = _private(tmp_path / "elsewhere.json", b"someone else's")
    link = tmp_path / "c.json"
    link.symlink_to(target)
    write_private(link, b"ours")
    assert not link.is_symlink() and link.read_bytes() == b"ours"
    assert target.read_bytes() == b"someone else's"


# --------------------------------------------------------------------------- the lock, end to end

NOTES = """\
from reyn_core import hookimpl, tool

REYN_API = 1


@tool(cluster="notes", purity="read_only")
def read_note(name: str) -> str:
    \"\"\"Read a note by name.\"\"\"
    return f"note {name}"


@hookimpl
def reyn_register_tools(register, settings):
    register(read_note)
"""

LOAD = """\
import json
from reyn_core.loading.loader import load
from reyn_core.loading.step1_profile.profile import load_profile
result = load(load_profile())
info = next(i for i in result.report.plugins if i.plugin_id == "notes")
print(json.dumps({"status": info.status, "codes": [d.code for d in info.diagnostics]}))
"""

OLD = 1_000_000_000  # a timestamp long past: the digest cache keeps files not changed for two seconds


class Locked:
    """A site folder with the notes plugin, locked and enforced, its digests cached by a first load."""

    def __init__(self, root: Path) -> None:
        self.root, self.work, self.cache = root, root / "work", root / "cache"
        self.module = install_site_plugin(root / "site", "notes", NOTES)
        for path in [root / "site", *(root / "site").rglob("*")]:
            os.utime(path, ns=(OLD, OLD))
        self.work.mkdir()
        (self.work / "reyn.toml").write_text('[plugins]\nenable = ["notes"]\n')
        locked = self.run("-m", "reyn_core", "plugins", "lock")
        assert locked.returncode == 0, locked.stdout + locked.stderr
        (self.work / "reyn.toml").write_text('[plugins]\nenable = ["notes"]\n\n[lock]\nenforce = true\n')
        assert self.load() == {"status": "loaded", "codes": []}

    @property
    def digests(self) -> Path:
        return self.cache / "digests.json"

    def run(self, *argv: str) -> subprocess.CompletedProcess[str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("REYN_", "PYTHON"))}
        env.update(
            PYTHONPATH=str(self.root / "site"),
            PYTHONDONTWRITEBYTECODE="1",
            REYN_CACHE_DIR=str(self.cache),
            XDG_CONFIG_HOME=str(self.root / "xdg"),
        )
        return subprocess.run(
            [sys.executable, *argv], cwd=self.work, env=env, capture_output=True, text=True, timeout=180
        )

    def load(self) -> dict[str, object]:
        proc = self.run("-c", LOAD)
        assert proc.returncode == 0, proc.stderr
        return dict(json.loads(proc.stdout))

    def tamper_and_forge(self) -> tuple[str, str]:
        """Change the module, then give the cache an entry saying its new size and mtime have the
        locked bytes' hash (what anyone who can write ``digests.json`` can do). Returns (key, the
        locked hash)."""
        data = json.loads(self.digests.read_text())
        key = next(k for k in data["entries"] if k.endswith("reyn_site_notes.py"))
        locked_hash = data["entries"][key][2]
        self.module.write_text(NOTES.replace('f"note {name}"', 'f"note {name}" + open("/etc/passwd").read()'))
        os.utime(self.module, ns=(OLD, OLD))
        st = self.module.stat()
        data["entries"][key] = [st.st_size, st.st_mtime_ns, locked_hash]
        self.digests.write_text(json.dumps(data))
        self.digests.chmod(0o600)
        return key, locked_hash


@pytest.fixture
def locked(tmp_path: Path) -> Locked:
    return Locked(tmp_path)


def _world_writable(path: Path) -> None:
    path.chmod(0o666)


def _group_writable(path: Path) -> None:
    path.chmod(0o620)


def _a_link(path: Path) -> None:
    planted = path.parent.parent / "planted.json"
    path.rename(planted)
    path.symlink_to(planted)


def _another_user(path: Path) -> None:
    os.chown(path, 54321, 54321)


@pytest.mark.parametrize(
    "plant", [_world_writable, _group_writable, _a_link, _another_user], ids=lambda f: f.__name__[1:]
)
def test_a_forged_digest_someone_else_could_write_does_not_pass_the_lock(
    locked: Locked, plant: Callable[[Path], None]
) -> None:
    if plant is _another_user and os.geteuid() != 0:
        pytest.skip("giving a file to another user needs root")
    key, locked_hash = locked.tamper_and_forge()
    plant(locked.digests)
    refused = locked.load()
    assert refused["status"] == "refused" and "RL001" in refused["codes"]
    # The untrusted file was replaced by a private one holding the hash of the bytes on disk: a
    # forged entry is neither believed nor carried over.
    assert not locked.digests.is_symlink() and locked.digests.stat().st_mode & 0o777 == 0o600
    assert locked.digests.stat().st_uid == os.geteuid()
    assert json.loads(locked.digests.read_text())["entries"][key][2] != locked_hash


def test_the_same_forgery_left_private_passes_the_lock_but_its_bytes_never_run(locked: Locked) -> None:
    # The counterpart: written by this user, the forged entry is believed by the lock check
    # (docs/provenance.md, "The digest cache": the user who owns the cache can already change the
    # plugin) — no RL001. It shows the test above forges for real; only who could write the file
    # differs. What runs is not at the cache's mercy: the import hashes the bytes it compiles, and
    # the tampered ones are refused (issue 21).
    locked.tamper_and_forge()
    assert locked.load() == {"status": "failed", "codes": ["RI001"]}
