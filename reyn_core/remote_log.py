"""The operator's log of remote failures: where a remote server's or driver's own words go.

A remote MCP server's stderr, a search backend's error body, a database driver's message: text a
remote party wrote, which can carry the host's secrets in any form (plain, URL-encoded, base64,
split across lines…). No redactor can know every form, so none is tried: such text never reaches
a model. A pack tells the model *what* failed in its own wording — which server, which step, an
exit status or protocol code — and hands the raw text to ``log_remote_failure``, which writes it
to the logger ``reyn.remote.<source>`` with a short reference the model-visible message cites, so
the operator can find the details.

The same log takes the text of a local failure a model must not see either — an exception that
names the host's files or a secret's location (an approval store that cannot open, an argument-hash
key with loose permissions, a lazy handler's import error): ``log_failure`` writes the exception
with its traceback, and the model-visible message says what failed in fixed words and cites the
reference. A failure that repeats — a tool's ``available(ctx)`` raising on every listing — is logged
once per kind by a ``FailureLog`` (bounded), which cites the same reference each time.

Where the records go is the operator's choice, read from ``$REYN_REMOTE_LOG``:

- unset: the file ``remote.log`` in Reyn's user log folder — ``$XDG_STATE_HOME/reyn`` (default
  ``~/.local/state/reyn``) on Linux and other Unixes, ``~/Library/Logs/reyn`` on macOS,
  ``%LOCALAPPDATA%\\reyn\\Logs`` on Windows;
- a file path (``~`` expanded): that file;
- ``stderr``: the host process's standard error;
- ``off``: no handler of Reyn's — the records still propagate to the host's own ``logging``
  configuration (as they always do), and are lost if it has none.

A relative path is made absolute once (the file the load marks is the file written). A log file
holds what the servers wrote, secrets included: it is the user's alone, through every rotation
(``private_log_file``: opened relative to its checked folder — the user's, writable by no one
else, else refused — never through a link, mode 0600, one name). It is rotated at 10 MB, three
old files kept; the load makes the file, its three copies and their folder exist before anything
runs confined (``make_log_files``: they are the host's secret files, hidden from confined
processes, and only a file that exists can be). ``reyn doctor`` prints the destination
(``remote_log_destination``). Standard library only.
"""

from __future__ import annotations

import hashlib
import os
import secrets
import sys
import threading
from collections import OrderedDict
from collections.abc import Hashable
from pathlib import Path
from typing import TYPE_CHECKING

from .unicode_text import escape_unprintable

if TYPE_CHECKING:  # logging is imported when a record is written, not by a load that asks where
    import logging

ENV_VAR = "REYN_REMOTE_LOG"
LOGGER = "reyn.remote"
# what one record keeps of a remote party's text: enough to diagnose, bounded against a flood
MAX_RAW_CHARS = 16_000
SENT_TEXT_CHARS = 4_000
"""What a record keeps of a failure's text another process sent (an isolated plugin's worker)."""
BACKUP_COUNT = 3
"""The rotated copies a log file keeps (``remote.log.1`` .. ``.3``): they hold what it held."""

_lock = threading.Lock()
_configured: tuple[str, logging.Handler | None] | None = None


def default_log_file() -> Path:
    """``remote.log`` in the user's log folder (see the module docstring)."""
    if sys.platform == "win32":
        local = os.environ.get("LOCALAPPDATA")
        base = Path(local) if local and os.path.isabs(local) else Path.home() / "AppData" / "Local"
        return base / "reyn" / "Logs" / "remote.log"
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Logs" / "reyn" / "remote.log"
    state = os.environ.get("XDG_STATE_HOME")
    base = Path(state) if state and os.path.isabs(state) else Path.home() / ".local" / "state"
    return base / "reyn" / "remote.log"


_resolved: tuple[str, Path] | None = None
_resolve_lock = threading.Lock()


