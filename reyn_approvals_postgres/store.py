"""``PostgresApprovalStore``: approval requests in one PostgreSQL table, shared by many hosts.

The same contract as the SQLite store (``reyn_core.host.ApprovalStore``) and the same statements
(``reyn_core.host.ApprovalStatements``); how each promise is kept here:

- **Single use** is one statement in one transaction: ``consume`` is a conditional ``UPDATE`` of
  exactly the request's row. Under READ COMMITTED a second writer of that row waits for the first
  to commit and then re-checks the condition on the new row (no longer ``approved`` with a use
  left), so of two processes racing for one approval exactly one gets a row count of 1.
- **One open request per call**: ``open_request`` takes a transaction advisory lock on the call's
  key before it looks for an open request and inserts one, so two hosts asking at once share it.
- **Time** is the gate's clock (``now``), as with SQLite: the hosts' clocks must agree (NTP).
- **Connections**: one per store and process (a forked child opens its own), with
  ``connect_timeout`` and session-wide ``statement_timeout`` / ``lock_timeout``. A connection the
  server dropped is replaced on the next operation. An unreachable server, a timeout or any driver
  error is ``ApprovalStoreUnavailable`` naming ``postgresql://host:port/db`` and the driver's class
  only; the driver's text (which can quote the user name) goes to the operator's log
  (``reyn.remote.approvals.postgres``). The gate then refuses the call: fail closed.
- **Schema**: the table is created on first use, under an advisory lock, in the DSN's
  ``search_path`` (only when ``to_regclass`` does not find it: a role with DML rights alone can use
  a table an owner made); ``reyn_approvals_schema`` holds its version and a newer one is refused.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from reyn_core import log_remote_failure
from reyn_core.host import ApprovalRecord, ApprovalStatements, ProcessConnection

try:
    import psycopg
    from psycopg.conninfo import conninfo_to_dict
    from psycopg.types.json import Jsonb
except ImportError as exc:  # pragma: no cover - a dependency of this distribution
    raise ImportError(f"the postgres approval store needs psycopg 3 ({exc.name} is not installed)") from None

T = TypeVar("T")
TABLE = "reyn_approvals"
VERSION = 1
_LOCK = 0x7265796E_61707072  # the schema lock ("reynappr"), for the first use of many hosts at once
_SCHEMA = (
    f"""CREATE TABLE IF NOT EXISTS {TABLE} (
        id text PRIMARY KEY,
        key text NOT NULL,
        components jsonb NOT NULL,
        status text NOT NULL CHECK (status IN
            ('pending', 'approved', 'denied', 'consumed', 'expired', 'voided')),
        created_at double precision NOT NULL,
        expires_at double precision NOT NULL,
        approvers jsonb NOT NULL,
        request jsonb NOT NULL,
        uses integer NOT NULL DEFAULT 1,
        decided_by text,
        decided_at double precision,
        reason text,
        closed_at double precision,
        session text,
        scoped boolean NOT NULL DEFAULT false
    )""",
    f"CREATE INDEX IF NOT EXISTS {TABLE}_key ON {TABLE} (key, status)",
    f"CREATE INDEX IF NOT EXISTS {TABLE}_open ON {TABLE} (status, expires_at)",
    "CREATE TABLE IF NOT EXISTS reyn_approvals_schema (version integer NOT NULL)",
)
# The store rules in PostgreSQL's dialect (reyn_core's one text of them, shared with every SQL store).
_SQL = ApprovalStatements(TABLE, mark="%s", same="IS NOT DISTINCT FROM")


class ApprovalStoreUnavailable(OSError):
    """The store cannot be used (unreachable, timed out, refused): the call is refused."""


def describe_dsn(dsn: str) -> str:
    """``postgresql://host:port/db``: the one way the store's location is shown. The user name and
    password are never shown; an unparsable DSN is refused without echoing it."""
    try:
        params = conninfo_to_dict(dsn)
    except psycopg.Error:
        raise ValueError(
            "the postgres approval store's connection string is not valid (not shown: it may hold a "
            "password); write it as postgresql://user@host:5432/dbname or 'host=... dbname=...'"
        ) from None
    host = str(params.get("host") or params.get("hostaddr") or os.environ.get("PGHOST") or "localhost")
    port = params.get("port") or os.environ.get("PGPORT") or "5432"
    dbname = params.get("dbname") or os.environ.get("PGDATABASE") or "(the user's default database)"
    return f"postgresql://{'(a local socket)' if host.startswith('/') else host}:{port}/{dbname}"


class PostgresApprovalStore:
    """Approval requests in the database ``dsn`` reaches (see the module docstring)."""

    def __init__(
        self,
        dsn: str,
        *,
        connect_timeout_s: int = 5,
        statement_timeout_s: float = 10.0,
        wait_s: float | None = None,
    ) -> None:
        self._location = describe_dsn(dsn)
        self._dsn = dsn
        self._connect_timeout_s = connect_timeout_s
        self._statement_ms = int(statement_timeout_s * 1000)
        # How long a call waits for this process's connection while another call uses it: one
        # connect and a couple of statements; past that the store counts as unavailable.
        self._wait_s = wait_s if wait_s is not None else connect_timeout_s + 2 * statement_timeout_s
        # one per process; a connection the server dropped (closed, or broken by an error) is replaced
        self._connection = ProcessConnection(self._connect, alive=lambda c: not (c.closed or c.broken))

    @property
    def location(self) -> str:
        return self._location

    # ------------------------------------------------------------------ connections

    def _connect(self) -> Any:
        # A dropped network must not hang the caller: keepalives notice a silent peer while waiting
        # for an answer, and tcp_user_timeout one that stops acknowledging what was sent.
        conn = psycopg.connect(
            self._dsn,
            autocommit=True,
            connect_timeout=self._connect_timeout_s,
            keepalives=1,
            keepalives_idle=5,
            keepalives_interval=2,
            keepalives_count=3,
            tcp_user_timeout=self._statement_ms,
        )
        try:
            ms = str(self._statement_ms)
            conn.execute(
                "SELECT set_config('statement_timeout', %s, false), set_config('lock_timeout', %s, false)",
                (ms, ms),
            )
            with conn.transaction():
                found: Any = conn.execute(
                    "SELECT to_regclass(%s) IS NOT NULL AND to_regclass('reyn_approvals_schema') IS NOT NULL",
                    (TABLE,),
                ).fetchone()
                if not found[0]:  # first use: DDL only now, so a role with DML rights alone can use it
                    conn.execute("SELECT pg_advisory_xact_lock(%s)", (_LOCK,))
                    for statement in _SCHEMA:
                        conn.execute(statement)
                row: Any = conn.execute("SELECT max(version) FROM reyn_approvals_schema").fetchone()
                version = row[0] if row is not None else None
                if version is None:
                    conn.execute("INSERT INTO reyn_approvals_schema VALUES (%s)", (VERSION,))
                elif version > VERSION:
                    raise ApprovalStoreUnavailable(
                        f"the approval store at {self._location} has schema version {version}, newer than "
                        f"this reyn-approvals-postgres ({VERSION}); upgrade it"
                    )
        except BaseException:
            conn.close()
            raise
        return conn

    def _run(self, what: str, op: Callable[[Any], T]) -> T:
        # one transaction at a time on this process's connection; never an unbounded wait for it
        if not self._connection.lock.acquire(timeout=self._wait_s):
            raise ApprovalStoreUnavailable(
                f"the approval store at {self._location} could not {what}: another call has held this "
                f"process's connection for over {self._wait_s:g} s (the server or network may be down)"
            )
        try:
            try:
                conn = self._connection.get()
                with conn.transaction():
                    return op(conn)
            except psycopg.Error as exc:
                state = f", SQLSTATE {exc.sqlstate}" if exc.sqlstate else ""
                where = log_remote_failure(
                    "approvals.postgres", f"{what} at {self._location} failed", str(exc)
                )
                raise ApprovalStoreUnavailable(
                    f"the approval store at {self._location} could not {what} "
                    f"({type(exc).__name__}{state}); {where}"
                ) from None
        finally:
            self._connection.lock.release()

    def disconnect(self) -> None:
        """Close this process's connection (the next operation opens one)."""
        self._connection.disconnect()

    # ------------------------------------------------------------------ the ApprovalStore methods

    def open_request(self, record: ApprovalRecord) -> ApprovalRecord:
        def op(conn: Any) -> ApprovalRecord:
            conn.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", (record.key,))
            row = conn.execute(_SQL.open_request, (record.key, record.created_at, record.session)).fetchone()
            if row is not None:
                return ApprovalRecord.from_row(row)
            conn.execute(_SQL.insert, record.request_row(Jsonb))
            return record

        return self._run("record a request", op)

    def get(self, approval_id: str) -> ApprovalRecord | None:
        def op(conn: Any) -> ApprovalRecord | None:
            row = conn.execute(_SQL.get, (approval_id,)).fetchone()
            return ApprovalRecord.from_row(row) if row is not None else None

        return self._run("read a request", op)

    def decide(self, decided: ApprovalRecord) -> ApprovalRecord | None:
        decision = decided.decision_row()

        def op(conn: Any) -> ApprovalRecord | None:
            row = conn.execute(
                f"{_SQL.decide} RETURNING {_SQL.columns}", (*decision, decided.id, decided.decided_at)
            ).fetchone()
            return ApprovalRecord.from_row(row) if row is not None else None

        return self._run("record a decision", op)

    def consume(self, approval_id: str, key: str, now: float, session: str | None = None) -> bool:
        def op(conn: Any) -> bool:  # one statement: exactly one racing caller sees a row count of 1
            return bool(conn.execute(_SQL.consume, (now, approval_id, key, now, session)).rowcount == 1)

        return self._run("take an approval", op)

    def close(self, approval_id: str, status: str, reason: str, now: float) -> bool:
        if status not in ("expired", "voided"):
            raise ValueError(f"close() moves a request to expired or voided, not {status!r}")

        def op(conn: Any) -> bool:
            return bool(conn.execute(_SQL.close, (status, reason, now, approval_id)).rowcount == 1)

        return self._run("close a request", op)

    def _records(self, what: str, sql: str, params: tuple[Any, ...] = ()) -> list[ApprovalRecord]:
        """The rows ``sql`` returns (``ApprovalRecord.columns``, in one transaction), as records."""

        def op(conn: Any) -> list[ApprovalRecord]:
            return [ApprovalRecord.from_row(r) for r in conn.execute(sql, params).fetchall()]

        return self._run(what, op)

    def expire(self, now: float) -> Sequence[ApprovalRecord]:
        return self._records(
            "expire requests",
            f"UPDATE {TABLE} SET status = 'expired', closed_at = %s "
            f"WHERE status IN ('pending', 'approved') AND expires_at <= %s RETURNING {_SQL.columns}",
            (now, now),
        )

    def end_session(self, session: str, now: float) -> Sequence[ApprovalRecord]:
        return self._records(
            "end a session's approvals",
            f"UPDATE {TABLE} SET status = 'expired', reason = 'session_ended', closed_at = %s "
            f"WHERE status = 'approved' AND scoped AND session = %s RETURNING {_SQL.columns}",
            (now, session),
        )

    def list(self, statuses: Sequence[str] | None = None) -> Sequence[ApprovalRecord]:
        if statuses:
            return self._records(
                "list requests",
                f"SELECT {_SQL.columns} FROM {TABLE} WHERE status = ANY(%s) ORDER BY created_at DESC",
                (list(statuses),),
            )
        return self._records("list requests", f"SELECT {_SQL.columns} FROM {TABLE} ORDER BY created_at DESC")


__all__ = ["ApprovalStoreUnavailable", "PostgresApprovalStore", "describe_dsn"]
