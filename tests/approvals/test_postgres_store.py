"""The PostgreSQL approval store (reyn-approvals-postgres) behind the real ``reyn`` command, against a
real PostgreSQL server this module starts: approve in one process and run in another, a replay with
other arguments voided, expiry, two processes racing for one approval (it runs once), and a store
that cannot be used (not installed, a bad DSN, an unreachable server): every call that needs
approval is refused, nothing runs, and no secret is shown. The store is selected only by
``[approvals] backend = "postgres"`` (an entry point of ``reyn.approval_stores``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from typing import Any

import pytest

CALL = ("path=out/a.md", "text=hi")
DSN_ENV = "REYN_TEST_APPROVALS_DSN"


def _use_postgres(world: Any, monkeypatch: pytest.MonkeyPatch, dsn: str, *, settings: str = "") -> None:
    text = world.profile.read_text().replace(
        'settings.file = "approvals.sqlite"',
        f'backend = "postgres"\nsettings = {{ dsn_env = "{DSN_ENV}"{settings} }}',
    )
    world.profile.write_text(text)
    monkeypatch.setenv(DSN_ENV, dsn)


@pytest.fixture
def pg_world(world: Any, postgres_server: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    """The approvals world of conftest.py, its store a fresh schema on the real server."""
    _use_postgres(world, monkeypatch, postgres_server.dsn(schema=postgres_server.new_schema("apr")))
    world.pg = postgres_server
    return world


def _request(world: Any, *args: str) -> str:
    code, envelope = world.reyn_json("tools", "call", world.write, *(args or CALL))
    assert code == 1 and envelope["error"]["kind"] == "approval_required", envelope
    return str(envelope["error"]["approval"])


def _approve(world: Any, approval: str) -> None:
    done = world.reyn("approvals", "approve", approval, "--by", "ops")
    assert done.returncode == 0, done.stderr


def _run(world: Any, approval: str, *args: str) -> tuple[int, dict[str, Any]]:
    code, envelope = world.reyn_json("tools", "call", world.write, *(args or CALL), "--approval", approval)
    return code, envelope


def _marker(world: Any) -> str | None:
    path = world.root / "out/a.md"
    return path.read_text() if path.exists() else None


def _rows(world: Any) -> list[tuple[Any, ...]]:
    schema = os.environ[DSN_ENV].rsplit("%3D", 1)[1]
    with world.pg.admin() as conn:
        return list(conn.execute(f'SELECT id, status, uses FROM "{schema}".reyn_approvals').fetchall())


def test_approved_in_one_process_run_in_another_once(pg_world):
    approval = _request(pg_world)
    code, shown = pg_world.reyn_json("approvals", "show", approval)
    assert code == 0 and shown["status"] == "pending" and shown["request"]["tool"] == pg_world.write
    assert _rows(pg_world) == [(approval, "pending", 1)]  # the request lives in PostgreSQL
    _approve(pg_world, approval)
    assert _marker(pg_world) is None  # nothing ran before approval
    code, envelope = _run(pg_world, approval)
    assert code == 0 and envelope["status"] == "ok" and _marker(pg_world) == "hi\n"
    assert _rows(pg_world) == [(approval, "consumed", 0)]
    code, envelope = _run(pg_world, approval)
    assert code == 1 and envelope["error"]["reason"] == "used" and _marker(pg_world) == "hi\n"
    events = [e.get("event") for e in pg_world.audit_events()]
    assert events.count("approval.executed") == 1 and "approval.approved" in events


def test_replayed_for_other_arguments_is_voided_and_nothing_runs(pg_world):
    approval = _request(pg_world)
    _approve(pg_world, approval)
    code, envelope = _run(pg_world, approval, "path=out/a.md", "text=rm -rf")
    assert code == 1 and envelope["error"]["reason"] == "arguments_differ"
    code, envelope = _run(pg_world, approval)  # void now, for the approved call too
    assert envelope["error"]["reason"] == "voided" and _marker(pg_world) is None
    assert _rows(pg_world) == [(approval, "voided", 1)]


def test_replayed_after_the_plugin_files_changed_is_voided(pg_world):
    approval = _request(pg_world)
    _approve(pg_world, approval)
    pg_world.reinstall("\n# an update: same tools, other bytes\n")
    code, envelope = _run(pg_world, approval)
    assert code == 1 and envelope["error"]["reason"] == "plugin_changed" and _marker(pg_world) is None


def test_replayed_after_expiry_is_refused(pg_world):
    approval = _request(pg_world)
    _approve(pg_world, approval)
    schema = os.environ[DSN_ENV].rsplit("%3D", 1)[1]
    with pg_world.pg.admin() as conn:  # time passing, made deterministic in the store itself
        conn.execute(
            f'UPDATE "{schema}".reyn_approvals SET expires_at = %s WHERE id = %s', (time.time() - 1, approval)
        )
    code, envelope = _run(pg_world, approval)
    assert code == 1 and envelope["error"]["reason"] == "expired" and _marker(pg_world) is None
    assert "approval.expired" in [e.get("event") for e in pg_world.audit_events()]


def test_two_processes_racing_for_one_approval_run_the_call_once(pg_world):
    approval = _request(pg_world)
    _approve(pg_world, approval)
    outcomes = pg_world.racing_calls(approval, *CALL)
    assert sorted(o["status"] for o in outcomes) == ["error", "ok"]
    [lost] = [o for o in outcomes if o["status"] == "error"]
    assert lost["error"]["reason"] == "used"
    assert _marker(pg_world) == "hi\n"  # one line: it ran once


RACE = """
import json, os, sys, time
from reyn_approvals_postgres import PostgresApprovalStore
store = PostgresApprovalStore(os.environ[sys.argv[1]])
store.get("warm-up")  # connected before the start line, so the UPDATEs really meet
start = float(sys.argv[4])
while time.time() < start:
    time.sleep(0.001)
