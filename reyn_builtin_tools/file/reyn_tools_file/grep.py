"""Grep inside the files a search walks: matching lines with their context, and one grep's tally.

A file is read whole up to ``max_grep_file_bytes`` (larger ones are skipped, as are binary and
hard-linked ones, and counted); each line is matched on its first ``MAX_MATCH_CHARS`` characters
by the one ``LineSearch`` of the call, which stops when the walk's time is up.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from .descriptors import open_regular_at
from .paths import PathMissing, PathRefused
from .patterns import LineSearch
from .reading import looks_binary, read_whole
from .tree_walk import SearchWalk

MAX_LINE_CHARS = 500  # grep shows at most this much of a line
MAX_MATCH_CHARS = 10_000  # and matches only this much of each line


def grep_text(
    text: str, search: LineSearch, context: int, budget: int, stop: Callable[[], bool]
) -> list[dict[str, Any]]:
    """The lines of ``text`` that ``search`` matches (each matched on its first ``MAX_MATCH_CHARS``
    characters, shown up to ``MAX_LINE_CHARS``), with ``context`` lines before and after, at most
    ``budget`` of them; ``stop`` ends the search early (the walk's time is up)."""
    lines = text.splitlines()
    searched = [line[:MAX_MATCH_CHARS] for line in lines]
    out = []
    for i in search.candidates(searched, stop):
        if not search.line_matches(searched[i]):
            continue
        line = lines[i]
        match: dict[str, Any] = {"line": i + 1, "text": line[:MAX_LINE_CHARS]}
        if context:
            match["before"] = [x[:MAX_LINE_CHARS] for x in lines[max(0, i - context) : i]]
            match["after"] = [x[:MAX_LINE_CHARS] for x in lines[i + 1 : i + 1 + context]]
        out.append(match)
        if len(out) >= budget:
            break
    return out


class Grep:
    """The state of one grep: counters for what was skipped, and the matches so far."""

    def __init__(self, search: LineSearch, walk: SearchWalk, context: int, limit: int) -> None:
        self.line_search = search
        self.walk = walk
        self.settings = walk.settings
        self.context = context
        self.limit = limit
        self.matches: list[dict[str, Any]] = []
        self.searched = 0
        self.skipped_large = 0
        self.skipped_binary = 0
        self.skipped_hardlinked = 0
        self.skipped_secret = 0
        self.more = False

    def search(self, parent: int, name: str, shown: str) -> None:
        """Grep regular file ``name`` in ``parent`` (shown as ``shown``), counting it when skipped."""
        try:
            fd, st = open_regular_at(
                parent, name, shown, allow_hardlinks=self.settings.allow_hardlinked_reads
            )
        except PathRefused as exc:
            if exc.reason == "hardlink":
                self.skipped_hardlinked += 1
            return
        except PathMissing:
            return  # removed since the walk listed it
        try:
            if st.st_size > self.settings.max_grep_file_bytes:
                self.skipped_large += 1
                return
            raw = read_whole(fd, self.settings.max_grep_file_bytes, shown)
        finally:
            os.close(fd)
        if looks_binary(raw[:8192]):
            self.skipped_binary += 1
            return
        self.searched += 1
        budget = self.limit - len(self.matches)
        text = raw.decode("utf-8", errors="replace")
        found = grep_text(text, self.line_search, self.context, budget + 1, self.walk.expired)
        if len(found) > budget:
            self.more = True
            found = found[:budget]
        self.matches.extend({"path": shown, **m} for m in found)

    @property
    def full(self) -> bool:
        """Whether the matches reached the call's limit."""
        return len(self.matches) >= self.limit

    def notes(self) -> list[str]:
        """What was skipped, and why."""
        notes = []
        if self.skipped_large:
            notes.append(
                f"{self.skipped_large} files larger than {self.settings.max_grep_file_bytes} bytes "
                "were skipped"
            )
        if self.skipped_hardlinked:
            notes.append(f"{self.skipped_hardlinked} files with several hard links were skipped")
        if self.skipped_binary:
            notes.append(f"{self.skipped_binary} binary files were skipped")
        if self.skipped_secret:
            notes.append(f"{self.skipped_secret} of the host's secret files were skipped (never read)")
        return notes
