"""Connections to the PostgreSQL memory store, and the driver's errors in Reyn's words.

- **Connections** come from a per-process ``psycopg_pool.ConnectionPool`` (checked before each use,
  so connections a server restart broke are replaced instead of failing a call). Every connection
  sets ``statement_timeout``, ``lock_timeout`` and ``idle_in_transaction_session_timeout``;
  connecting is bounded by libpq's ``connect_timeout``, waiting for a pooled connection by twice
  that. An unreachable server is ``MemoryStoreUnavailable`` naming ``host:port/db`` (never the user
  name or the password), within those bounds.
- **Errors** are told in Reyn's words (psycopg's class and SQLSTATE); the driver's and the server's
  message text, which can quote the user name or a value, goes to the operator's log only
  (``reyn.remote.memory.postgres``, see ``reyn_core.log_remote_failure``).
- **Transactions** rolled back by the server (serialization failures and deadlocks) are retried a
  bounded number of times.

The store's one module that imports psycopg: without the ``[postgres]`` extra, importing it (and so
``postgres``) is ``MemoryBackendMissing``.
"""

from __future__ import annotations

import logging
import os
import random
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from reyn_core import log_remote_failure

from .backend import MemoryBackendMissing, MemoryStoreError, MemoryStoreUnavailable

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


class PostgresConnections:
    """The pooled connections of one store (``dsn``, shown as ``location``), and the one way an
    operation runs on them: ``run``, one transaction. The pool is opened on first use."""

    def __init__(
        self, dsn: str, *, connect_timeout_s: int, statement_timeout_s: float, pool_max_size: int
    ) -> None:
        self._dsn = dsn
        self._location, _params = describe_dsn(dsn)
        self.connect_timeout_s = connect_timeout_s
        self.statement_timeout_s = statement_timeout_s
        self._pool_max_size = pool_max_size
        self._pool: ConnectionPool[Any] | None = None
        self._lock = threading.Lock()

    @property
    def location(self) -> str:
        """``postgresql://host:port/dbname`` (never the user name or the password)."""
        return self._location

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

    def run(self, op: Callable[[Any], T], *, write: bool, prepare: Callable[[Any], None]) -> T:
        """Run ``op(conn)`` in one transaction (``prepare(conn)`` first: the store migrates there if
        needed); retry rollbacks the server asks for; translate every driver error into a
        ``MemoryStoreError``."""
        what = "the write was not acknowledged and may not have been applied" if write else "nothing was read"
        for attempt in range(1, MAX_ATTEMPTS + 1):
            try:
                with self._connection() as conn:
                    prepare(conn)
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
                raise self._failed(exc) from None
        raise AssertionError("unreachable")  # pragma: no cover

    def read_directly(self, op: Callable[[Any], T]) -> T:
        """``op(conn)`` on a connection of its own (not the pool's, no transaction, nothing
        prepared): for ``reyn doctor``, which must not migrate. Driver errors as in ``run``."""
        try:
            with _Connection.connect(self._dsn, autocommit=True, **self._connect_kwargs()) as conn:
                return op(conn)
        except psycopg.OperationalError as exc:
            raise self._unreachable(driver_reason(exc), exc=exc) from None
        except psycopg.Error as exc:
            raise self._failed(exc) from None

    def _failed(self, exc: BaseException) -> MemoryStoreError:
        return MemoryStoreError(
            self._report(f"the PostgreSQL memory store {self._location} failed: {driver_reason(exc)}", exc)
        )


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
