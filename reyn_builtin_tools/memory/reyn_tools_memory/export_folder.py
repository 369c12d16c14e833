"""The folder ``reyn memory export DIR`` writes: exactly the store, or nothing.

An export is built whole in a new hidden folder beside ``DIR`` and then swapped in, so ``DIR`` ends
holding the store's entries and no others: an entry forgotten since an older export cannot come
back through it (an export merged into the old one would bring it back on import). ``DIR`` may be
absent, empty or an earlier export; a folder holding anything else is refused before anything is
written. Of an earlier export only the files this export wrote again byte for byte are deleted; the
others (an entry forgotten since, a note written there by hand) are kept in a hidden folder beside
``DIR``, named on stderr. docs/decisions.md (2026-12-07) says why.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Callable
from pathlib import Path

from reyn_core import ReynError


class ExportRefused(ReynError):
    """``DIR`` holds something an export did not write; the message names it and what to do."""


def replace_folder(root: Path, write: Callable[[Path], list[Path]]) -> list[Path]:
    """Make ``root`` (through a link: the folder it names) hold exactly what ``write(folder)``
    writes into a new folder; returns the files, under ``root``. Raises ``ExportRefused`` (nothing
    written) when ``root`` holds anything but an earlier export, ``OSError`` when a write fails
    (``root`` is then as it was)."""
    final = Path(os.path.realpath(root))
    old_files = earlier_export(final)
    final.parent.mkdir(parents=True, exist_ok=True)
    staging = _new_folder(final, "export")
    try:
        if old_files is not None:
            os.chmod(staging, stat.S_IMODE(os.stat(final).st_mode))  # the folder keeps its mode
        written = write(staging)
        if old_files is None:
            os.rename(staging, final)
        else:
            aside = _new_folder(final, "old")
            os.rename(final, aside)  # over the empty folder just made: a rename never merges
            try:
                os.rename(staging, final)
            except BaseException:
                os.rename(aside, final)
                raise
            _remove_export(aside, [f for f in old_files if _same_file(aside / f, final / f)])
            _report_kept(aside, final)
    except BaseException:
        _remove_export(staging, None)
        raise
    return [Path(root) / p.relative_to(staging) for p in written]


def _same_file(old: Path, new: Path) -> bool:
    """Whether the earlier export's file holds what this export wrote at its place (so deleting it
    loses nothing)."""
    try:
        return old.read_bytes() == new.read_bytes()
    except OSError:
        return False


def _report_kept(aside: Path, final: Path) -> None:
    """Say where the earlier export's other files were kept. Nothing an export cannot prove it wrote
    is deleted: an entry forgotten since, and a note written by hand in the export's form, look
    alike, so both are kept beside ``final`` for the user to look at and delete."""
    import sys

    if not aside.exists():
        return
    kept = sum(len(names) for _, _, names in os.walk(aside))
    print(
        f"reyn memory: {kept} file(s) of the earlier export that the store does not hold as they are "
        f"(entries forgotten or changed since, or notes written there by hand) were kept in {aside}; "
        "delete that folder once you no longer need them",
        file=sys.stderr,
    )


def earlier_export(folder: Path) -> list[str] | None:
    """The files of ``folder`` (relative paths) when it is empty or an earlier export; ``None`` when
    it does not exist. Raises ``ExportRefused`` naming the first thing an export does not write."""
    try:
        if not stat.S_ISDIR(os.lstat(folder).st_mode):
            raise ExportRefused(f"{folder} exists and is not a folder")
    except FileNotFoundError:
        return None
    files = []
    for here, dirs, names in os.walk(folder):
        rel = Path(here).relative_to(folder)
        depth = len(rel.parts)
        for name in dirs:
            allowed = (depth == 0 and name in ("shared", "agents")) or (
                depth == 1 and rel.parts == ("agents",)
            )
            if not allowed or os.path.islink(os.path.join(here, name)):
                _refuse(folder, rel / name)
        for name in names:
            if not _is_export_file(Path(here, name), rel, name):
                _refuse(folder, rel / name)
            files.append(str(rel / name))
    return files


def _is_export_file(path: Path, rel: Path, name: str) -> bool:
    """Whether an export wrote ``rel/name``: ``shared/<slug>.md`` or ``agents/<agent>/<slug>.md``
    starting as ``entry_to_markdown`` starts, or the ``.<slug>.md.tmp`` an interrupted export of an
    older version left."""
    if not (rel.parts == ("shared",) or (len(rel.parts) == 2 and rel.parts[0] == "agents")):
        return False
    if name.startswith(".") and name.endswith(".md.tmp"):
        return True
    if not name.endswith(".md") or not stat.S_ISREG(os.lstat(path).st_mode):
        return False
    try:
        # the slug on the second line names the file: what an export wrote, not a note of the user's
        head = f"---\nslug: {json.dumps(name[: -len('.md')], ensure_ascii=False)}\n".encode()
    except UnicodeEncodeError:  # a name that is not UTF-8: no export wrote it
        return False
    with open(path, "rb") as fh:
        return fh.read(len(head)) == head


def _refuse(folder: Path, rel: Path) -> None:
    raise ExportRefused(
        f"{folder} is not empty and not a memory export: {rel} was not written by "
        "`reyn memory export`; nothing was written. Export into a new or empty folder (an export "
        "replaces the whole folder, so it never shares one with other files)"
    )


def _new_folder(final: Path, kind: str) -> Path:
    """A new hidden folder beside ``final``, made with ``0o777`` less the umask (as ``mkdir``)."""
    import secrets

    for _ in range(100):
        folder = final.with_name(f".{final.name}.{kind}-{secrets.token_hex(6)}")
        try:
            os.mkdir(folder, 0o777)
        except FileExistsError:
            continue
        return folder
    raise FileExistsError(f"no unused temporary name beside {final}")


def _remove_export(folder: Path, files: list[str] | None) -> None:
    """Delete an export folder: ``files`` (every file when ``None``: a folder this run made), then
    each folder left empty. A file that appeared since is kept, with the folders holding it."""
    if files is None:
        files = [str(Path(h, n).relative_to(folder)) for h, _, ns in os.walk(folder) for n in ns]
    for rel in files:
        try:
            os.unlink(folder / rel)
        except FileNotFoundError:
            pass
    for here, _, _ in sorted(os.walk(folder), key=lambda w: -len(Path(w[0]).parts)):
        try:
            os.rmdir(here)
        except OSError:
            pass