def _log_file(value: str) -> Path | None:
    """The file ``value`` names, absolute: a relative one is resolved once, against the working
    directory of the first ask, and that path kept while the value stays (the load marks it secret
    and the handler writes it: the same file, whatever the working directory is by then)."""
    global _resolved
    if value in ("stderr", "off"):
        return None
    if not value:
        return default_log_file()
    with _resolve_lock:
        if _resolved is None or _resolved[0] != value:
            _resolved = (value, Path(os.path.abspath(os.path.expanduser(value))))
        return _resolved[1]


def remote_log_file() -> Path | None:
    """The file ``reyn.remote`` records go to, or None when they go to no file of Reyn's."""
    return _log_file(os.environ.get(ENV_VAR, "").strip())


def remote_log_destination() -> str:
    """Where ``reyn.remote`` records go, in words (for ``reyn doctor``)."""
    value = os.environ.get(ENV_VAR, "").strip()
    if value == "stderr":
        return "standard error of the host process"
    if value == "off":
        return "the host's own logging configuration only"
    return f"the file {_log_file(value)}"


def _handler(value: str) -> logging.Handler | None:
    import logging

    from reyn_core.private_log_file import PrivateRotatingFileHandler

    if value == "off":
        return None
    path = _log_file(value)
    if path is None:
        return logging.StreamHandler(sys.stderr)
    return PrivateRotatingFileHandler(path, max_bytes=10_000_000, backup_count=BACKUP_COUNT)


def make_log_files() -> Path | None:
    """Check the log file ``$REYN_REMOTE_LOG`` names as the handler will use it — its folder, the
    file it opens, the rotated copies it renames (``private_files.make_private_log``: the handler's
    own checks, so the load refuses exactly what the handler would) — making the file and its copies
    exist now, and return its path (None: no file of Reyn's). The load calls this where it marks
    them secret: a confined process can only be kept from a file that exists when it starts (a cover
    is a mount on a path), and the first record may come while one runs. Raises ``OSError`` when
    the log cannot be used."""
    from reyn_core.private_files import make_private_log

    path = remote_log_file()
    if path is not None:
        make_private_log(path, BACKUP_COUNT)
    return path


def _logger(source: str) -> logging.Logger:
    """``reyn.remote.<source>``, with the handler ``$REYN_REMOTE_LOG`` names on ``reyn.remote``
    (attached once per value; a changed value replaces it)."""
    import logging

    global _configured
    value = os.environ.get(ENV_VAR, "").strip()
    key = f"{value}\0{_log_file(value)}"  # the default's folder follows $XDG_STATE_HOME
    parent = logging.getLogger(LOGGER)
    with _lock:
        if _configured is None or _configured[0] != key:
            if _configured is not None and _configured[1] is not None:
                parent.removeHandler(_configured[1])
                _configured[1].close()
            try:
                handler = _handler(value)
            except OSError as exc:
                # an unwritable log path must not turn a remote failure into a crash: say so on stderr
                handler = logging.StreamHandler(sys.stderr)
                print(f"reyn: {ENV_VAR}={value!r} cannot be opened ({exc}); using stderr", file=sys.stderr)
            if handler is not None:
                handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(levelname)s %(message)s"))
                parent.addHandler(handler)
            if parent.level == logging.NOTSET:
                parent.setLevel(logging.INFO)
            _configured = (key, handler)
    return logging.getLogger(f"{LOGGER}.{source}")


