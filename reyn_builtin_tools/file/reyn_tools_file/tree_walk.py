"""Walking a tree below a root without following links, and the searches' time-bounded walk.

``walk_tree`` lists each directory in sorted order and enters only real directories (opened with
``O_NOFOLLOW`` relative to their parent); names that are not UTF-8 and pseudo-filesystem mount
points are left out and counted. ``SearchWalk`` is one walk of ``glob_files`` or ``grep_files``: the
regular files it yields until its time is up, and the notes saying what was cut or skipped.
"""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Iterator
from dataclasses import dataclass

from .descriptors import DIR_FLAGS, lstat_at
from .settings import PSEUDO_FS_PREFIXES, FileSettings, is_pseudo_fs_parts

PSEUDO_FS_NOTE = f"pseudo-filesystems ({', '.join(PSEUDO_FS_PREFIXES)}: kernel state, not files)"


@dataclass
class WalkStats:
    """What a tree walk left out: entries beyond the scan limit, names that are not UTF-8, and
    pseudo-filesystem mount points."""

    scanned: int = 0
    limit_hit: bool = False
    skipped_non_utf8: int = 0
    skipped_pseudo_fs: int = 0


def is_utf8_name(name: str) -> bool:
    """False for names that only decode with surrogate escapes (raw non-UTF-8 bytes on disk)."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def list_names(dir_fd: int, stats: WalkStats) -> list[str]:
    """Sorted UTF-8 names in ``dir_fd`` (other names are counted in ``stats`` and left out)."""
    names = []
    for name in os.listdir(dir_fd):
        if is_utf8_name(name):
            names.append(name)
        else:
            stats.skipped_non_utf8 += 1
    return sorted(names)


def walk_tree(
    dir_fd: int,
    *,
    at: tuple[str, ...],
    skip_dirs: frozenset[str],
    max_entries: int,
    max_depth: int | None,
    stats: WalkStats,
) -> Iterator[tuple[int, str, tuple[str, ...], os.stat_result]]:
    """Depth-first, sorted walk below ``dir_fd`` that never descends through a link.

    Yields ``(parent_fd, name, relative_parts, lstat)`` for every entry; ``parent_fd`` is valid until
    the next item is requested. Directories named in ``skip_dirs`` are not entered. Stops after
    ``max_entries`` entries (``stats.limit_hit``). ``at`` is the absolute path of ``dir_fd`` (as
    components below ``/``): entries inside a pseudo-filesystem (``/proc``, ``/sys``, ``/dev``) are
    neither yielded nor entered (counted in ``stats.skipped_pseudo_fs``).
    """

    def visit(fd: int, prefix: tuple[str, ...]) -> Iterator[tuple[int, str, tuple[str, ...], os.stat_result]]:
        for name in list_names(fd, stats):
            if stats.scanned >= max_entries:
                stats.limit_hit = True
                return
            rel = (*prefix, name)
            if is_pseudo_fs_parts(at + rel):
                stats.skipped_pseudo_fs += 1
                continue
            st = lstat_at(fd, name)
            if st is None:
                continue  # removed while walking
            stats.scanned += 1
            yield fd, name, rel, st
            if (
                stat.S_ISDIR(st.st_mode)
                and name not in skip_dirs
                and (max_depth is None or len(rel) < max_depth)
            ):
                try:
                    child = os.open(name, DIR_FLAGS, dir_fd=fd)
                except OSError:
                    continue  # swapped for a link or removed: not entered
                try:
                    yield from visit(child, rel)
                finally:
                    os.close(child)

    yield from visit(dir_fd, ())


class SearchWalk:
    """One walk of glob_files or grep_files: the regular files below a directory until
    ``max_seconds`` (the tools' ``WORK_SECONDS``; less when ``search_seconds`` says so) have passed,
    and what was skipped or cut on the way."""

    def __init__(self, settings: FileSettings, max_seconds: float) -> None:
        self.settings = settings
        self.stats = WalkStats()
        self.seconds = min(settings.search_seconds, max_seconds)
        self.deadline = time.monotonic() + self.seconds
        self.out_of_time = False

    def expired(self) -> bool:
        """Whether the search's time is up (and, once it is, that the result is partial)."""
        if not self.out_of_time and time.monotonic() > self.deadline:
            self.out_of_time = True
        return self.out_of_time

    def regular_files(
        self, fd: int, at: tuple[str, ...], max_depth: int | None
    ) -> Iterator[tuple[int, str, tuple[str, ...]]]:
        """``(parent_fd, name, relative_parts)`` of each regular file below ``fd`` (at ``at``)."""
        for parent, name, rel, st in walk_tree(
            fd,
            at=at,
            skip_dirs=frozenset(self.settings.skip_dirs),
            max_entries=self.settings.max_scan_entries,
            max_depth=max_depth,
            stats=self.stats,
        ):
            if self.expired():
                return
            if stat.S_ISREG(st.st_mode):
                yield parent, name, rel

    def notes(self, *, limit: int, more: bool, what: str) -> list[str]:
        """Why the result is partial (time, ``limit`` ``what``, scan limit) and what was skipped."""
        notes = []
        if self.out_of_time:
            notes.append(
                f"stopped after {self.seconds:g} s (the time limit) with partial results; "
                "narrow the path or pattern (or raise plugins.file.settings.search_seconds)"
            )
        if more:
            notes.append(f"stopped after {limit} {what} (the result limit); narrow the pattern or path")
        if self.stats.limit_hit:
            notes.append(
                f"stopped after scanning {self.stats.scanned} entries (the scan limit); narrow the path"
            )
        if self.stats.skipped_non_utf8:
            notes.append(f"{self.stats.skipped_non_utf8} entries with non-UTF-8 names were skipped")
        if self.stats.skipped_pseudo_fs:
            notes.append(f"{PSEUDO_FS_NOTE} were skipped")
        return notes
