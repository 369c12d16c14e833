"""The PostgreSQL memory store: one server shared by agents on many hosts (``reyn-tools-memory[postgres]``).

Same contract as the SQLite store (``MemoryBackend``); how each promise is kept here:

- **Connections and errors**: ``postgres_connections`` (a per-process pool with timeouts on every
  connection; every driver error told in Reyn's words, the driver's text to the operator's log).
- **Writes** run in READ COMMITTED transactions. An update is one ``UPDATE`` (row lock: two writers
  of one slug queue, the last one wins, nothing is half-written). A new slug takes a transaction
  advisory lock on its layer before counting the layer and inserting, so the per-layer limit holds
  with many writers and two inserts of one slug cannot race; ``put_many`` takes its layers' locks
  up front in one order, so imports cannot deadlock each other. Serialization failures and
  deadlocks (which roll back) are retried a bounded number of times.
- **Schema**: ``postgres_schema`` (versioned migrations, run once by many hosts starting together).
- **One store per process** and configuration (``postgres_store``), so its pool and its "schema is
  current" check are shared by every call; ``close_all`` closes their pools (at exit).
"""

from __future__ import annotations

import atexit
import hashlib
import os
import threading
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from .backend import Layer, MemoryEntry, PutResult, check_entry, full_layer_error, now_iso
from .postgres_connections import PostgresConnections
from .postgres_schema import ADVISORY_NAMESPACE, ENTRIES, SCHEMA_VERSION, migrate, read_version
from .sql import COLUMNS, entries_query, update_statement

T = TypeVar("T")


