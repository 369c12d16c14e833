"""The memory store: one embedded SQLite file, safe for many writers in many processes.

Durability and concurrency come from SQLite itself, configured on every connection:

- ``journal_mode=WAL`` — readers never block the writer and the writer never blocks readers;
- ``synchronous=FULL`` — a commit is on disk (the WAL is fsynced) before ``COMMIT`` returns;
- ``busy_timeout`` — a writer waits for another writer instead of failing at once;
- one ``BEGIN IMMEDIATE`` transaction per write — the write lock is taken up front, so two writers
  never deadlock upgrading a read transaction, and a write is acknowledged only after its commit.

The schema is versioned with ``PRAGMA user_version``; ``MIGRATIONS[i]`` upgrades version ``i`` to
``i + 1`` inside one transaction, so an old store is upgraded in place the first time it is opened
and a store written by a newer version is refused rather than misread. The entry types, errors and
the ``MemoryBackend`` protocol this class implements are in ``backend.py``.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from .backend import (
    MEMORY_TYPES,
    Layer,
    MemoryEntry,
    MemoryStoreError,
    PutResult,
    check_entry,
    full_layer_error,
    now_iso,
)
from .sql import COLUMNS, entries_query, update_statement

__all__ = [
    "MEMORY_TYPES",
    "MIGRATIONS",
    "SCHEMA_VERSION",
    "MemoryEntry",
    "MemoryStore",
    "MemoryStoreError",
    "PutResult",
    "now_iso",
]

MIGRATIONS: tuple[tuple[str, ...], ...] = (
    # 0 -> 1: the entries table. ``agent`` is '' for the shared layer.
    (
        """CREATE TABLE entries (
               layer TEXT NOT NULL CHECK (layer IN ('shared', 'agent')),
               agent TEXT NOT NULL DEFAULT '',
               slug TEXT NOT NULL,
               name TEXT NOT NULL,
               description TEXT NOT NULL,
               type TEXT NOT NULL CHECK (type IN ('user', 'feedback', 'project', 'reference')),
               body TEXT NOT NULL,
               created_at TEXT NOT NULL,
               updated_at TEXT NOT NULL,
               PRIMARY KEY (layer, agent, slug)
           ) WITHOUT ROWID""",
    ),
    # 1 -> 2: listing by type without a scan.
    ("CREATE INDEX entries_by_type ON entries (layer, agent, type, slug)",),
)
SCHEMA_VERSION = len(MIGRATIONS)


def _is_busy(exc: sqlite3.OperationalError) -> bool:
    text = str(exc).lower()
    return "locked" in text or "busy" in text


class MemoryStore:
    """The SQLite memory store (a ``MemoryBackend``) at ``path`` (created on first use, with its
    parent folder).

    Every operation opens its own short connection, so one store object may be used from many
    threads, and many processes may use the same file at once.
    """

    def __init__(
        self, path: str | Path, *, busy_timeout_s: float = 30.0, max_entries_per_layer: int = 10_000
    ) -> None:
        self.path = Path(path)
        self.busy_timeout_s = busy_timeout_s
        self.max_entries_per_layer = max_entries_per_layer

    @property
    def location(self) -> str:
        """The store's file."""
        return str(self.path)

    def exists(self) -> bool:
        """Whether the store's file exists."""
        return self.path.exists()

    # ------------------------------------------------------------------ connections

    def _open(self) -> sqlite3.Connection:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise MemoryStoreError(
                f"cannot create the folder of the memory store {self.path}: {exc.strerror}"
            ) from None
        deadline = time.monotonic() + self.busy_timeout_s
        while True:
            try:
                conn = sqlite3.connect(
                    self.path, timeout=self.busy_timeout_s, isolation_level=None, check_same_thread=False
                )
            except sqlite3.Error as exc:
                raise MemoryStoreError(f"cannot open the memory store {self.path}: {exc}") from None
            try:
                conn.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout_s * 1000)}")
                mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
                if str(mode).lower() != "wal":
                    raise MemoryStoreError(
                        f"the memory store {self.path} cannot use write-ahead logging "
                        f"(journal mode {mode!r}); "
                        "put it on a local filesystem"
                    )
                conn.execute("PRAGMA synchronous = FULL")
                self._migrate(conn)
                return conn
            except sqlite3.OperationalError as exc:
                conn.close()
                # Switching a brand-new file to WAL can report "locked" without waiting; retry until
                # the busy timeout is spent, like every other lock wait.
                if _is_busy(exc) and time.monotonic() < deadline:
                    time.sleep(0.01)
                    continue
                raise self._locked_or(exc) from None
            except sqlite3.DatabaseError as exc:
                conn.close()
                raise MemoryStoreError(
                    f"the memory store {self.path} is not a readable SQLite database: {exc}"
                ) from None
            except BaseException:
                conn.close()
                raise

    def _migrate(self, conn: sqlite3.Connection) -> None:
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if version == SCHEMA_VERSION:
            return
        if version > SCHEMA_VERSION:
            raise MemoryStoreError(
                f"the memory store {self.path} has schema version {version}, newer than this "
                f"reyn-tools-memory understands ({SCHEMA_VERSION}); upgrade reyn-tools-memory"
            )
        conn.execute("BEGIN IMMEDIATE")
        try:
            version = conn.execute("PRAGMA user_version").fetchone()[0]  # another process may have won
            for step in range(version, SCHEMA_VERSION):
                for statement in MIGRATIONS[step]:
                    conn.execute(statement)
            conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise

    @contextmanager
    def _connection(self) -> Iterator[sqlite3.Connection]:
        conn = self._open()
        try:
            yield conn
        except sqlite3.OperationalError as exc:
            raise self._locked_or(exc) from None
        finally:
            conn.close()

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One ``BEGIN IMMEDIATE`` transaction; committed on success, rolled back otherwise.
        Leaving the block normally means the commit has returned, i.e. the write is durable."""
        with self._connection() as conn:
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise

    def _locked_or(self, exc: sqlite3.OperationalError) -> MemoryStoreError:
        if _is_busy(exc):
            return MemoryStoreError(
                f"the memory store {self.path} stayed locked by another writer "
                f"for {self.busy_timeout_s:g} s; "
                "nothing was written — retry, or raise plugins.memory.settings.busy_timeout_s"
            )
        return MemoryStoreError(f"the memory store {self.path} failed: {exc}")

    # ------------------------------------------------------------------ reading

    def get(self, layer: Layer, agent: str, slug: str) -> MemoryEntry | None:
        """The entry, with its body, or None."""
        with self._connection() as conn:
            row = conn.execute(
                f"SELECT {COLUMNS} FROM entries WHERE layer = ? AND agent = ? AND slug = ?",
                (layer, agent, slug),
            ).fetchone()
        return MemoryEntry(*row) if row else None

    def entries(
        self, layer: Layer, agent: str, *, type: str | None = None, limit: int | None = None
    ) -> list[MemoryEntry]:
        """Entries of one layer sorted by slug, without bodies."""
        sql, params = entries_query("entries", layer, agent, type, limit, "?")
        with self._connection() as conn:
            return [MemoryEntry(*row) for row in conn.execute(sql, params)]

    def all_entries(self) -> list[MemoryEntry]:
        """Every entry of every layer, with bodies, in a stable order (for export)."""
        with self._connection() as conn:
            rows = conn.execute(f"SELECT {COLUMNS} FROM entries ORDER BY layer DESC, agent, slug").fetchall()
        return [MemoryEntry(*row) for row in rows]

    def integrity_check(self) -> str:
        """``PRAGMA integrity_check``: ``"ok"`` for an intact store."""
        with self._connection() as conn:
            return "\n".join(str(r[0]) for r in conn.execute("PRAGMA integrity_check"))

    def schema_version(self) -> int:
        """The store's ``PRAGMA user_version`` (after any migration)."""
        with self._connection() as conn:
            return int(conn.execute("PRAGMA user_version").fetchone()[0])

    # ------------------------------------------------------------------ writing

    def put(
        self, layer: Layer, agent: str, slug: str, *, name: str, description: str, type: str, body: str
    ) -> PutResult:
        """Create or update one entry in its own transaction. Returns only after the commit."""
        with self._write() as conn:
            result = self._put(conn, MemoryEntry(layer, agent, slug, name, description, type, body, "", ""))
        return result

    def put_many(self, entries: Iterable[MemoryEntry]) -> list[PutResult]:
        """Create or update many entries in ONE transaction (all or nothing), keeping their timestamps
        when they carry them (import)."""
        with self._write() as conn:
            results = [self._put(conn, e) for e in entries]
        return results

    def _put(self, conn: sqlite3.Connection, e: MemoryEntry) -> PutResult:
        check_entry(e)
        stamp = now_iso()
        updated = e.updated or stamp
        exists = conn.execute(
            "SELECT 1 FROM entries WHERE layer = ? AND agent = ? AND slug = ?", (e.layer, e.agent, e.slug)
        ).fetchone()
        if exists:
            clauses, params = update_statement(e, updated, "?")
            conn.execute(f"UPDATE entries {clauses}", params)
            return PutResult(e.slug, e.layer, "updated", updated)
        count = conn.execute(
            "SELECT count(*) FROM entries WHERE layer = ? AND agent = ?", (e.layer, e.agent)
        ).fetchone()[0]
        if count >= self.max_entries_per_layer:
            raise full_layer_error(e, count)
        conn.execute(
            f"INSERT INTO entries ({COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (e.layer, e.agent, e.slug, e.name, e.description, e.type, e.body, e.created or updated, updated),
        )
        return PutResult(e.slug, e.layer, "created", updated)

    def delete(self, layer: Layer, agent: str, slug: str) -> bool:
        """Remove one entry; True when it existed. Returns only after the commit."""
        with self._write() as conn:
            cur = conn.execute(
                "DELETE FROM entries WHERE layer = ? AND agent = ? AND slug = ?", (layer, agent, slug)
            )
            removed = cur.rowcount > 0
        return removed
