"""Path safety for the file tools: every path is checked here, and nowhere else.

A requested path is first checked as text (NUL bytes, length, UTF-8, ``..`` segments), then matched
component-wise against the configured roots (so ``/ws-evil`` is not inside ``/ws``). The file system
is then walked from the root's directory descriptor, one component at a time, each opened with
``O_NOFOLLOW | O_DIRECTORY`` relative to its parent's descriptor: a symbolic link anywhere below a
root is refused, even one swapped in after an earlier check, because nothing is ever looked up by
its full path again. Leaves are ``lstat``-ed before they are opened (FIFOs, devices and sockets are
never opened), opened with ``O_NOFOLLOW``, and checked again with ``fstat``.

Writes go to a fresh temporary file in the same directory (``O_EXCL``), are fsync-ed, renamed over
the target with ``os.replace`` relative to the directory descriptor (a rename replaces a link at the
target instead of following it), and the directory is fsync-ed. Targets with more than one hard link
are never written or deleted. Protected paths are never written or deleted.

Only POSIX systems with ``O_NOFOLLOW`` and ``dir_fd`` support are supported; elsewhere the tools
are unavailable.
"""

from __future__ import annotations

import errno
import os
import secrets
import stat
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from reyn_core import SecretPaths, ToolDenied, ToolExecutionError, ToolRuntimeMissing, secret_paths

from .settings import PSEUDO_FS_PREFIXES, FileSettings, is_pseudo_fs_parts

MAX_PATH_BYTES = 4096
MAX_NAME_BYTES = 255

_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_O_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_DIR_FLAGS = os.O_RDONLY | _O_DIRECTORY | _O_NOFOLLOW | _O_CLOEXEC
_READ_FLAGS = os.O_RDONLY | _O_NOFOLLOW | getattr(os, "O_NONBLOCK", 0) | _O_CLOEXEC
_TEMP_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _O_NOFOLLOW | _O_CLOEXEC


def supported() -> bool:
    """Whether this platform can walk paths without following links (POSIX with ``dir_fd``)."""
    return bool(_O_NOFOLLOW and _O_DIRECTORY) and os.open in os.supports_dir_fd


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


_KINDS = {
    stat.S_IFREG: "regular file",
    stat.S_IFDIR: "directory",
    stat.S_IFLNK: "symbolic link",
    stat.S_IFIFO: "FIFO",
    stat.S_IFCHR: "character device",
    stat.S_IFBLK: "block device",
    stat.S_IFSOCK: "socket",
}


def kind_of(mode: int) -> str:
    """How messages name the file type of ``mode``: ``regular file``, ``symbolic link``, ``FIFO``..."""
    return _KINDS.get(stat.S_IFMT(mode), "special file")


# --------------------------------------------------------------------------- locating (text only)


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


def _check_text(path: object) -> str:
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