def log_remote_failure(source: str, what: str, raw: str, limit: int = MAX_RAW_CHARS) -> str:
    """Log ``raw`` — a remote party's own text — with ``what`` (Reyn's description of the failure)
    to ``reyn.remote.<source>`` and return the sentence a model-visible message ends with: where the
    operator finds the details, and the reference of this record. Never put ``raw`` in that message.

    ``source`` is a short dotted name (``mcp``, ``web.search``, ``memory.postgres``). What the
    record keeps of ``raw`` is its last ``limit`` characters, shown escaped (``shown_raw``): a line
    of it cannot pass for a record of its own, nor a control character reach a terminal.
    """
    ref = secrets.token_hex(4)
    cut = len(raw) - limit
    text = raw if cut <= 0 else f"[the first {cut} characters were cut]\n" + raw[-limit:]
    _logger(source).warning("ref=%s %s\n  | %s", ref, what, shown_raw(text.rstrip("\n") or "(no text)"))
    return f"the details are in the operator's log ({LOGGER}.{source}, ref {ref})"


def shown_raw(text: str) -> str:
    """``text`` as a record shows it: every character Python does not call printable (controls,
    format characters such as bidi overrides and zero-width ones, line and paragraph separators,
    lone surrogates…) but tab and newline as its ``\\xNN``/``\\uNNNN``/``\\UNNNNNNNN`` escape, a
    backslash doubled (so no text can pass for an escape), and each line after the first begun with
    ``  | `` — so no line of it starts like a record (a time), rewrites a terminal or reorders text.
    The character rule is ``unicode_text.escape_unprintable``, the one ``reyn``'s text output uses."""
    return "\n  | ".join(escape_unprintable(line, keep="\t") for line in text.split("\n"))


def log_failure(source: str, what: str, exc: BaseException) -> str:
    """``log_remote_failure`` for an exception: its text and traceback go to the operator's log under
    ``what``; the returned sentence (where the details are, and the record's reference) is what a
    model-visible message ends with. Never put ``exc``'s text in that message: it may name host
    paths or carry a secret."""
    import traceback

    return log_remote_failure(source, what, "".join(traceback.format_exception(exc)))


class FailureLog:
    """``log_failure`` for a failure that repeats (a check asked on every listing): the first failure
    of each ``key`` and kind (the exception's module-qualified type and its message; or the digest of
    a text already written out, such as an isolated plugin's worker sends) is logged, and the same
    reference is returned for it after. It keeps the ``keep`` kinds seen most recently, so it cannot
    grow without bound; a kind dropped and seen again is logged again."""

    def __init__(self, source: str, keep: int = 256) -> None:
        self._source = source
        self._keep = keep
        self._refs: OrderedDict[Hashable, str] = OrderedDict()
        self._lock = threading.Lock()

    def log(self, key: Hashable, what: str, failure: BaseException | str, kind: str | None = None) -> str:
        """The sentence ``log_failure(source, what, failure)`` returns (``log_remote_failure`` for a
        text), the record written only when this ``key`` has not failed this way yet (a message of
        any size is kept as its digest; ``kind``, when given, stands for the message: for one that
        differs on every failure of the same kind). The lock is held only to look up and keep the
        reference, never across the write: two first failures of one kind at once may both be written."""
        if kind is not None:
            kind_of: tuple[Hashable, ...] = (key, "kind", kind)
        elif isinstance(failure, str):
            kind_of = (key, "", _digest(failure))
        else:
            try:
                message = str(failure)
            except Exception:  # an exception whose text cannot be made: its type is its kind
                message = ""
            cls = type(failure)
            kind_of = (key, f"{cls.__module__}.{cls.__qualname__}", _digest(message))
        with self._lock:
            ref = self._refs.get(kind_of)
            if ref is not None:
                self._refs.move_to_end(kind_of)
                return ref
        if isinstance(failure, str):  # a text sent from elsewhere (a worker): a short record
            ref = log_remote_failure(self._source, what, failure, SENT_TEXT_CHARS)
        else:
            ref = log_failure(self._source, what, failure)
        with self._lock:
            self._refs[kind_of] = ref
            self._refs.move_to_end(kind_of)
            if len(self._refs) > self._keep:
                self._refs.popitem(last=False)
        return ref


def _digest(text: str) -> bytes:
    return hashlib.sha256(text.encode("utf-8", "replace")).digest()
