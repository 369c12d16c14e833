"""``[plugins.file.settings]``: where the file tools may read and write, and how much."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator

# The repository, Reyn's own state (memory.db, the MCP snapshot, the audit log) and the profile and
# lock in their usual places; the load adds the host's own files wherever they are (the profile, the
# lock, the audit log, the approval store, ...) through ``ToolContext.host_files``.
DEFAULT_PROTECTED: tuple[str, ...] = (".git/", ".reyn/", "reyn.toml", "reyn.lock", "pyproject.toml")
DEFAULT_SKIP_DIRS: tuple[str, ...] = (".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv")

# Pseudo-filesystems whose "files" are kernel state, not data (``/proc/self/environ`` holds secrets).
PSEUDO_FS_PREFIXES: tuple[str, ...] = ("/proc", "/sys", "/dev")


def _is_pseudo_fs(path: str) -> bool:
    return any(path == p or path.startswith(p + "/") for p in PSEUDO_FS_PREFIXES)


def is_pseudo_fs_parts(parts: tuple[str, ...]) -> bool:
    """Whether an absolute path, as components below ``/``, lies in a pseudo-filesystem."""
    return bool(parts) and ("/" + parts[0]) in PSEUDO_FS_PREFIXES


class FileSettings(BaseModel):
    """Settings of the file pack.

    ``workspace`` is the root relative paths resolve against (default: the host's
    ``ToolContext.workspace``). ``read_roots`` and ``write_roots`` are directories, relative to the
    workspace or absolute; every path a tool touches must lie inside one of them (a write root is
    also readable). With no write root, the write tools are unavailable. ``protected`` paths are
    never written or deleted: ``name/`` protects a directory, a bare name a file; entries without a
    ``/`` inside match at any depth (like ``.gitignore``), a leading ``/`` anchors at the workspace.
    The host's own files (``ToolContext.host_files``: the profile, lock, audit log, approval store
    and its ``-wal``/``-shm``/``-journal`` siblings, argument key and Reyn's caches, set by the
    dispatcher from the load on every surface) are never written or deleted, nor anything below them.
    Files with more than one hard link are never written or deleted, and are not read either unless
    ``allow_hardlinked_reads`` is true (a hard link can make a file outside the roots look inside).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    workspace: str | None = None
    read_roots: tuple[str, ...] = (".",)
    write_roots: tuple[str, ...] = ()
    protected: tuple[str, ...] = DEFAULT_PROTECTED
    skip_dirs: tuple[str, ...] = DEFAULT_SKIP_DIRS
    allow_hardlinked_reads: bool = False
    max_read_bytes: int = Field(default=256 * 1024, ge=1024, le=64 * 1024 * 1024)
    max_write_bytes: int = Field(default=4 * 1024 * 1024, ge=1024, le=256 * 1024 * 1024)
    max_grep_file_bytes: int = Field(default=4 * 1024 * 1024, ge=1024, le=256 * 1024 * 1024)
    max_results: int = Field(default=200, ge=1, le=10_000)
    max_scan_entries: int = Field(default=50_000, ge=100, le=10_000_000)
    # how long glob_files / grep_files search before returning a partial result (inside the tools'
    # 60 s timeout, so a search always answers itself and its thread ends with the call)
    search_seconds: float = Field(default=20.0, gt=0, le=20.0)

    @field_validator("read_roots", "write_roots")
    @classmethod
    def _roots_are_plain_directories(cls, roots: tuple[str, ...]) -> tuple[str, ...]:
        for root in roots:
            if not root or "\x00" in root:
                raise ValueError(f"root {root!r} must be a non-empty path without NUL bytes")
            if _is_pseudo_fs(root):
                raise ValueError(
                    f"root {root!r} is inside a pseudo-filesystem ({', '.join(PSEUDO_FS_PREFIXES)}); "
                    "its entries are kernel state, not files, and cannot be a read or write root"
                )
        return roots

    @field_validator("protected")
    @classmethod
    def _protected_entries_are_paths(cls, entries: tuple[str, ...]) -> tuple[str, ...]:
        for entry in entries:
            if not entry.strip("/") or "\x00" in entry or ".." in entry.split("/"):
                raise ValueError(f"protected entry {entry!r} must be a path such as '.git/' or 'reyn.toml'")
        return entries