@dataclass(frozen=True, slots=True)
class Scope:
    """The workspace, roots and protected entries of one call, with links in the roots resolved.

    The roots themselves are operator configuration and are trusted; only what lies below them is
    walked without following links.
    """

    workspace: Path
    read_roots: tuple[Path, ...]
    write_roots: tuple[Path, ...]
    protected: tuple[str, ...]
    host_files: object = ()
    """The host's own files (``ToolContext.host_files``), as given: turned into components
    (``_host_protected``) only when a write or delete is checked, so a read never pays for them."""
    secret: SecretPaths = field(default_factory=SecretPaths)
    """The host's secret files (``SecretFile`` values of ``ToolContext.host_files``): never read."""

    @classmethod
    def from_settings(cls, settings: FileSettings, workspace: Path, protected_paths: object = ()) -> Scope:
        """Resolve ``settings`` against ``workspace`` (the host's, unless settings name one).

        ``protected_paths`` are the host's own files (``ToolContext.host_files``, which the
        dispatcher fills from the load on every surface: absolute path → what it is): never written
        or deleted, nor anything below them; the secret ones (``reyn_core.SecretFile``) never read.
        """
        if not supported():
            raise ToolRuntimeMissing("the file tools need a POSIX system with O_NOFOLLOW and dir_fd support")
        ws = Path(os.path.realpath(Path(workspace) / settings.workspace if settings.workspace else workspace))

        def resolve(roots: tuple[str, ...]) -> tuple[Path, ...]:
            out = []
            for root in roots:
                real = Path(os.path.realpath(ws / root))
                if any(str(real) == p or str(real).startswith(p + "/") for p in PSEUDO_FS_PREFIXES):
                    raise ToolDenied(f"root {root!r} resolves to {real}, inside a pseudo-filesystem; refused")
                out.append(real)
            return tuple(out)

        return cls(
            ws,
            resolve(settings.read_roots),
            resolve(settings.write_roots),
            settings.protected,
            protected_paths,
            secret_paths(protected_paths) if isinstance(protected_paths, Mapping) else SecretPaths(),
        )

    def secret_refusal(self, loc: Location) -> str | None:
        """Why ``loc`` is never read — it is, or lies inside, a secret file of the host — in the
        core's one rule and words (``reyn_core.secret_paths``), naming only ``loc.display``; None
        when it may be read."""
        # resolved: the root is, and the walk never follows a link below it (a link is refused)
        return self.secret.refusal("/" + "/".join(loc.absolute_parts), loc.display, resolved=True)

    def check_readable(self, loc: Location) -> None:
        """Refuse to read a secret file of the host (``secret_refusal``)."""
        refusal = self.secret_refusal(loc)
        if refusal is not None:
            raise PathRefused(refusal, reason="secret", path=loc.display)

    def _show(self, path: Path) -> str:
        try:
            rel = path.relative_to(self.workspace)
        except ValueError:
            return str(path)
        return rel.as_posix() or "."

    def roots_text(self, *, write: bool) -> str:
        """The roots a model may use, for error messages."""
        roots = self.write_roots if write else self.read_roots + self.write_roots
        return ", ".join(repr(self._show(r)) for r in dict.fromkeys(roots)) or "(none configured)"

    def locate(self, path: object, *, write: bool = False) -> Location:
        """Check ``path`` as text and find the most specific root containing it.

        Relative paths are taken from the workspace. Raises ``PathRefused``.
        """
        text = _check_text(path)
        requested = tuple(p for p in text.split("/") if p not in ("", "."))
        full = requested if text.startswith("/") else self.workspace.parts[1:] + requested
        roots = self.write_roots if write else self.read_roots + self.write_roots
        best: Path | None = None
        for root in roots:
            rparts = root.parts[1:]
            if full[: len(rparts)] == rparts and (best is None or len(rparts) > len(best.parts) - 1):
                best = root
        if best is None:
            what = "writable" if write else "readable"
            raise PathRefused(
                f"path {text[:200]!r} is outside the {what} roots; allowed: {self.roots_text(write=write)}",
                reason="outside_roots",
                path=text[:200],
            )
        refuse_pseudo_fs(full, text[:200])
        return Location(best, full[len(best.parts) - 1 :], self._show(best))

    def check_not_protected(self, loc: Location) -> None:
        """Refuse a write or delete of a protected path (compared case-insensitively, fail-closed):
        a repository marker (always), a ``protected`` entry, or a host's protected path."""
        full = loc.root.parts[1:] + loc.parts
        ws = self.workspace.parts[1:]
        rel = [p.casefold() for p in (full[len(ws) :] if full[: len(ws)] == ws else full)]
        for entry in self.protected:
            pattern = [p.casefold() for p in entry.split("/") if p]
            anchored = entry.startswith("/") or len(pattern) > 1
            starts = [0] if anchored else range(len(rel))
            if any(rel[i : i + len(pattern)] == pattern for i in starts):
                raise PathRefused(
                    f"{loc.display!r} is protected ({entry!r}) and is never written or deleted "
                    "by the file tools",
                    reason="protected",
                    path=loc.display,
                )
        folded = tuple(p.casefold() for p in full)
        for host_path in _host_protected(self.host_files):
            if folded[: len(host_path)] == host_path:
                raise PathRefused(
                    f"{loc.display!r} is protected by the host (it is or lies below "
                    f"{'/' + '/'.join(host_path)!r}) and is never written or deleted by the file tools",
                    reason="protected",
                    path=loc.display,
                )
        refuse_repository_marker(loc)  # whatever `protected` says


# Names that make a directory a version-control repository whose configuration a program run there
# (``git status`` through the shell pack) obeys — ``core.fsmonitor``, hooks, aliases, filters. They are
# never written or deleted, whatever ``protected`` says: a component named like a repository
# directory, and a file named ``HEAD`` (git's test for a git directory, so a bare-repository layout —
# ``HEAD``, ``objects/``, ``refs/``, ``config`` — cannot be assembled in a write root).
REPOSITORY_DIRS: frozenset[str] = frozenset({".git", ".hg", ".svn", ".bzr", ".jj", "_darcs"})
REPOSITORY_FILES: frozenset[str] = frozenset({"head"})


def refuse_repository_marker(loc: Location) -> None:
    """Refuse a path that is, or lies inside, a repository marker (compared case-insensitively, on
    the whole absolute path: a write root inside a ``.git`` directory is no exception)."""
    folded = [p.casefold() for p in loc.absolute_parts]
    marker = next((p for p in folded if p in REPOSITORY_DIRS), None)
    if marker is None and folded and folded[-1] in REPOSITORY_FILES:
        marker = folded[-1]
    if marker is not None:
        raise PathRefused(
            f"{loc.display!r} is a repository marker or lies inside one ({marker!r}); programs such as git "
            "obey the configuration they find in a repository (hooks, fsmonitor, aliases), so the file "
            "tools never write or delete repository files",
            reason="protected",
            path=loc.display,
        )


