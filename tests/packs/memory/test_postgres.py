"""What only the PostgreSQL backend has: a server that can be down, slow or restarted, a DSN with a
secret, schema migrations shared by many hosts, a driver that may be missing, and ``reyn doctor``."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable

import pytest
from reyn_tools_memory import MemorySettings, MemoryStoreError, PostgresStore
from reyn_tools_memory.diagnostics import diagnostics
from reyn_tools_memory.postgres_schema import ENTRIES, MIGRATIONS, SCHEMA_VERSION, VERSION_TABLE
from reyn_tools_memory.testing import TemporaryPostgres, free_port

DEADLINE_S = 60
ENV = "REYN_TEST_PG_DSN"


@pytest.fixture
def fresh(pg_server, monkeypatch):
    """``(schema, dsn)`` of a new, empty schema; the DSN is also in $REYN_TEST_PG_DSN."""
    schema = pg_server.new_schema("only")
    dsn = pg_server.dsn(schema=schema)
    monkeypatch.setenv(ENV, dsn)
    return schema, dsn


def pg_settings(**over) -> MemorySettings:
    return MemorySettings(backend="postgres", dsn_env=ENV, **over)


def remember(memory, slug="n", body="b"):
    args = {"slug": slug, "name": "N", "description": "d", "type": "user", "body": body}
    return memory.call("remember_shared", args)


# --------------------------------------------------------------------------- schema and migrations


def test_an_older_schema_is_migrated_in_place_and_keeps_its_entries(pg_server, fresh):
    schema, dsn = fresh
    with pg_server.admin() as conn:  # a version-1 store, as the first release would have written it
        conn.execute(f'SET search_path = "{schema}"')
        for statement in MIGRATIONS[0]:
            conn.execute(statement)
        conn.execute(
            f"CREATE TABLE {VERSION_TABLE} (singleton boolean PRIMARY KEY DEFAULT true, version int)"
        )
        conn.execute(f"INSERT INTO {VERSION_TABLE} VALUES (true, 1)")
        conn.execute(
            f"INSERT INTO {ENTRIES} VALUES ('shared', '', 'kept', 'n', 'd', 'user', 'body', 't0', 't0')"
        )
    store = PostgresStore(dsn)
    try:
        assert store.stored_version() == 1  # looking does not migrate
        assert store.get("shared", "", "kept").body == "body"
        assert store.schema_version() == SCHEMA_VERSION
    finally:
        store.close()
    with pg_server.admin() as conn:
        indexes = {
            r[0] for r in conn.execute("SELECT indexname FROM pg_indexes WHERE schemaname = %s", (schema,))
        }
    assert f"{ENTRIES}_by_type" in indexes


def test_a_store_from_a_newer_version_is_refused_not_misread(pg_server, fresh, memory_with):
    schema, dsn = fresh
    PostgresStore(dsn).schema_version()  # create it
    with pg_server.admin() as conn:
        conn.execute(f'UPDATE "{schema}".{VERSION_TABLE} SET version = %s', (SCHEMA_VERSION + 1,))
    env = remember(memory_with(pg_settings()))
    assert env["error"]["kind"] == "execution_error"
    assert "newer than this reyn-tools-memory understands" in env["error"]["message"]


def test_hosts_starting_together_migrate_once_and_all_write(pg_server, fresh, worker, tmp_path):
    _, dsn = fresh
    settings = pg_settings().model_dump_json(exclude_unset=True)
    procs = [
        subprocess.Popen(
            worker("write", settings, f"h{n}", "5"),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, ENV: dsn},
        )
        for n in range(6)
    ]
    for proc in procs:
        out, err = proc.communicate(timeout=DEADLINE_S)
        assert proc.returncode == 0 and len(out.split()) == 5, err
    store = PostgresStore(dsn)
    try:
        assert store.stored_version() == SCHEMA_VERSION
        assert len(store.all_entries()) == 30
    finally:
        store.close()


def test_a_database_that_is_not_utf8_is_refused(pg_server, memory_with, monkeypatch):
    with pg_server.admin() as conn:
        conn.execute("DROP DATABASE IF EXISTS latin")
        conn.execute("CREATE DATABASE latin TEMPLATE template0 ENCODING 'LATIN1' LC_COLLATE 'C' LC_CTYPE 'C'")
    monkeypatch.setenv(ENV, pg_server.dsn(dbname="latin"))
    env = remember(memory_with(pg_settings()))
    assert env["error"]["kind"] == "execution_error"
    assert "uses encoding LATIN1; the store needs UTF8" in env["error"]["message"]


# --------------------------------------------------------------------------- writers


def _run_at_once(target: Callable[[int], None], count: int) -> None:
    """``target(n)`` for each n below ``count``, each in its own thread, all started before any is
    waited for (each wait bounded)."""
    threads = [threading.Thread(target=target, args=(n,)) for n in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(DEADLINE_S)


def test_the_layer_limit_holds_when_many_threads_add_at_once(fresh):
    store = PostgresStore(fresh[1], max_entries_per_layer=20, pool_max_size=8)
    results: list[object] = []

    def add(n: int) -> None:
        for i in range(6):
            try:
                results.append(
                    store.put("shared", "", f"t{n}-{i}", name="n", description="d", type="user", body="b")
                )
            except MemoryStoreError as exc:
                results.append(exc)

    try:
        _run_at_once(add, 8)
        assert len(store.entries("shared", "")) == 20
        refused = [r for r in results if isinstance(r, MemoryStoreError)]
        assert len(refused) == 48 - 20 and all("the limit" in str(r) for r in refused)
    finally:
        store.close()


def test_concurrent_updates_of_one_slug_leave_one_whole_entry(fresh):
    store = PostgresStore(fresh[1], pool_max_size=8)
    acked: list[str] = []

    def write(n: int) -> None:
        for i in range(25):
            body = f"writer {n} version {i}\n" * 50
            store.put("shared", "", "hot", name=f"w{n}", description="d", type="user", body=body)
            acked.append(body)

    try:
        _run_at_once(write, 6)
        assert len(acked) == 150
        final = store.get("shared", "", "hot")
        assert final is not None and final.body in acked  # one writer's whole entry, never a mix
        assert final.name == f"w{final.body.split()[1]}"
    finally:
        store.close()


def test_a_lock_held_too_long_fails_the_write_cleanly_and_writes_nothing(pg_server, fresh, memory_with):
    schema, _ = fresh
    memory = memory_with(pg_settings(statement_timeout_s=0.5))
    assert remember(memory, "first")["status"] == "ok"
    with pg_server.admin() as conn, conn.transaction():
        conn.execute(f'LOCK TABLE "{schema}".{ENTRIES} IN ACCESS EXCLUSIVE MODE')
        started = time.monotonic()
        env = remember(memory, "blocked")
        assert time.monotonic() - started < DEADLINE_S
    assert env["error"]["kind"] == "execution_error"
    assert (
        "waited too long for a lock" in env["error"]["message"] or "did not answer" in env["error"]["message"]
    )
    assert memory.call("read_memory_body", {"slug": "blocked"})["status"] == "error"
    assert remember(memory, "after")["status"] == "ok"


# --------------------------------------------------------------------------- an unreachable server


def test_a_server_that_is_down_is_a_clear_bounded_error_naming_the_host(pg_server, memory_with, monkeypatch):
    port = free_port()
    monkeypatch.setenv(ENV, f"postgresql://reyn:{pg_server.password}@127.0.0.1:{port}/postgres")
    memory = memory_with(pg_settings(connect_timeout_s=2))
    for tool, args in [
        ("remember_shared", {"slug": "a", "name": "n", "description": "d", "type": "user", "body": "b"}),
        ("list_memory", {}),
        ("read_memory_body", {"slug": "a"}),
        ("forget_memory", {"slug": "a", "layer": "shared"}),
    ]:
        started = time.monotonic()
        env = memory.call(tool, args)
        assert time.monotonic() - started < DEADLINE_S  # bounded, not hanging
        message = env["error"]["message"]
        assert env["error"]["kind"] == "execution_error"
        assert f"postgresql://127.0.0.1:{port}/postgres is unavailable" in message  # no user name
        assert "no connection could be made" in message  # Reyn's words; libpq's are in the log
        assert pg_server.password not in message


def test_a_server_that_accepts_but_never_answers_times_out(pg_server, memory_with, monkeypatch):
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(16)  # the kernel accepts connections; nothing ever answers them
    try:
        port = silent.getsockname()[1]
        monkeypatch.setenv(ENV, f"postgresql://reyn:{pg_server.password}@127.0.0.1:{port}/postgres")
        started = time.monotonic()
        env = remember(memory_with(pg_settings(connect_timeout_s=2)))
        assert time.monotonic() - started < DEADLINE_S
    finally:
        silent.close()
    assert env["error"]["kind"] == "execution_error"
    assert f"127.0.0.1:{port}" in env["error"]["message"] and "unavailable" in env["error"]["message"]
    assert pg_server.password not in env["error"]["message"]


def test_a_server_restart_mid_run_fails_calls_cleanly_and_they_recover(worker, tmp_path):
    with TemporaryPostgres(fsync=False) as server:
        dsn = server.dsn()
        settings = MemorySettings(backend="postgres", dsn_env=ENV, connect_timeout_s=2)
        procs = []
        for n in range(2):
            out, err = open(tmp_path / f"r{n}.out", "wb"), open(tmp_path / f"r{n}.err", "wb")
            cmd = worker("write", settings.model_dump_json(exclude_unset=True), f"r{n}", "400")
            procs.append(
                (subprocess.Popen(cmd, stdout=out, stderr=err, env={**os.environ, ENV: dsn}), out, err)
            )
        end = time.monotonic() + DEADLINE_S
        while len((tmp_path / "r0.out").read_bytes().split()) < 50 and time.monotonic() < end:
            time.sleep(0.01)
        server.restart(down_s=6)  # longer than a call waits for a connection: calls must fail
        for proc, out, err in procs:
            proc.wait(timeout=DEADLINE_S * 2)
            out.close()
            err.close()
        store = PostgresStore(dsn)
        try:
            rows = {e.slug: e.body for e in store.all_entries()}
        finally:
            store.close()
    failures = 0
    for n in range(2):
        slugs = (tmp_path / f"r{n}.out").read_text().split()
        errors = (tmp_path / f"r{n}.err").read_text().splitlines()
        failures += len(errors)
        for slug in slugs:  # every acknowledged write survived the restart
            i = int(slug.rsplit("-", 1)[1])
            assert rows[slug] == f"entry {i} written by r{n}\n" + "x" * (i % 97)
        for line in errors:  # every failure is a clean, bounded error naming the server
            assert "execution_error" in line and f"127.0.0.1:{server.port}" in line, line
            assert "Traceback" not in line and server.password not in line
        assert slugs[-1] == f"r{n}-000399"  # the writer recovered: its last writes went through
    assert failures > 0


# --------------------------------------------------------------------------- configuration and secrets


def test_an_unset_dsn_variable_is_named(memory_with, monkeypatch):
    monkeypatch.delenv("REYN_TEST_UNSET_DSN", raising=False)
    env = remember(memory_with(MemorySettings(backend="postgres", dsn_env="REYN_TEST_UNSET_DSN")))
    assert env["error"]["kind"] == "execution_error"
    assert "$REYN_TEST_UNSET_DSN, which is not set" in env["error"]["message"]


@pytest.mark.parametrize(
    "dsn",
    ["host=127.0.0.1 password=hunter2-secret bogus", "postgresql://u:hunter2-secret@h:notaport/db x=y"],
)
def test_an_invalid_dsn_is_refused_without_echoing_it(memory_with, monkeypatch, dsn):
    monkeypatch.setenv(ENV, dsn)
    env = remember(memory_with(pg_settings()))
    assert env["error"]["kind"] == "execution_error"
    assert "hunter2" not in env["error"]["message"]
    assert (
        "connection string is not valid" in env["error"]["message"]
        or "unavailable" in env["error"]["message"]
    )


def test_a_wrong_password_is_an_error_that_does_not_show_it(
    pg_server, memory_with, monkeypatch, operator_log
):
    monkeypatch.setenv(
        ENV, f"postgresql://reyn:wrong-{pg_server.password}@127.0.0.1:{pg_server.port}/postgres"
    )
    env = remember(memory_with(pg_settings()))
    # libpq reports a refused login without a SQLSTATE: Reyn's words, the server's in the log
    assert "no connection could be made" in env["error"]["message"]
    assert pg_server.password not in env["error"]["message"]
    assert "password authentication failed" in operator_log.text()


def test_a_dsn_pasted_into_dsn_env_is_refused_without_echoing_it():
    from pydantic import ValidationError

    with pytest.raises(ValidationError) as info:
        MemorySettings(backend="postgres", dsn_env="postgresql://u:hunter2@db/x")
    text = "; ".join(e["msg"] for e in info.value.errors())
    assert "looks like a connection string" in text and "hunter2" not in text


@pytest.mark.parametrize(
    "settings,stray",
    [({"backend": "postgres", "path": "x.db"}, "path"), ({"connect_timeout_s": 3}, "connect_timeout_s")],
)
def test_a_setting_of_the_other_backend_is_refused(settings, stray):
    from pydantic import ValidationError

    with pytest.raises(ValidationError, match=f"{stray} is not used by backend"):
        MemorySettings(**settings)


def _python(code: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=DEADLINE_S,
        env=env or dict(os.environ),
    )


def test_without_psycopg_the_postgres_backend_is_runtime_missing_with_the_install_command(tmp_path):
    code = f"""