print(json.dumps(store.consume(sys.argv[2], sys.argv[3], time.time())))
"""


def test_many_processes_consuming_one_approval_directly_exactly_one_takes_it(pg_world):
    approval = _request(pg_world)
    _approve(pg_world, approval)
    _, shown = pg_world.reyn_json("approvals", "show", approval)
    start = str(time.time() + 3)
    racers = [
        subprocess.Popen(
            [sys.executable, "-c", RACE, DSN_ENV, approval, shown["key"], start],
            env=pg_world.env(),
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(6)
    ]
    took = [json.loads(p.communicate(timeout=120)[0]) for p in racers]
    assert sorted(took) == [False] * 5 + [True]
    assert _rows(pg_world) == [(approval, "consumed", 0)]


# --------------------------------------------------------------------------- a store that cannot be used


def _refused_unavailable(world: Any) -> str:
    done = world.reyn("tools", "call", world.write, *CALL, "--json")
    envelope = json.loads(done.stdout)
    assert done.returncode == 1 and envelope["error"]["reason"] == "unavailable", envelope
    assert _marker(world) is None  # fail closed: refused, not allowed
    return str(envelope["error"]["message"])


def test_an_unreachable_server_refuses_the_call_naming_host_port_db_only(world, monkeypatch, operator_log):
    from reyn_tools_memory.testing import free_port

    port = free_port()  # nothing listens there
    _use_postgres(world, monkeypatch, f"postgresql://admin:s3cret-pw@127.0.0.1:{port}/approvals")
    message = _refused_unavailable(world)
    assert f"postgresql://127.0.0.1:{port}/approvals" in operator_log.record(message)  # the operator's
    assert "s3cret-pw" not in message and "admin" not in message and "127.0.0.1" not in message
    # a call no rule holds still runs: only what needs approval is refused
    done = world.reyn("tools", "call", world.read, "path=out/a.md", "--json")
    assert done.returncode == 0 and json.loads(done.stdout)["status"] == "ok"


def test_a_wrong_password_is_refused_without_showing_it(world, postgres_server, monkeypatch, operator_log):
    server = postgres_server
    dsn = server.dsn(schema=server.new_schema("apr")).replace(server.password, "wrong-pw-123")
    _use_postgres(world, monkeypatch, dsn)
    message = _refused_unavailable(world)
    why = operator_log.record(message)
    assert "wrong-pw-123" not in message and "OperationalError" in why
    assert f"postgresql://127.0.0.1:{server.port}/postgres" in why


def test_an_unparsable_dsn_is_rc011_and_is_not_echoed(world, monkeypatch):
    _use_postgres(world, monkeypatch, "host=x password=hunter2 nonsense")
    done = world.reyn("doctor", "--json")
    assert "RC011" in done.stdout and "hunter2" not in done.stdout + done.stderr
    assert "hunter2" not in _refused_unavailable(world)


def test_a_dsn_pasted_into_dsn_env_is_refused_without_echoing_it(world, monkeypatch):
    text = world.profile.read_text().replace(
        'settings.file = "approvals.sqlite"',
        'backend = "postgres"\nsettings = { dsn_env = "postgresql://u:topsecret@h/db" }',
    )
    world.profile.write_text(text)
    done = world.reyn("doctor", "--json")
    assert "RC011" in done.stdout and "dsn_env" in done.stdout
    assert "topsecret" not in done.stdout + done.stderr
    assert "topsecret" not in _refused_unavailable(world)


def test_a_backend_that_is_not_installed_is_rc011_and_refuses_held_calls(world, operator_log):
    text = world.profile.read_text().replace('settings.file = "approvals.sqlite"', 'backend = "nosuchstore"')
    world.profile.write_text(text)
    done = world.reyn("doctor", "--json")
    assert "RC011" in done.stdout and "reyn.approval_stores" in done.stdout
    message = _refused_unavailable(world)
    assert "RC011" in message and "nosuchstore" in operator_log.record(message)
    done = world.reyn("tools", "call", world.read, "path=out/a.md", "--json")  # no rule holds it
    assert done.returncode == 0 and json.loads(done.stdout)["status"] == "ok"
    done = world.reyn("approvals", "list")  # the operator is told why, no traceback
    assert done.returncode != 0 and "the approval store cannot be used" in done.stderr
    assert "nosuchstore" in done.stderr and "Traceback" not in done.stderr


def test_the_old_store_key_is_a_profile_error_naming_its_new_place(world):
    # `[approvals] store` was the core's SQLite file; the store is reyn-approvals-sqlite now and its
    # file a setting: the old key is refused by name (a load with it would hold nothing), not ignored
    text = world.profile.read_text().replace(
        'settings.file = "approvals.sqlite"', 'store = "approvals.sqlite"'
    )
    world.profile.write_text(text)
    done = world.reyn("doctor")
    out = done.stdout + done.stderr
    assert done.returncode != 0 and "[approvals.settings] file" in out and "reyn-approvals-sqlite" in out
