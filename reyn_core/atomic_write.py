"""Writing a file atomically: a temporary file in the target's folder, flushed to disk, then renamed
over the target — the one writer of every file Reyn replaces (the profile, the lock, the MCP
snapshot, an MCP client's configuration, the private caches).

A rename replaces a directory entry, so by itself it would drop what the old file was: a symbolic
link would become a regular file (the real file keeping the old bytes) and the mode would become the
temporary file's. This writer keeps that identity by construction: it resolves the path to the file
a link names and writes there, and gives the new file the old one's mode (owner and group too, when
allowed) — or, for a new file, the mode any new file gets (``0o666`` less the umask). A private file
(``private=True``) is the exception on purpose: always ``0o600``, and a link at its path is replaced,
never written through, so a secret is never written where a link chose.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

# O_NOFOLLOW: the temporary name is ours; O_EXCL already refuses any entry there, link or not.
_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


def atomic_write_bytes(
    path: str | os.PathLike[str],
    data: bytes,
    *,
    durable: bool = True,
    private: bool = False,
    through_link: bool = False,
) -> None:
    """Write ``data`` to ``path`` so a reader sees the old bytes or the new ones, never a mix; a crash
    leaves no partial file. Raises ``OSError`` (nothing is left behind).

    The file keeps its identity: an existing file keeps its mode (and its owner and group where this
    user may set them); a new file gets ``0o666`` less the umask, as ``open()`` would give it. A
    symbolic link at ``path`` is replaced by the file, never followed — a link planted in a cloned
    project (``reyn.lock -> ~/.bashrc``) cannot choose what is overwritten — unless ``through_link``:
    then the file the link names (when it exists) is replaced and the link stays. Pass it only for a
    file the caller has just read and parsed through the same path (the profile it edits, an MCP
    client's configuration it merges into), so what a link names is known to be that kind of file.
    ``private=True``, for what only this user may read (a key, a trusted cache): the file is always
    mode ``0o600`` and a link at ``path`` is itself replaced, not followed.

    ``durable=False`` skips the flush to disk before the rename: a running reader still sees old or
    new bytes, but after a power loss (or an operating-system crash) the file may be empty or hold
    other bytes. Only for a file whose every reader checks its content (a checksum) and treats a
    mismatch like a missing file."""
    # a dangling link is replaced too: nothing was read through it, so nothing says what it names
    follow = through_link and not private and os.path.exists(path)
    target = Path(os.path.realpath(path)) if follow else Path(path)
    try:
        old = None if private else (os.stat(target) if follow else os.lstat(target))
    except FileNotFoundError:
        old = None
    fd, tmp = _create_beside(target, 0o600 if private else 0o666)
    try:
        with os.fdopen(fd, "wb") as f:
            if private and hasattr(os, "fchmod"):
                os.fchmod(f.fileno(), 0o600)  # whatever the umask: a private file is this user's alone
            elif old is not None and stat.S_ISREG(old.st_mode):
                _keep_identity(f.fileno(), old)
            f.write(data)
            f.flush()
            if durable:
                os.fsync(f.fileno())
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _create_beside(target: Path, mode: int) -> tuple[int, str]:
    """A new temporary file in ``target``'s folder, made with ``mode`` (the umask applies, as for
    any new file). ``tempfile.mkstemp`` cannot be used: it always makes ``0o600``."""
    import secrets  # here, not at import: most callers' whole read path costs less

    for _ in range(100):
        tmp = os.path.join(target.parent, f".{target.name}.{secrets.token_hex(6)}.tmp")
        try:
            return os.open(tmp, _CREATE, mode), tmp
        except FileExistsError:
            continue
    raise FileExistsError(f"no unused temporary name beside {target}")


def _keep_identity(fd: int, old: os.stat_result) -> None:
    """Give the new file the old one's owner, group and mode. The owner and group are best effort
    (only root may give a file away; a group this user is not in is refused): the file is then
    this user's, as any file they write. The mode is set after, as a change of owner may clear it."""
    if not hasattr(os, "fchown"):  # Windows: no owners or POSIX modes to keep
        return
    try:
        os.fchown(fd, old.st_uid, old.st_gid)
    except OSError:
        pass
    os.fchmod(fd, stat.S_IMODE(old.st_mode))