import asyncio, json, sys
sys.modules["psycopg"] = None  # as if the [postgres] extra were not installed
from pathlib import Path
from reyn_core import ToolContext, ToolOrigin
from reyn_core.host import RegistryBuilder, ToolRegistry, dispatch_tool
from reyn_tools_memory import MemorySettings
from reyn_tools_memory.plugin import reyn_register_tools
s = MemorySettings(backend="postgres")
reg = RegistryBuilder(settings={{"memory": s}})
reyn_register_tools(lambda t: reg.register(t, origin=ToolOrigin(kind="plugin", plugin_id="memory")), s)
ctx = ToolContext(surface="router", workspace=Path({str(tmp_path)!r}))
print(json.dumps(asyncio.run(dispatch_tool(reg.freeze(), "list_memory", {{}}, ctx))))
"""
    proc = _python(code, {**os.environ, "REYN_MEMORY_DSN": "postgresql://u@127.0.0.1:1/db"})
    env = json.loads(proc.stdout)
    assert env["error"]["kind"] == "runtime_missing", proc.stderr
    assert "pip install 'reyn-tools-memory[postgres]'" in env["error"]["message"]


def test_the_sqlite_backend_never_imports_psycopg(tmp_path):
    code = f"""
import asyncio, sys
from pathlib import Path
from reyn_core import ToolContext, ToolOrigin
from reyn_core.host import RegistryBuilder, ToolRegistry, dispatch_tool
from reyn_tools_memory import MemorySettings
from reyn_tools_memory.plugin import reyn_diagnostics, reyn_register_tools
s = MemorySettings(path={str(tmp_path / "m.db")!r})
reg = RegistryBuilder(settings={{"memory": s}})
reyn_register_tools(lambda t: reg.register(t, origin=ToolOrigin(kind="plugin", plugin_id="memory")), s)
ctx = ToolContext(surface="router", workspace=Path({str(tmp_path)!r}))
args = {{"slug": "a", "name": "n", "description": "d", "type": "user", "body": "b"}}
assert asyncio.run(dispatch_tool(reg.freeze(), "remember_shared", args, ctx))["status"] == "ok"
reyn_diagnostics(s)
print(sorted(m for m in sys.modules if m.split(".")[0] in ("psycopg", "psycopg_pool")))
"""
    proc = _python(code)
    assert proc.stdout.strip() == "[]", proc.stderr


# --------------------------------------------------------------------------- reyn doctor


def test_doctor_findings_for_the_postgres_backend(pg_server, fresh, monkeypatch):
    schema, dsn = fresh
    assert [d["code"] for d in diagnostics(pg_settings())] == ["RY004"]  # no store yet
    PostgresStore(dsn).schema_version()
    assert diagnostics(pg_settings()) == []  # reachable, current schema
    with pg_server.admin() as conn:
        conn.execute(f'UPDATE "{schema}".{VERSION_TABLE} SET version = 99')
    newer = diagnostics(pg_settings())
    assert [(d["code"], d["severity"]) for d in newer] == [("RY003", "error")]
    monkeypatch.setenv(ENV, f"postgresql://reyn:{pg_server.password}@127.0.0.1:{free_port()}/postgres")
    down = diagnostics(pg_settings(connect_timeout_s=2))
    assert [(d["code"], d["severity"]) for d in down] == [("RY002", "error")]
    assert "127.0.0.1" in down[0]["message"] and pg_server.password not in down[0]["message"]
    monkeypatch.delenv(ENV)
    assert [d["code"] for d in diagnostics(pg_settings())] == ["RY001"]


def test_reyn_doctor_reports_an_unreachable_memory_server(pg_server, tmp_path, reyn_cli):
    port = free_port()
    (tmp_path / "reyn.toml").write_text(
        '[plugins]\nenable = ["memory"]\n[plugins.memory.settings]\nbackend = "postgres"\n'
        'dsn_env = "REYN_TEST_DOCTOR_DSN"\nconnect_timeout_s = 2\n'
    )
    env = {"REYN_TEST_DOCTOR_DSN": f"postgresql://reyn:{pg_server.password}@127.0.0.1:{port}/x"}
    proc = reyn_cli("doctor", "--json", cwd=tmp_path, env=env, timeout=DEADLINE_S)
    assert proc.returncode == 1, proc.stderr
    found = [d for d in json.loads(proc.stdout)["diagnostics"] if d["code"].startswith("RY")]
    assert [d["code"] for d in found] == ["RY002"]
    assert f"127.0.0.1:{port}" in found[0]["message"]
    assert pg_server.password not in proc.stdout + proc.stderr


def test_sqlite_doctor_reads_the_file_without_creating_or_migrating_it(tmp_path, monkeypatch):
    import sqlite3

    monkeypatch.chdir(tmp_path)
    assert diagnostics(MemorySettings(path="m.db")) == []
    assert not (tmp_path / "m.db").exists()
    with sqlite3.connect(tmp_path / "m.db") as conn:
        conn.execute("PRAGMA user_version = 7")
    conn.close()
    assert [d["code"] for d in diagnostics(MemorySettings(path="m.db"))] == ["RY003"]
