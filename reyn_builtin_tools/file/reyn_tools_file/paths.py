"""Paths as text, and the file tools' path refusals: the first check every path gets.

A requested path is first checked as text (NUL bytes, length, UTF-8, ``..`` segments) before any
file system call; a path inside a pseudo-filesystem (``/proc``, ``/sys``, ``/dev``) is refused
whatever the roots say. What a path is checked against next — the configured roots and the protected
entries — is ``scope``; how it is then walked without following links is ``descriptors``.

``PathRefused`` (a ``ToolDenied`` with a stable ``reason``) and ``PathMissing`` are raised by all of
them.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from reyn_core import ToolDenied, ToolExecutionError

from .settings import PSEUDO_FS_PREFIXES, is_pseudo_fs_parts

MAX_PATH_BYTES = 4096
MAX_NAME_BYTES = 255


class PathMissing(ToolExecutionError):
    """A path (or one of its directories) that does not exist."""


class PathRefused(ToolDenied):
    """A path the file tools will not touch. ``reason`` is a stable code naming the rule:

    ``empty``, ``nul``, ``too_long``, ``not_utf8``, ``dotdot``, ``outside_roots``, ``symlink``,
    ``not_directory``, ``special_file``, ``hardlink``, ``protected``, ``is_directory``,
    ``pseudo_filesystem``, ``secret``.
    """

    def __init__(self, message: str, *, reason: str, path: str = "") -> None:
        super().__init__(message)
        self.reason = reason
        self.path = path


@dataclass(frozen=True, slots=True)
class Location:
    """A requested path, checked as text: a root and the components below it (no links resolved).

    ``root_display`` is how the root is shown to a model (relative to the workspace when inside it).
    """

    root: Path
    parts: tuple[str, ...]
    root_display: str = "."

    @property
    def name(self) -> str:
        """The last component (empty for the root itself)."""
        return self.parts[-1] if self.parts else ""

    @property
    def display(self) -> str:
        """The path as shown to a model."""
        return self.shown(len(self.parts))

    def shown(self, depth: int) -> str:
        """How the path of the first ``depth`` components is shown."""
        parts = self.parts[:depth]
        if self.root_display == ".":
            return "/".join(parts) or "."
        return "/".join((self.root_display.rstrip("/"), *parts)) if parts else self.root_display

    @property
    def absolute_parts(self) -> tuple[str, ...]:
        """The components of the absolute path (below ``/``); links below the root are never
        followed, so this is the path that is actually walked."""
        return self.root.parts[1:] + self.parts

    def child(self, *names: str) -> Location:
        """The location of ``names`` below this one."""
        return Location(self.root, self.parts + names, self.root_display)


def check_path_text(path: object) -> str:
    """``path`` when it is a string a file may be named by: not empty, no NUL byte, UTF-8, at most
    ``MAX_PATH_BYTES`` bytes with no name over ``MAX_NAME_BYTES``, no ``..`` segment. Raises
    ``PathRefused``."""
    if not isinstance(path, str):
        raise PathRefused(f"path must be a string, got {type(path).__name__}", reason="empty")
    shown = repr(path[:120])
    if not path:
        raise PathRefused("path is empty; give a file or directory path such as 'notes.md'", reason="empty")
    if "\x00" in path:
        raise PathRefused(f"path {shown} contains a NUL byte, which no file name may contain", reason="nul")
    try:
        encoded = path.encode("utf-8")
    except UnicodeEncodeError:
        raise PathRefused(
            f"path {shown} is not valid UTF-8 (it contains lone surrogates); only UTF-8 names are accepted",
            reason="not_utf8",
        ) from None
    if len(encoded) > MAX_PATH_BYTES:
        raise PathRefused(
            f"path is {len(encoded)} bytes long; the limit is {MAX_PATH_BYTES}", reason="too_long"
        )
    for part in path.split("/"):
        if len(part.encode("utf-8")) > MAX_NAME_BYTES:
            raise PathRefused(
                f"path component {part[:40]!r}… is longer than {MAX_NAME_BYTES} bytes", reason="too_long"
            )
        if part == "..":
            raise PathRefused(
                f"path {shown} contains a '..' segment; name paths from the workspace without '..'",
                reason="dotdot",
            )
    return path


def refuse_pseudo_fs(parts: tuple[str, ...], shown: str) -> None:
    """Refuse an absolute path (components below ``/``) inside ``/proc``, ``/sys`` or ``/dev``,
    whatever the roots say: their entries are kernel state, not files."""
    if is_pseudo_fs_parts(parts):
        raise PathRefused(
            f"path {shown!r} is inside a pseudo-filesystem ({', '.join(PSEUDO_FS_PREFIXES)}); its entries "
            "are kernel state (environments, memory, devices), never read or written by the file tools",
            reason="pseudo_filesystem",
            path=shown,
        )
