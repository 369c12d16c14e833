"""PostgreSQL errors and DSNs reach a model, and ``reyn doctor``, in Reyn's words only (issue 21):
a DSN is shown as ``postgresql://host:port/db`` — never its user name (a token is often put in the
user slot) nor its password — and a driver's or server's message, which quotes the user name or a
value from the DSN, goes to the operator's log. Real server from the memory pack's fixtures."""

from __future__ import annotations

import json
from urllib.parse import quote

import pytest
from reyn_tools_memory import MemorySettings
from reyn_tools_memory.postgres_connections import describe_dsn

ENV = "REYN_TEST_PG_DSN"


def pg_settings(**over) -> MemorySettings:
    return MemorySettings(backend="postgres", dsn_env=ENV, connect_timeout_s=5, **over)


def remember(memory):
    args = {"slug": "n", "name": "N", "description": "d", "type": "user", "body": "b"}
    return memory.call("remember_shared", args)


def dsns(pg_server, token: str) -> dict[str, str]:
    """DSNs whose failure quotes ``token``: in the user slot (URI and keyword forms) and in a
    server setting the server rejects by quoting its value."""
    pw = quote(pg_server.password, safe="")
    return {
        "token as user name": f"postgresql://{token}:{pw}@127.0.0.1:{pg_server.port}/postgres",
        "token as user and password": f"postgresql://{token}:{token}@127.0.0.1:{pg_server.port}/postgres",
        "keyword form": f"host=127.0.0.1 port={pg_server.port} user={token} password={pw} dbname=postgres",
        "token in a rejected setting": (
            f"postgresql://{pg_server.user}:{pw}@127.0.0.1:{pg_server.port}/postgres"
            f"?options=-cstatement_timeout%3D{quote(token, safe='')}"
        ),
    }


@pytest.mark.parametrize(
    "case",
    ["token as user name", "token as user and password", "keyword form", "token in a rejected setting"],
)
def test_a_failing_dsn_shows_no_form_of_the_token(
    pg_server, memory_with, monkeypatch, operator_log, secret_forms, case
):
    monkeypatch.setenv(ENV, dsns(pg_server, secret_forms.token)[case])
    envelope = remember(memory_with(pg_settings()))
    assert envelope["status"] == "error" and envelope["error"]["kind"] == "execution_error"
    message = json.dumps(envelope, ensure_ascii=False)
    secret_forms.assert_absent(message)
    assert f"127.0.0.1:{pg_server.port}/postgres" in message and "reyn.remote.memory.postgres" in message
    assert secret_forms.token in operator_log.text()  # positive control: the server did quote it


def test_the_same_store_with_a_good_dsn_works(pg_server, memory_with, monkeypatch) -> None:
    monkeypatch.setenv(ENV, pg_server.dsn(schema=pg_server.new_schema("sec")))
    assert remember(memory_with(pg_settings()))["status"] == "ok"


@pytest.mark.parametrize("as_json", [True, False])
def test_reyn_doctor_never_shows_the_user_slot(pg_server, tmp_path, secret_forms, as_json, reyn_cli):
    (tmp_path / "reyn.toml").write_text(
        '[plugins]\nenable = ["memory"]\n[plugins.memory.settings]\nbackend = "postgres"\n'
        f'dsn_env = "{ENV}"\nconnect_timeout_s = 2\n'
    )
    log = tmp_path / "remote.log"
    env = {ENV: dsns(pg_server, secret_forms.token)["token as user name"], "REYN_REMOTE_LOG": str(log)}
    proc = reyn_cli("doctor", *(["--json"] if as_json else []), cwd=tmp_path, env=env, timeout=60)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    secret_forms.assert_absent(proc.stdout + proc.stderr)
    assert f"127.0.0.1:{pg_server.port}/postgres" in proc.stdout
    where = json.loads(proc.stdout)["remote_log"] if as_json else proc.stdout
    assert f"the file {log}" in where  # reyn doctor says where the details went
    assert secret_forms.token in log.read_text()


@pytest.mark.parametrize(
    ("dsn", "shown"),
    [
        ("postgresql://sk-live-abc:pw@db.example:6543/app", "postgresql://db.example:6543/app"),
        ("postgresql://reyn@db.example/app", "postgresql://db.example:5432/app"),
        (
            "host=db.example user=ghp_token123 password=x",
            "postgresql://db.example:5432/(the user's default database)",
        ),
        ("postgresql://%2Fvar%2Frun%2Fpostgresql/app", "postgresql://(a local socket):5432/app"),
    ],
)
def test_a_dsn_is_shown_without_userinfo(dsn, shown):
    assert describe_dsn(dsn)[0] == shown
