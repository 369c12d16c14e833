"""A log file only its user can read, however its folder is set up: the remote failure log's files.

The stock ``RotatingFileHandler`` opens its file by path, following links, with the umask's mode,
and renames by path: after a rotation the new file was 0644, and a link or file planted at a name
of a folder others can write (or between a check and the open) received the records. Here the
folder is opened once and checked (``open_private_folder``: owned by the user, writable by no one
else — like ssh's StrictModes); every file is opened relative to that open folder, never following a
link, created 0600 and set 0600, and checked after the open (``open_private_file``: a regular file
of the user's with one name); a rotation renames within the open folder and reopens the same way.
Whatever the folder's path names later (a link swapped in a parent), the handler writes into the
folder it checked. A file or folder that fails a check is refused with ``LogFileRefused``, which
says what to fix; a record the log refuses goes to standard error (as when the load refused the log,
``RC013``), the refusal said once — a log's failure never fails the caller. Standard library only.
"""

from __future__ import annotations

import os
import sys
from io import TextIOWrapper
from itertools import pairwise
from logging import LogRecord
from logging.handlers import RotatingFileHandler
from pathlib import Path

from reyn_core.private_files import (
    LogFileRefused,
    log_names,
    open_private_file,
    open_private_folder,
    rotation_sources,
)


class PrivateRotatingFileHandler(RotatingFileHandler):
    """``RotatingFileHandler`` whose every open and rename goes through the checked, open folder
    (see the module docstring). Its folder is checked when it is made (``LogFileRefused`` then)."""

    def __init__(self, path: Path, *, max_bytes: int, backup_count: int) -> None:
        self._log_folder = path.parent
        self._file_name = path.name
        self._dir_fd = open_private_folder(self._log_folder)
        self._told = False
        try:
            super().__init__(
                path,
                maxBytes=max_bytes,
                backupCount=backup_count,
                encoding="utf-8",
                errors="backslashreplace",
            )
        except BaseException:
            self._close_folder()
            raise

    def _open(self) -> TextIOWrapper:
        fd = open_private_file(self._log_folder, self._dir_fd, self._file_name)
        return open(fd, "a", encoding=self.encoding, errors=self.errors)

    def doRollover(self) -> None:
        """Rename ``name.{n}`` to ``name.{n+1}`` and ``name`` to ``name.1`` within the open folder
        (a rename replaces a link at its target, never writes through it; a link at a source is
        refused), then reopen ``name`` as ``_open`` does."""
        if self.stream:
            self.stream.close()
            self.stream = None
        names = log_names(self._file_name, self.backupCount)
        # every source checked before anything moves (a refusal moves nothing): the load's own rule
        present = rotation_sources(self._log_folder, self._dir_fd, names)
        for older, newer in reversed(list(pairwise(names))):
            if older in present:
                if self._dir_fd is not None:
                    os.replace(older, newer, src_dir_fd=self._dir_fd, dst_dir_fd=self._dir_fd)
                else:
                    os.replace(self._log_folder / older, self._log_folder / newer)
        if not self.delay:
            self.stream = self._open()

    def handleError(self, record: LogRecord) -> None:
        """A record the log refused (a file or folder failed a check, at an open or a rotation) goes
        to standard error, where a log refused at the load sends its records; the operator is told
        why once per handler. Any other failure is reported as the stdlib does and the record dropped."""
        exc = sys.exc_info()[1]
        if isinstance(exc, LogFileRefused):
            if not self._told:
                self._told = True
                print(
                    f"reyn: the remote failure log refused a record ({exc}); standard error has it",
                    file=sys.stderr,
                )
            try:
                print(self.format(record), file=sys.stderr)
            except Exception:  # a log's failure never fails the caller
                pass
            return
        super().handleError(record)

    def close(self) -> None:
        try:
            super().close()
        finally:
            self._close_folder()

    def _close_folder(self) -> None:
        if self._dir_fd is not None:
            os.close(self._dir_fd)
            self._dir_fd = None