def _host_protected(value: object) -> tuple[tuple[str, ...], ...]:
    """The host's files (``ToolContext.host_files``: its paths, or a list of them) as case-folded
    components, each path both as given and with links resolved (a path the load resolved already —
    a plugin's, ``resolved`` — is not resolved again: no call re-reads the file system for it).
    Anything but absolute paths is refused (fail-closed)."""
    if value is None:
        return ()
    if isinstance(value, Mapping):
        value = list(value)
    if isinstance(value, (str, bytes)) or not isinstance(value, (list, tuple, set, frozenset)):
        raise ToolRuntimeMissing(
            f"ToolContext.host_files must map absolute paths to what they are, got {type(value).__name__}"
        )
    out: dict[tuple[str, ...], None] = {}
    for item in value:
        if not isinstance(item, (str, os.PathLike)) or not os.path.isabs(item) or "\x00" in str(item):
            raise ToolRuntimeMissing(f"ToolContext.host_files holds {item!r}, which is not an absolute path")
        if getattr(item, "resolved", False) is True:
            forms: tuple[str | os.PathLike[str], ...] = (item,)
        else:
            forms = (os.path.normpath(item), os.path.realpath(item))
        for form in forms:
            out[tuple(p.casefold() for p in Path(form).parts[1:])] = None  # "/" protects everything
    return tuple(out)


# --------------------------------------------------------------------------- walking (no links)


def _refusal(parent_fd: int, name: str, shown: str, exc: OSError, *, want: str) -> Exception:
    """Turn a failed open of ``name`` into the error that says why."""
    try:
        st = os.stat(name, dir_fd=parent_fd, follow_symlinks=False)
    except FileNotFoundError:
        return PathMissing(f"{shown!r} does not exist")
    except OSError:
        return ToolExecutionError(f"cannot open {shown!r}: {exc.strerror or exc}")
    if stat.S_ISLNK(st.st_mode):
        return PathRefused(
            f"{shown!r} is a symbolic link; the file tools never follow links", reason="symlink", path=shown
        )
    if want == "directory" and not stat.S_ISDIR(st.st_mode):
        return PathRefused(
            f"{shown!r} is a {kind_of(st.st_mode)}, not a directory", reason="not_directory", path=shown
        )
    return ToolExecutionError(f"cannot open {shown!r}: {exc.strerror or exc}")


def open_subdir(parent_fd: int, name: str, shown: str, *, create: bool = False) -> int:
    """Open directory ``name`` inside ``parent_fd`` without following a link (creating it if asked)."""
    try:
        return os.open(name, _DIR_FLAGS, dir_fd=parent_fd)
    except FileNotFoundError:
        if not create:
            raise PathMissing(f"{shown!r} does not exist") from None
    except OSError as exc:
        raise _refusal(parent_fd, name, shown, exc, want="directory") from None
    try:
        os.mkdir(name, 0o755, dir_fd=parent_fd)
    except FileExistsError:
        pass  # created concurrently; the open below still refuses a link
    try:
        return os.open(name, _DIR_FLAGS, dir_fd=parent_fd)
    except OSError as exc:
        raise _refusal(parent_fd, name, shown, exc, want="directory") from None


def _open_root(root: Path, *, create: bool) -> int:
    try:
        return os.open(root, os.O_RDONLY | _O_DIRECTORY | _O_CLOEXEC)
    except FileNotFoundError:
        if not create:
            raise PathMissing(f"the root {str(root)!r} does not exist") from None
    os.makedirs(root, exist_ok=True)  # a configured write root: operator configuration, trusted
    return os.open(root, os.O_RDONLY | _O_DIRECTORY | _O_CLOEXEC)


@contextmanager
def open_directory(loc: Location, *, upto: int | None = None, create: bool = False) -> Iterator[int]:
    """A descriptor of the directory at ``loc`` (or of its first ``upto`` components), walked from
    the root one component at a time with ``O_NOFOLLOW``. Closed on exit."""
    parts = loc.parts if upto is None else loc.parts[:upto]
    fd = _open_root(loc.root, create=create)
    try:
        for i, name in enumerate(parts):
            child = open_subdir(fd, name, loc.shown(i + 1), create=create)
            os.close(fd)
            fd = child
        yield fd
    finally:
        os.close(fd)


