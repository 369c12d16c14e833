"""``SqliteApprovalStore``: the default approval store, one SQLite file (standard library), kept to
the store contract ``reyn_core.host.ApprovalStore``.

Every method runs one ``BEGIN IMMEDIATE`` transaction on the process's connection, so several
processes (an agent, ``reyn approvals approve`` in a terminal, a second agent) share the file
safely: SQLite serialises writers, and ``consume`` is a single conditional ``UPDATE`` whose row
count says whether this caller took the use. The file is created ``0600``, and a file (or WAL)
another user could write is refused, since a row there is trusted as a decision; it holds digests and a
redacted view of each call, never an argument in clear when the schema marks it secret.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from reyn_core.host import ApprovalRecord, ApprovalStatements, ProcessConnection

_SCHEMA = """
CREATE TABLE IF NOT EXISTS approvals (
    id TEXT PRIMARY KEY,
    key TEXT NOT NULL,
    components TEXT NOT NULL,
    status TEXT NOT NULL,
    created_at REAL NOT NULL,
    expires_at REAL NOT NULL,
    approvers TEXT NOT NULL,
    request TEXT NOT NULL,
    uses INTEGER NOT NULL DEFAULT 1,
    decided_by TEXT,
    decided_at REAL,
    reason TEXT,
    closed_at REAL,
    session TEXT,
    scoped INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS approvals_key ON approvals (key, status);
"""
# Columns added after the first release of the table (a file written before them gains them).
_ADDED = (("session", "TEXT"), ("scoped", "INTEGER NOT NULL DEFAULT 0"))
# The store rules in SQLite's dialect (reyn_core's one text of them, shared with every SQL store).
_SQL = ApprovalStatements("approvals", mark="?", same="IS")


def _private(st: os.stat_result, path: Path) -> None:
    """Refuse a store file another user could have written: an approval row is trusted as the
    decision it records, so the file (and its WAL and shared-memory files) must be a regular file
    owned by this process's user and writable by no one else (like ssh's StrictModes)."""
    import stat

    why = None
    if not stat.S_ISREG(st.st_mode):
        why = "is not a regular file"
    elif hasattr(os, "geteuid") and st.st_uid != os.geteuid():
        why = f"is owned by uid {st.st_uid}, not by this process's user"
    elif st.st_mode & 0o022:
        why = f"is writable by its group or others (mode {stat.S_IMODE(st.st_mode):o})"
    if why is not None:
        raise PermissionError(
            f"the approval store {path} {why}: anyone who can write it can approve calls; "
            "make it the process user's own with mode 0600 (or remove it)"
        )


class SqliteApprovalStore:
    """Approval requests in the SQLite file at ``path`` (created with its table on first use)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        # One connection per store and process, kept open: closing the last connection of a WAL
        # database checkpoints it (fsyncs), which would cost every operation several milliseconds.
        self._connection = ProcessConnection(self._connect)

    def _connect(self) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o600)
        try:
            _private(os.fstat(fd), self.path)
        finally:
            os.close(fd)
        for side in ("-wal", "-shm"):  # SQLite's own files beside it are trusted as much as the file
            try:
                _private(os.lstat(f"{self.path}{side}"), Path(f"{self.path}{side}"))
            except FileNotFoundError:
                pass
        conn = sqlite3.connect(self.path, timeout=30.0, isolation_level=None, check_same_thread=False)
        # WAL: readers never wait for a writer, and a commit is one fsync of the log (still durable:
        # synchronous stays FULL). One host's processes share it; not for a network file system.
        conn.execute("PRAGMA journal_mode=WAL")
        conn.executescript(_SCHEMA)
        present = {row[1] for row in conn.execute("PRAGMA table_info(approvals)")}
        for name, kind in _ADDED:
            if name not in present:
                conn.execute(f"ALTER TABLE approvals ADD COLUMN {name} {kind}")
        return conn

    @contextmanager
    def _transaction(self, *, write: bool = True) -> Iterator[sqlite3.Connection]:
        # the gate calls from worker threads: one transaction at a time per store
        with self._connection.lock:
            conn = self._connection.get()
            conn.execute("BEGIN IMMEDIATE" if write else "BEGIN")
            try:
                yield conn
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")

    @property
    def location(self) -> str:
        return str(self.path)

    def disconnect(self) -> None:
        """Close this process's connection (it reopens on the next operation)."""
        self._connection.disconnect()

    def open_request(self, record: ApprovalRecord) -> ApprovalRecord:
        with self._transaction() as db:
            row = db.execute(_SQL.open_request, (record.key, record.created_at, record.session)).fetchone()
            if row is not None:
                return ApprovalRecord.from_row(row)
            db.execute(
                _SQL.insert,
                record.request_row(lambda value: json.dumps(value, sort_keys=True, ensure_ascii=False)),
            )
            return record

    def get(self, approval_id: str) -> ApprovalRecord | None:
        with self._transaction(write=False) as db:
            row = db.execute(_SQL.get, (approval_id,)).fetchone()
        return ApprovalRecord.from_row(row) if row is not None else None

    def decide(self, decided: ApprovalRecord) -> ApprovalRecord | None:
        decision = decided.decision_row()
        with self._transaction() as db:
            changed = db.execute(_SQL.decide, (*decision, decided.id, decided.decided_at)).rowcount
            if changed != 1:
                return None
            row = db.execute(_SQL.get, (decided.id,)).fetchone()
        return ApprovalRecord.from_row(row)

    def consume(self, approval_id: str, key: str, now: float, session: str | None = None) -> bool:
        with self._transaction() as db:  # one statement: its row count is 1 for exactly one caller
            return db.execute(_SQL.consume, (now, approval_id, key, now, session)).rowcount == 1

    def close(self, approval_id: str, status: str, reason: str, now: float) -> bool:
        if status not in ("expired", "voided"):
            raise ValueError(f"close() moves a request to expired or voided, not {status!r}")
        with self._transaction() as db:
            return db.execute(_SQL.close, (status, reason, now, approval_id)).rowcount == 1

    def expire(self, now: float) -> Sequence[ApprovalRecord]:
        due = "WHERE status IN ('pending', 'approved') AND expires_at <= ?"
        with self._transaction(write=False) as db:  # the common case: nothing is due, no write
            if db.execute(f"SELECT 1 FROM approvals {due} LIMIT 1", (now,)).fetchone() is None:
                return []
        with self._transaction() as db:
            rows = db.execute(f"SELECT {_SQL.columns} FROM approvals {due}", (now,)).fetchall()
            if rows:
                db.execute(f"UPDATE approvals SET status = 'expired', closed_at = ? {due}", (now, now))
        return [ApprovalRecord.from_row(r) for r in rows]

    def end_session(self, session: str, now: float) -> Sequence[ApprovalRecord]:
        ended = "WHERE status = 'approved' AND scoped = 1 AND session = ?"
        with self._transaction() as db:
            rows = db.execute(f"SELECT {_SQL.columns} FROM approvals {ended}", (session,)).fetchall()
            if rows:
                db.execute(
                    "UPDATE approvals SET status = 'expired', reason = 'session_ended', closed_at = ? "
                    + ended,
                    (now, session),
                )
        return [ApprovalRecord.from_row(r) for r in rows]

    def list(self, statuses: Sequence[str] | None = None) -> Sequence[ApprovalRecord]:
        with self._transaction(write=False) as db:
            if statuses:
                marks = ", ".join("?" for _ in statuses)
                rows = db.execute(
                    f"SELECT {_SQL.columns} FROM approvals WHERE status IN ({marks}) "
                    "ORDER BY created_at DESC",
                    tuple(statuses),
                ).fetchall()
            else:
                rows = db.execute(f"SELECT {_SQL.columns} FROM approvals ORDER BY created_at DESC").fetchall()
        return [ApprovalRecord.from_row(r) for r in rows]


__all__ = ["SqliteApprovalStore"]
