"""The PostgreSQL memory store: one server shared by agents on many hosts (``reyn-tools-memory[postgres]``).

Same contract as the SQLite store (``MemoryBackend``); how each promise is kept here:

- **Connections** come from a per-process ``psycopg_pool.ConnectionPool`` (checked before each use,
  so connections a server restart broke are replaced instead of failing a call). Every connection
  sets ``statement_timeout``, ``lock_timeout`` and ``idle_in_transaction_session_timeout``;
  connecting is bounded by libpq's ``connect_timeout``, waiting for a pooled connection by twice
  that. An unreachable server is ``MemoryStoreUnavailable`` naming ``host:port/db`` (never the user
  name or the password), within those bounds.
- **Errors** are told in Reyn's words (psycopg's class and SQLSTATE); the driver's and the server's
  message text, which can quote the user name or a value, goes to the operator's log only
  (``reyn.remote.memory.postgres``, see ``reyn_core.log_remote_failure``).
- **Writes** run in READ COMMITTED transactions. An update is one ``UPDATE`` (row lock: two writers
  of one slug queue, the last one wins, nothing is half-written). A new slug takes a transaction
  advisory lock on its layer before counting the layer and inserting, so the per-layer limit holds
  with many writers and two inserts of one slug cannot race; ``put_many`` takes its layers' locks
  up front in one order, so imports cannot deadlock each other. Serialization failures and
  deadlocks (which roll back) are retried a bounded number of times.
- **Schema**: ``reyn_memory_schema`` holds the version; ``MIGRATIONS[i]`` upgrades ``i`` to ``i + 1``.
  The first use in a process migrates inside one transaction holding an advisory lock, so many
  hosts starting together migrate once; a newer schema is refused. Text columns that are compared
  or sorted use ``COLLATE "C"`` — byte order, as in SQLite — and the database must be UTF8.
"""

from __future__ import annotations

import atexit
import hashlib
import logging
import os
import random
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from reyn_core import log_remote_failure

from .backend import (
    Layer,
    MemoryBackendMissing,
    MemoryEntry,
    MemoryStoreError,
    MemoryStoreUnavailable,
    PutResult,
    check_entry,
    full_layer_error,
    now_iso,
)
from .sql import COLUMNS, entries_query, update_statement

try:
    import psycopg
    from psycopg import errors as pg_errors
    from psycopg.conninfo import conninfo_to_dict
    from psycopg_pool import ConnectionPool, PoolTimeout
except ImportError as exc:  # the extra is not installed
    raise MemoryBackendMissing(
        f"the postgres memory backend needs psycopg 3 and psycopg-pool ({exc.name} is not installed); "
        "install them with: pip install 'reyn-tools-memory[postgres]'"
    ) from None

T = TypeVar("T")

ENTRIES = "reyn_memory_entries"
VERSION_TABLE = "reyn_memory_schema"
MIGRATIONS: tuple[tuple[str, ...], ...] = (
    # 0 -> 1: the entries table. ``agent`` is '' for the shared layer.
    (
        f"""CREATE TABLE {ENTRIES} (
               layer text COLLATE "C" NOT NULL CHECK (layer IN ('shared', 'agent')),
               agent text COLLATE "C" NOT NULL DEFAULT '',
               slug text COLLATE "C" NOT NULL,
               name text NOT NULL,
               description text NOT NULL,
               type text COLLATE "C" NOT NULL
                   CHECK (type IN ('user', 'feedback', 'project', 'reference')),
               body text NOT NULL,
               created_at text NOT NULL,
               updated_at text NOT NULL,
               PRIMARY KEY (layer, agent, slug)
           )""",
    ),
    # 1 -> 2: listing by type without a scan.
    (f"CREATE INDEX {ENTRIES}_by_type ON {ENTRIES} (layer, agent, type, slug)",),
)
SCHEMA_VERSION = len(MIGRATIONS)
CREATE_VERSION_TABLE = f"""CREATE TABLE IF NOT EXISTS {VERSION_TABLE} (
    singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    version integer NOT NULL
)"""