@contextmanager
def open_parent(loc: Location, *, create: bool = False) -> Iterator[int]:
    """A descriptor of the directory holding ``loc``'s last component."""
    if not loc.parts:
        raise PathRefused(
            f"{loc.display!r} is a root directory, not a file", reason="is_directory", path=loc.display
        )
    with open_directory(loc, upto=len(loc.parts) - 1, create=create) as fd:
        yield fd


def lstat_at(parent_fd: int, name: str) -> os.stat_result | None:
    """``lstat`` of ``name`` inside ``parent_fd``, or None when it does not exist."""
    try:
        return os.stat(name, dir_fd=parent_fd, follow_symlinks=False)
    except FileNotFoundError:
        return None


def _require_regular(st: os.stat_result, shown: str) -> None:
    if stat.S_ISLNK(st.st_mode):
        raise PathRefused(
            f"{shown!r} is a symbolic link; the file tools never follow links", reason="symlink", path=shown
        )
    if stat.S_ISDIR(st.st_mode):
        raise PathRefused(f"{shown!r} is a directory, not a file", reason="is_directory", path=shown)
    if not stat.S_ISREG(st.st_mode):
        raise PathRefused(
            f"{shown!r} is a {kind_of(st.st_mode)}; only regular files are read or written",
            reason="special_file",
            path=shown,
        )


def open_regular_at(
    parent_fd: int, name: str, shown: str, *, allow_hardlinks: bool = False
) -> tuple[int, os.stat_result]:
    """Open regular file ``name`` in ``parent_fd`` for reading: never a link, FIFO or device, and
    not a file with several hard links unless ``allow_hardlinks``."""
    st = lstat_at(parent_fd, name)
    if st is None:
        raise PathMissing(f"{shown!r} does not exist")
    _require_regular(st, shown)  # before open: opening a FIFO or a device can block or act
    try:
        fd = os.open(name, _READ_FLAGS, dir_fd=parent_fd)
    except OSError as exc:
        if exc.errno == errno.ELOOP:  # swapped for a link since the lstat
            raise PathRefused(
                f"{shown!r} is a symbolic link; the file tools never follow links",
                reason="symlink",
                path=shown,
            ) from None
        raise ToolExecutionError(f"cannot open {shown!r}: {exc.strerror or exc}") from None
    try:
        st = os.fstat(fd)
        _require_regular(st, shown)  # what was opened is what counts
        if not allow_hardlinks:
            _refuse_hardlinked(st, shown, action="read")
    except BaseException:
        os.close(fd)
        raise
    return fd, st


def _check_replaceable(st: os.stat_result, shown: str, *, action: str) -> None:
    _require_regular(st, shown)
    _refuse_hardlinked(st, shown, action=action)


def _refuse_hardlinked(st: os.stat_result, shown: str, *, action: str) -> None:
    if st.st_nlink > 1:
        opt_in = " unless the operator sets allow_hardlinked_reads" if action == "read" else ""
        raise PathRefused(
            f"{shown!r} has {st.st_nlink} hard links; the file tools do not {action} a file that is also "
            f"reachable by another name (it may live outside the roots){opt_in}",
            reason="hardlink",
            path=shown,
        )


def atomic_write_at(parent_fd: int, name: str, data: bytes, shown: str) -> bool:
    """Replace (or create) ``name`` in ``parent_fd`` with ``data``, atomically and durably.

    Returns True when the file was created. A link, a special file or a multiply-linked file at the
    target is refused; the rename never follows a link.
    """
    st = lstat_at(parent_fd, name)
    if st is not None:
        _check_replaceable(st, shown, action="write")
    tmp = f".reyn-{secrets.token_hex(8)}.tmp"
    fd = os.open(tmp, _TEMP_FLAGS, 0o644, dir_fd=parent_fd)
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            if st is not None:
                os.fchmod(fd, stat.S_IMODE(st.st_mode))
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, name, src_dir_fd=parent_fd, dst_dir_fd=parent_fd)
    except BaseException:
        try:
            os.unlink(tmp, dir_fd=parent_fd)
        except OSError:
            pass
        raise
    os.fsync(parent_fd)
    return st is None


def unlink_at(parent_fd: int, name: str, shown: str) -> None:
    """Delete regular file ``name`` in ``parent_fd``: never a link, a directory or a hard-linked file."""
    st = lstat_at(parent_fd, name)
    if st is None:
        raise PathMissing(f"{shown!r} does not exist")
    _check_replaceable(st, shown, action="delete")
    os.unlink(name, dir_fd=parent_fd)
    os.fsync(parent_fd)


# --------------------------------------------------------------------------- tree walking


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
                    child = os.open(name, _DIR_FLAGS, dir_fd=fd)
                except OSError:
                    continue  # swapped for a link or removed: not entered
                try:
                    yield from visit(child, rel)
                finally:
                    os.close(child)

    yield from visit(dir_fd, ())
