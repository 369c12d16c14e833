"""The PostgreSQL approval store against a real server, directly: a call never waits unboundedly for
this process's connection (a held connection makes the next call unavailable, failing closed, and
the store serves again once it is free), and a role with DML rights alone uses a table its owner
made (no DDL on connect)."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
from approval_records import pending_record

pytest.importorskip("psycopg")
from reyn_approvals_postgres.store import ApprovalStoreUnavailable, PostgresApprovalStore


def _waiting_on_advisory_lock(server: Any) -> bool:
    with server.admin() as conn:
        row = conn.execute(
            "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted"
        ).fetchone()
    return bool(row and row[0])


def test_a_call_waiting_for_a_held_connection_is_refused_unavailable(postgres_server):
    dsn = postgres_server.dsn(schema=postgres_server.new_schema("wait"))
    store = PostgresApprovalStore(dsn, statement_timeout_s=60, wait_s=0.5)
    assert store.list() == []  # connected, table made
    blocker = postgres_server.admin()
    # another host holds the call's key lock: this process's open_request waits on it, holding the
    # process's one connection (as a call does while the network is silent)
    blocker.execute("BEGIN")
    blocker.execute("SELECT pg_advisory_xact_lock(hashtextextended('k1', 0))")
    done: list[Any] = []
    first = threading.Thread(target=lambda: done.append(store.open_request(pending_record("k1"))))
    first.start()
    deadline = time.monotonic() + 30
    while not _waiting_on_advisory_lock(postgres_server):
        assert time.monotonic() < deadline and first.is_alive()
        time.sleep(0.05)
    with pytest.raises(ApprovalStoreUnavailable, match="held this process's connection"):
        store.get("apr-k1")  # fail closed, with the reason, instead of waiting forever
    blocker.execute("COMMIT")
    blocker.close()
    first.join(60)
    assert [r.id for r in done] == ["apr-k1"]
    # positive control: with the connection free the same store serves at once
    assert store.get("apr-k1") is not None and store.get("apr-k1").status == "pending"
    store.disconnect()


def test_a_role_with_dml_rights_alone_uses_the_owners_table(postgres_server):
    schema = postgres_server.new_schema("dml")
    owner = PostgresApprovalStore(postgres_server.dsn(schema=schema))
    assert owner.list() == []  # the owner's first use made the tables
    owner.disconnect()
    role = f"dml_{schema}"
    with postgres_server.admin() as conn:
        conn.execute(f"CREATE ROLE \"{role}\" LOGIN PASSWORD 'dml-pw'")
        conn.execute(f'GRANT USAGE ON SCHEMA "{schema}" TO "{role}"')
        conn.execute(f'GRANT SELECT, INSERT, UPDATE ON ALL TABLES IN SCHEMA "{schema}" TO "{role}"')
    dsn = f"postgresql://{role}:dml-pw@127.0.0.1:{postgres_server.port}/postgres?options=-csearch_path%3D{schema}"
    store = PostgresApprovalStore(dsn)
    opened = store.open_request(pending_record("k2"))
    assert store.get(opened.id) is not None and [r.id for r in store.list()] == [opened.id]
    store.disconnect()
    # the control: the same role cannot create anything there, so no DDL ran on its connect
    import psycopg

    with psycopg.connect(dsn, autocommit=True) as conn, pytest.raises(psycopg.errors.InsufficientPrivilege):
        conn.execute("CREATE TABLE probe (x int)")
