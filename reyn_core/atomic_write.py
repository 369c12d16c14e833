"""Writing a file atomically: a temporary file in the same folder, flushed to disk, then renamed."""

from __future__ import annotations

import os
from pathlib import Path


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes, *, durable: bool = True) -> None:
    """Write ``data`` to ``path`` so a reader sees the old bytes or the new ones, never a mix; a crash
    leaves no partial file. Raises ``OSError`` (nothing is left behind).

    ``durable=False`` skips the flush to disk before the rename: a running reader still sees old or
    new bytes, but after a power loss (or an operating-system crash) the file may be empty or hold
    other bytes. Only for a file whose every reader checks its content (a checksum) and treats a
    mismatch like a missing file."""
    import tempfile  # here, not at import: importing it costs more than most callers' whole read path

    target = Path(path)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
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
