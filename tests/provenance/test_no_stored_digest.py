"""Nothing stored stands in for a plugin file's bytes (issue 24): every load hashes every file it
checks, so a file whose bytes are replaced while its size and mtime are kept (``os.utime``) — what
the removed digest cache, keyed by (path, size, mtime_ns), reported with its old hash — is refused
by its pin (``RP001``) and by the enforced lock (``RL001``) on the next load: in the same process,
right after a load that passed, and in a fresh process. The attacker here also rewrites RECORD to
the new bytes, so the refusal comes from the pin or the lock alone, and plants in the user cache
folder what the old digest cache would have believed (its own private file format, the locked hash
under the tampered file's size and mtime): it is never read, and nothing is written there.

Controls: the same plugin untouched loads (first load of each test, and in a fresh process), and
with the file put back it loads again.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from plugin_distkit import PluginDist, venv_with_plugins

SOURCE = """
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

NOTES = PluginDist("rtp-samesize", "samesize", SOURCE)

# Loads the profile twice in one process; between the two loads, with argv[1] given, replaces the
# plugin file's bytes (same size, mtime and atime put back), rewrites RECORD to match and plants a
# forged digest-cache file. Prints both loads' outcome for the plugin.
LOAD_TWICE = textwrap.dedent("""
    import json, sys
    from reyn_core.host import load, load_profile

    def outcome():
        result = load(load_profile())
        info = next(i for i in result.report.plugins if i.plugin_id == "samesize")
        return {"status": info.status, "codes": sorted({d.code for d in info.diagnostics}),
                "messages": [d.message for d in info.diagnostics]}

    first = outcome()
    if len(sys.argv) > 1:
        exec(open(sys.argv[1]).read())
    print(json.dumps([first, outcome()]))
    """)

TAMPER = textwrap.dedent("""
    import base64, csv, hashlib, io, json, os
    from pathlib import Path

    target, cache = Path(os.environ["TARGET"]), Path(os.environ["REYN_CACHE_DIR"])
    st, old = target.stat(), target.read_bytes()
    new = old.replace(*(os.environ.get(k, d).encode() for k, d in (("FROM", "note {"), ("TO", "NOTE {"))))
    assert new != old and len(new) == len(old)
    target.write_bytes(new)
    os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns))  # size and mtime as they were
    record = next(target.parent.parent.glob("rtp_samesize-*.dist-info")) / "RECORD"
    rows = list(csv.reader(io.StringIO(record.read_text())))
    digest = base64.urlsafe_b64encode(hashlib.sha256(new).digest()).rstrip(b"=").decode()
    for row in rows:
        if row[0] == "rtp_samesize/plugin.py":
            row[1:] = [f"sha256={digest}", str(len(new))]
    out = io.StringIO()
    csv.writer(out, lineterminator="\\n").writerows(rows)
    record.write_text(out.getvalue())
    # What the removed digest cache believed: the old bytes' hash under the file's (size, mtime).
    # (Putting the file back, FROM given, plants nothing.)
    if not os.environ.get("FROM"):
        cache.mkdir(parents=True, exist_ok=True, mode=0o700)
        entry = [st.st_size, st.st_mtime_ns, hashlib.sha256(old).hexdigest()]
        forged = {"format": "reyn-digest-cache-v1", "entries": {str(target): entry}}
        (cache / "digests.json").write_text(json.dumps(forged))
        (cache / "digests.json").chmod(0o600)
    """)


class Notes:
    """A venv with the plugin installed from its wheel, a locked project enabling it, the tamper
    script and a cache folder; ``load_twice`` runs ``LOAD_TWICE`` there in a fresh process."""

    def __init__(self, venv: Any, root: Path) -> None:
        self.venv, self.root = venv, root
        self.work = root / "work"
        self.work.mkdir()
        self.cache = root / "cache"
        self.tamper = root / "tamper.py"
        self.tamper.write_text(TAMPER)
        self.target = venv.site_packages / "rtp_samesize" / "plugin.py"

    def env(self) -> dict[str, str]:
        return {
            "REYN_CACHE_DIR": str(self.cache),
            "XDG_CONFIG_HOME": str(self.work / "xdg"),
            "TARGET": str(self.target),
        }

    def profile(self, extra: str) -> None:
        (self.work / "reyn.toml").write_text('[plugins]\nenable = ["samesize"]\n' + extra)

    def reyn(self, *argv: str) -> Any:
        return self.venv.run("reyn", *argv, cwd=self.work, env=self.env())

    def load_twice(self, tamper_between: bool = False) -> list[dict[str, Any]]:
        argv = [str(self.tamper)] if tamper_between else []
        proc = self.venv.run("python", "-c", LOAD_TWICE, *argv, cwd=self.work, env=self.env())
        assert proc.returncode == 0, proc.stdout + proc.stderr
        return list(json.loads(proc.stdout))

    def cached_files(self) -> list[str]:
        return sorted(p.name for p in self.cache.iterdir()) if self.cache.exists() else []