class PostgresStore:
    """The PostgreSQL memory store (a ``MemoryBackend``) reached through ``dsn``.

    Use ``postgres_store(settings)``, which keeps one store (and pool) per process and DSN. Safe to
    use from many threads; many processes on many hosts may use the same database at once.
    """

    def __init__(
        self,
        dsn: str,
        *,
        connect_timeout_s: int = 5,
        statement_timeout_s: float = 30.0,
        pool_max_size: int = 4,
        max_entries_per_layer: int = 10_000,
    ) -> None:
        self._connections = PostgresConnections(
            dsn,
            connect_timeout_s=connect_timeout_s,
            statement_timeout_s=statement_timeout_s,
            pool_max_size=pool_max_size,
        )
        self.max_entries_per_layer = max_entries_per_layer
        self._ready = False
        self._schema = ""
        self._schema_lock = threading.Lock()

    @property
    def location(self) -> str:
        """``postgresql://host:port/dbname`` (never the user name or the password)."""
        return self._connections.location

    def close(self) -> None:
        """Close the pool (its connections and threads); the store opens a new one if used again."""
        self._connections.close()

    def _run(self, op: Callable[[Any], T], *, write: bool) -> T:
        """Run ``op(conn)`` in one transaction, migrating first if needed (``PostgresConnections.run``)."""
        return self._connections.run(op, write=write, prepare=self._ensure_schema)

    # ------------------------------------------------------------------ schema

    def _ensure_schema(self, conn: Any) -> None:
        if self._ready:
            return
        with self._schema_lock:
            if self._ready:
                return
            version = read_version(conn)
            if version != SCHEMA_VERSION:
                migrate(conn, self.location)
            self._schema = conn.execute("SELECT current_schema()").fetchone()[0] or ""
            self._ready = True

    def schema_version(self) -> int:
        """The store's schema version (after any migration)."""
        return self._run(read_version, write=False)

    def stored_version(self) -> int | None:
        """The schema version found in the database WITHOUT migrating (None: no store there yet).
        Connects directly (not through the pool): for ``reyn doctor``."""
        version = self._connections.read_directly(read_version)
        return version or None

    def exists(self) -> bool:
        """Whether the store's tables exist in this database (export refuses an empty server)."""
        return self.stored_version() is not None

    # ------------------------------------------------------------------ reading

    def get(self, layer: Layer, agent: str, slug: str) -> MemoryEntry | None:
        """The entry, with its body, or None."""

        def op(conn: Any) -> MemoryEntry | None:
            row = conn.execute(
                f"SELECT {COLUMNS} FROM {ENTRIES} WHERE layer = %s AND agent = %s AND slug = %s",
                (layer, agent, slug),
            ).fetchone()
            return MemoryEntry(*row) if row else None

        return self._run(op, write=False)

    def entries(
        self, layer: Layer, agent: str, *, type: str | None = None, limit: int | None = None
    ) -> list[MemoryEntry]:
        """Entries of one layer sorted by slug (byte order), without bodies."""
        sql, params = entries_query(ENTRIES, layer, agent, type, limit, "%s")
        return self._run(lambda conn: [MemoryEntry(*r) for r in conn.execute(sql, params)], write=False)

    def all_entries(self) -> list[MemoryEntry]:
        """Every entry with its body, shared layer first, then by agent and slug (one snapshot)."""
        sql = f"SELECT {COLUMNS} FROM {ENTRIES} ORDER BY layer DESC, agent, slug"
        return self._run(lambda conn: [MemoryEntry(*r) for r in conn.execute(sql)], write=False)

    # ------------------------------------------------------------------ writing

    def put(
        self, layer: Layer, agent: str, slug: str, *, name: str, description: str, type: str, body: str
    ) -> PutResult:
        """Create or update one entry in its own transaction. Returns only after the commit."""
        e = MemoryEntry(layer, agent, slug, name, description, type, body, "", "")
        check_entry(e)
        return self._run(lambda conn: self._put(conn, e, {}), write=True)

    def put_many(self, entries: Iterable[MemoryEntry]) -> list[PutResult]:
        """Create or update many entries in ONE transaction (all or nothing), keeping their timestamps
        when they carry them (import)."""
        batch = list(entries)
        for e in batch:
            check_entry(e)

        def op(conn: Any) -> list[PutResult]:
            # All the layer locks first, in one order: two imports never wait for each other in a cycle.
            for key in sorted({self._layer_key(e.layer, e.agent) for e in batch}):
                conn.execute("SELECT pg_advisory_xact_lock(%s, %s)", (ADVISORY_NAMESPACE, key))
            counts: dict[tuple[str, str], int] = {}
            return [self._put(conn, e, counts, locked=True) for e in batch]

        return self._run(op, write=True)

    def _layer_key(self, layer: str, agent: str) -> int:
        digest = hashlib.blake2b(f"{self._schema}\0{layer}\0{agent}".encode(), digest_size=4).digest()
        return int.from_bytes(digest, "big", signed=True)

    def _update(self, conn: Any, e: MemoryEntry, updated: str) -> bool:
        clauses, params = update_statement(e, updated, "%s")
        cur = conn.execute(f"UPDATE {ENTRIES} {clauses}", params)
        return bool(cur.rowcount)

    def _put(
        self, conn: Any, e: MemoryEntry, counts: dict[tuple[str, str], int], *, locked: bool = False
    ) -> PutResult:
        updated = e.updated or now_iso()
        if self._update(conn, e, updated):
            return PutResult(e.slug, e.layer, "updated", updated)
        if not locked:
            conn.execute(
                "SELECT pg_advisory_xact_lock(%s, %s)",
                (ADVISORY_NAMESPACE, self._layer_key(e.layer, e.agent)),
            )
            # Another writer may have inserted this slug while we waited for the lock.
            if self._update(conn, e, updated):
                return PutResult(e.slug, e.layer, "updated", updated)
        key = (e.layer, e.agent)
        if key not in counts:
            counts[key] = conn.execute(
                f"SELECT count(*) FROM {ENTRIES} WHERE layer = %s AND agent = %s", key
            ).fetchone()[0]
        if counts[key] >= self.max_entries_per_layer:
            raise full_layer_error(e, counts[key])
        conn.execute(
            f"INSERT INTO {ENTRIES} ({COLUMNS}) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)",
            (e.layer, e.agent, e.slug, e.name, e.description, e.type, e.body, e.created or updated, updated),
        )
        counts[key] += 1
        return PutResult(e.slug, e.layer, "created", updated)

    def delete(self, layer: Layer, agent: str, slug: str) -> bool:
        """Remove one entry; True when it existed. Returns only after the commit."""

        def op(conn: Any) -> bool:
            cur = conn.execute(
                f"DELETE FROM {ENTRIES} WHERE layer = %s AND agent = %s AND slug = %s", (layer, agent, slug)
            )
            return bool(cur.rowcount)

        return self._run(op, write=True)


# --------------------------------------------------------------------------- one store per process

_stores: dict[tuple[Any, ...], PostgresStore] = {}
_stores_lock = threading.Lock()


def postgres_store(settings: Any) -> PostgresStore:
    """The store ``settings`` configure (DSN from ``$dsn_env``), one per process and configuration,
    so its pool and its "schema is current" check are shared by every call."""
    dsn = settings.dsn()
    key = (
        os.getpid(),
        dsn,
        settings.connect_timeout_s,
        settings.statement_timeout_s,
        settings.pool_max_size,
        settings.max_entries_per_layer,
    )
    with _stores_lock:
        store = _stores.get(key)
        if store is None:
            store = _stores[key] = PostgresStore(
                dsn,
                connect_timeout_s=settings.connect_timeout_s,
                statement_timeout_s=settings.statement_timeout_s,
                pool_max_size=settings.pool_max_size,
                max_entries_per_layer=settings.max_entries_per_layer,
            )
    return store


def close_all() -> None:
    """Close every pool this process opened (at exit; tests call it between servers)."""
    with _stores_lock:
        stores = [s for k, s in _stores.items() if k[0] == os.getpid()]
        _stores.clear()
    for store in stores:
        store.close()


atexit.register(close_all)