# Advisory lock keys (the two-int form): one namespace for this pack, 0 for migrations, and a hash
# of (schema, layer, agent) for "a new slug in this layer".
_NAMESPACE = int.from_bytes(hashlib.blake2b(b"reyn-tools-memory", digest_size=4).digest(), "big", signed=True)
_MIGRATION_KEY = 0
LOG_SOURCE = "memory.postgres"
MAX_ATTEMPTS = 5  # a transaction rolled back by a serialization failure or deadlock is retried this often

# The last connection error per conninfo, with when it happened: the pool connects in its own
# threads, and a caller that waits should learn why (e.g. "connection refused") as soon as it happened.
_last_connect_error: dict[str, tuple[float, psycopg.Error]] = {}
# The pool's own warnings ("error connecting in ...") would reach a host's stderr through logging's
# last-resort handler; this pack reports those failures itself. A host that configures logging still
# receives them (they propagate).
logging.getLogger("psycopg.pool").addHandler(logging.NullHandler())


class _Connection(psycopg.Connection[Any]):
    """A psycopg connection that remembers why connecting failed (see ``_last_connect_error``)."""

    @classmethod
    def connect(cls, conninfo: str = "", *args: Any, **kwargs: Any) -> Any:
        try:
            conn = super().connect(conninfo, *args, **kwargs)
        except psycopg.Error as exc:
            _last_connect_error[conninfo] = (time.monotonic(), exc)
            raise
        _last_connect_error.pop(conninfo, None)
        return conn