@pytest.fixture(scope="module")
def notes_once(make_module_venv: Any, tmp_path_factory: pytest.TempPathFactory) -> Notes:
    root = tmp_path_factory.mktemp("samesize")
    return Notes(venv_with_plugins(make_module_venv, "samesize", root, [NOTES]), root)


@pytest.fixture
def notes(notes_once: Notes) -> Iterator[Notes]:
    """The world, with the plugin file and its RECORD put back (bytes and times), the cache folder,
    profile and lock removed after each test."""
    record = next(notes_once.venv.site_packages.glob("rtp_samesize-*.dist-info")) / "RECORD"
    saved = {p: (p.read_bytes(), p.stat()) for p in (notes_once.target, record)}
    yield notes_once
    for path, (data, st) in saved.items():
        path.write_bytes(data)
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    shutil.rmtree(notes_once.cache, ignore_errors=True)
    for name in ("reyn.toml", "reyn.lock"):
        (notes_once.work / name).unlink(missing_ok=True)


def _tamper_now(notes: Notes, **env: str) -> None:
    """Run the tamper script on its own (``FROM`` / ``TO``: the text replaced, same length)."""
    proc = notes.venv.run("python", str(notes.tamper), cwd=notes.work, env={**notes.env(), **env})
    assert proc.returncode == 0, proc.stdout + proc.stderr


def _same_size_and_mtime(notes: Notes, before: os.stat_result) -> None:
    after = notes.target.stat()
    assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)


def test_the_lock_refuses_a_same_size_edit_with_its_mtime_reset(notes: Notes) -> None:
    notes.profile("")
    locked = notes.reyn("plugins", "lock")
    assert locked.returncode == 0, locked.stdout + locked.stderr
    notes.profile("\n[lock]\nenforce = true\n")
    before = notes.target.stat()
    # Same process: the first load passes (control), the second, after the edit, is refused.
    first, second = notes.load_twice(tamper_between=True)
    _same_size_and_mtime(notes, before)
    assert first == {"status": "loaded", "codes": [], "messages": []}
    assert second["status"] == "refused" and second["codes"] == ["RL001"], second
    assert any("rtp_samesize/plugin.py" in m for m in second["messages"]), second
    # A fresh process: refused on both loads; the forged cache file is still there, never believed.
    assert notes.load_twice() == [second, second]
    assert [n for n in notes.cached_files() if n != "bytecode"] == ["digests.json"]
    forged = json.loads((notes.cache / "digests.json").read_text())["entries"][str(notes.target)]
    assert forged[2] != hashlib.sha256(notes.target.read_bytes()).hexdigest()  # left as planted


def test_a_pin_refuses_a_same_size_edit_with_its_mtime_reset(notes: Notes) -> None:
    notes.profile("")
    (untouched, again) = notes.load_twice()
    assert untouched == again == {"status": "loaded", "codes": [], "messages": []}  # control
    listing = json.loads(notes.reyn("plugins", "show", "samesize", "--json").stdout)
    digest = listing["origin"]["tree_digest"]
    notes.profile(f'\n[plugins.samesize]\ndigest = "{digest}"\n')
    assert notes.load_twice() == [untouched, untouched]  # the pin matches the untouched plugin
    before = notes.target.stat()
    first, second = notes.load_twice(tamper_between=True)
    _same_size_and_mtime(notes, before)
    assert first == untouched
    assert second["status"] == "refused" and second["codes"] == ["RP001"], second
    assert notes.load_twice() == [second, second]  # a fresh process


def test_nothing_is_written_to_the_cache_folder_and_a_restored_file_loads(notes: Notes) -> None:
    notes.profile("")
    locked = notes.reyn("plugins", "lock")
    assert locked.returncode == 0, locked.stdout + locked.stderr
    notes.profile("\n[lock]\nenforce = true\n")
    assert notes.load_twice() == [{"status": "loaded", "codes": [], "messages": []}] * 2
    # no digest or schema-check file: the only thing Reyn may keep there is compiled bytecode
    assert not [n for n in notes.cached_files() if n != "bytecode"]
    _tamper_now(notes)
    assert notes.load_twice()[0]["codes"] == ["RL001"]
    _tamper_now(notes, FROM="NOTE {", TO="note {")  # put back, RECORD too
    assert notes.load_twice() == [{"status": "loaded", "codes": [], "messages": []}] * 2