def describe_dsn(dsn: str) -> tuple[str, dict[str, Any]]:
    """``postgresql://host:port/dbname`` for messages, and the parsed parameters.

    The one way a DSN is shown (errors, ``reyn doctor``, the store's ``location``): scheme, host,
    port and database only. The userinfo — password *and* user name — is never shown: a token is
    often put in the user slot (``postgresql://sk-live-…@host/db``), and no test of its shape can
    tell a user name from a secret. An unparsable DSN is refused without echoing it.
    """
    try:
        params = conninfo_to_dict(dsn)
    except psycopg.Error:
        raise MemoryStoreError(
            "the PostgreSQL connection string is not valid (not shown: it may hold a password); write it "
            "as postgresql://user@host:5432/dbname or 'host=... dbname=... user=...'"
        ) from None
    host = params.get("host") or params.get("hostaddr") or os.environ.get("PGHOST") or "localhost"
    port = params.get("port") or os.environ.get("PGPORT") or "5432"
    user = params.get("user") or os.environ.get("PGUSER") or ""
    dbname = params.get("dbname") or os.environ.get("PGDATABASE") or user or "postgres"
    # libpq defaults the database to the user name: then the name is that user slot, not shown either
    shown_db = "(the user's default database)" if dbname == user and not params.get("dbname") else dbname
    shown_host = "(a local socket)" if str(host).startswith("/") else host
    return f"postgresql://{shown_host}:{port}/{shown_db}", params


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
        self._dsn = dsn
        self._location, _params = describe_dsn(dsn)
        self.connect_timeout_s = connect_timeout_s
        self.statement_timeout_s = statement_timeout_s
        self.max_entries_per_layer = max_entries_per_layer
        self._pool_max_size = pool_max_size
        self._pool: ConnectionPool[Any] | None = None
        self._ready = False
        self._schema = ""
        self._lock = threading.Lock()
        self._schema_lock = threading.Lock()

    @property
    def location(self) -> str:
        """``postgresql://host:port/dbname`` (never the user name or the password)."""
        return self._location

    # ------------------------------------------------------------------ connections

    def _connect_kwargs(self) -> dict[str, Any]:
        return {
            "connect_timeout": self.connect_timeout_s,
            "application_name": "reyn-tools-memory",
            # A server that vanished without closing the socket is noticed, not waited for forever.
            "keepalives": 1,
            "keepalives_idle": 30,
            "keepalives_interval": 10,
            "keepalives_count": 3,
        }

    def _configure(self, conn: Any) -> None:
        ms = str(int(self.statement_timeout_s * 1000))
        conn.autocommit = True
        conn.execute(
            "SELECT set_config('statement_timeout', %s, false), set_config('lock_timeout', %s, false), "
            "set_config('idle_in_transaction_session_timeout', %s, false)",
            (ms, ms, str(int(self.statement_timeout_s * 2000))),
        )

    def _get_pool(self) -> ConnectionPool[Any]:
        with self._lock:
            if self._pool is None:
                self._pool = ConnectionPool(
                    self._dsn,
                    connection_class=_Connection,
                    kwargs=self._connect_kwargs(),
                    min_size=0,
                    max_size=self._pool_max_size,
                    open=True,
                    configure=self._configure,
                    check=ConnectionPool.check_connection,
                    timeout=2.0 * self.connect_timeout_s,
                    reconnect_timeout=2.0 * self.connect_timeout_s,
                    max_idle=60.0,
                    num_workers=1,
                    name=f"reyn-memory {self._location}",
                )
            return self._pool

    def close(self) -> None:
        """Close the pool (its connections and threads); the store opens a new one if used again."""
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.close(timeout=2.0)

    def _report(self, what: str, exc: BaseException | None) -> str:
        """``what`` (Reyn's words); the driver's own message — which can quote the user name, the
        host's settings or a value — goes to the operator's log only (``reyn.remote.memory.postgres``)."""
        if exc is None:
            return what
        raw = f"{type(exc).__name__}: {exc}"
        return f"{what}; {log_remote_failure(LOG_SOURCE, f'{self._location}: {what}', raw)}"

    def _unreachable(
        self, reason: str, outcome: str = "nothing was read or written", exc: BaseException | None = None
    ) -> MemoryStoreUnavailable:
        return MemoryStoreUnavailable(
            self._report(
                f"the PostgreSQL memory store {self._location} is unavailable: {reason}; "
                f"{outcome} — check that the server is running and reachable, then retry",
                exc,
            )
        )

    @contextmanager
    def _connection(self) -> Iterator[Any]:
        """A pooled connection, checked alive. When none comes, ``MemoryStoreUnavailable`` says why —
        as soon as an attempt made during this wait has failed (refused, timed out, bad password),
        not only when the whole wait is spent."""
        pool = self._get_pool()
        started = time.monotonic()
        deadline = started + 2.0 * self.connect_timeout_s
        while True:
            try:
                conn = pool.getconn(timeout=max(0.01, min(0.25, deadline - time.monotonic())))
                break
            except PoolTimeout:
                failed = _last_connect_error.get(self._dsn)
                if failed is not None and failed[0] >= started:
                    raise self._unreachable(driver_reason(failed[1]), exc=failed[1]) from None
                if time.monotonic() >= deadline:
                    raise self._unreachable(
                        f"no connection within {2 * self.connect_timeout_s} s (all "
                        f"{self._pool_max_size} of this process's connections are busy, or connecting hangs)"
                    ) from None
        try:
            yield conn
        finally:
            pool.putconn(conn)  # rolls back what is left open; a broken connection is replaced

    def _run(self, op: Callable[[Any], T], *, write: bool) -> T:
        """Run ``op(conn)`` in one transaction (migrating first if needed); retry rollbacks the server
        asks for; translate every driver error into a ``MemoryStoreError``."""
        what = "the write was not acknowledged and may not have been applied" if write else "nothing was read"
        for attempt in range(1, MAX_ATTEMPTS + 1):
            try:
                with self._connection() as conn:
                    self._ensure_schema(conn)
                    with conn.transaction():
                        return op(conn)
            except (pg_errors.SerializationFailure, pg_errors.DeadlockDetected) as exc:
                if attempt == MAX_ATTEMPTS:
                    raise MemoryStoreError(
                        f"the PostgreSQL memory store {self._location} rolled the transaction back "
                        f"{MAX_ATTEMPTS} times ({exc.sqlstate}: concurrent writers); "
                        "nothing was written — retry"
                    ) from None
                time.sleep(random.uniform(0, 0.02 * 2**attempt))
            except pg_errors.QueryCanceled:
                raise MemoryStoreError(
                    f"the PostgreSQL memory store {self._location} did not answer within "
                    f"{self.statement_timeout_s:g} s (statement_timeout_s); {what} — retry, or raise "
                    "plugins.memory.settings.statement_timeout_s"
                ) from None
            except (pg_errors.LockNotAvailable, pg_errors.IdleInTransactionSessionTimeout) as exc:
                raise MemoryStoreError(
                    f"the PostgreSQL memory store {self._location} waited too long for a lock "
                    f"({exc.sqlstate}); {what} — retry"
                ) from None
            except psycopg.OperationalError as exc:
                raise self._unreachable(driver_reason(exc), what, exc) from None
            except psycopg.Error as exc:
                raise MemoryStoreError(
                    self._report(
                        f"the PostgreSQL memory store {self._location} failed: {driver_reason(exc)}", exc
                    )
                ) from None
        raise AssertionError("unreachable")  # pragma: no cover

    # ------------------------------------------------------------------ schema

    def _ensure_schema(self, conn: Any) -> None:
        if self._ready:
            return
        with self._schema_lock:
            if self._ready:
                return
            version = self._read_version(conn)
            if version != SCHEMA_VERSION:
                self._migrate(conn)
            self._schema = conn.execute("SELECT current_schema()").fetchone()[0] or ""
            self._ready = True

    @staticmethod
    def _read_version(conn: Any) -> int:
        """The stored schema version, 0 when there is no store in this database (search_path) yet."""
        if conn.execute("SELECT to_regclass(%s)", (VERSION_TABLE,)).fetchone()[0] is None:
            return 0
        row = conn.execute(f"SELECT version FROM {VERSION_TABLE}").fetchone()
        return int(row[0]) if row else 0

    def _newer(self, version: int) -> MemoryStoreError:
        return MemoryStoreError(
            f"the PostgreSQL memory store {self._location} has schema version {version}, newer than this "
            f"reyn-tools-memory understands ({SCHEMA_VERSION}); upgrade reyn-tools-memory on this host"
        )

    def _migrate(self, conn: Any) -> None:
        with conn.transaction():
            # Every host that starts now queues here; the first migrates, the others find it done.
            conn.execute("SELECT pg_advisory_xact_lock(%s, %s)", (_NAMESPACE, _MIGRATION_KEY))
            encoding = conn.execute("SHOW server_encoding").fetchone()[0]
            if str(encoding).upper() not in ("UTF8", "UTF-8"):
                raise MemoryStoreError(
                    f"the database of the PostgreSQL memory store {self._location} uses encoding "
                    f"{encoding}; the store needs UTF8 (CREATE DATABASE ... ENCODING 'UTF8')"
                )
            conn.execute(CREATE_VERSION_TABLE)
            version = self._read_version(conn)
            if version > SCHEMA_VERSION:
                raise self._newer(version)
            for step in range(version, SCHEMA_VERSION):
                for statement in MIGRATIONS[step]:
                    conn.execute(statement)
            conn.execute(
                f"INSERT INTO {VERSION_TABLE} (singleton, version) VALUES (true, %s) "
                "ON CONFLICT (singleton) DO UPDATE SET version = EXCLUDED.version",
                (SCHEMA_VERSION,),
            )

    def schema_version(self) -> int:
        """The store's schema version (after any migration)."""
        return self._run(self._read_version, write=False)

    def stored_version(self) -> int | None:
        """The schema version found in the database WITHOUT migrating (None: no store there yet).
        Connects directly (not through the pool): for ``reyn doctor``."""
        try:
            with _Connection.connect(self._dsn, autocommit=True, **self._connect_kwargs()) as conn:
                version = self._read_version(conn)
        except psycopg.OperationalError as exc:
            raise self._unreachable(driver_reason(exc), exc=exc) from None
        except psycopg.Error as exc:
            raise MemoryStoreError(
                self._report(
                    f"the PostgreSQL memory store {self._location} failed: {driver_reason(exc)}", exc
                )
            ) from None
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
                conn.execute("SELECT pg_advisory_xact_lock(%s, %s)", (_NAMESPACE, key))
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
                "SELECT pg_advisory_xact_lock(%s, %s)", (_NAMESPACE, self._layer_key(e.layer, e.agent))
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


def driver_reason(exc: BaseException) -> str:
    """A driver error in Reyn's words: psycopg's class (named after the SQLSTATE, e.g.
    ``InvalidPassword``) and the SQLSTATE code — never the server's or libpq's message text. A
    connection that failed before any server answered has no SQLSTATE."""
    state = getattr(exc, "sqlstate", None)
    if state:
        return f"{type(exc).__name__} (SQLSTATE {state})"
    if isinstance(exc, psycopg.OperationalError):
        return "no connection could be made (refused, unreachable, timed out, or rejected before login)"
    return type(exc).__name__


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
