"""The SQLite store itself: pragmas, schema versions and migrations, unusable files."""

from __future__ import annotations

import sqlite3

import pytest
from reyn_tools_memory import SCHEMA_VERSION, MemoryStore, MemoryStoreError
from reyn_tools_memory.store import MIGRATIONS


def test_a_new_store_uses_wal_and_the_current_schema(tmp_path):
    store = MemoryStore(tmp_path / "sub" / "m.db")
    assert store.schema_version() == SCHEMA_VERSION
    with sqlite3.connect(store.path) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_writes_run_with_synchronous_full(tmp_path):
    store = MemoryStore(tmp_path / "m.db")
    with store._connection() as conn:  # the pack's own connection, as every operation opens it
        assert conn.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL
        assert conn.execute("PRAGMA busy_timeout").fetchone()[0] == 30_000


def test_an_old_store_is_migrated_in_place_and_keeps_its_entries(tmp_path):
    path = tmp_path / "m.db"
    with sqlite3.connect(path) as conn:  # a version-1 store, as the first release wrote it
        for statement in MIGRATIONS[0]:
            conn.execute(statement)
        conn.execute(
            "INSERT INTO entries VALUES ('shared', '', 'kept', 'n', 'd', 'user', 'body', 't0', 't0')"
        )
        conn.execute("PRAGMA user_version = 1")
    store = MemoryStore(path)
    assert store.get("shared", "", "kept").body == "body"  # type: ignore[union-attr]
    assert store.schema_version() == SCHEMA_VERSION
    with sqlite3.connect(path) as conn:
        indexes = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
    assert "entries_by_type" in indexes


def test_a_store_from_a_newer_version_is_refused_not_misread(tmp_path):
    path = tmp_path / "m.db"
    with sqlite3.connect(path) as conn:
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    with pytest.raises(MemoryStoreError, match="newer than this reyn-tools-memory understands"):
        MemoryStore(path).entries("shared", "")


def test_a_file_that_is_not_sqlite_gives_a_clear_error(tmp_path):
    path = tmp_path / "m.db"
    path.write_bytes(b"this is not a database, just text" * 100)
    with pytest.raises(MemoryStoreError, match="not a readable SQLite database"):
        MemoryStore(path).entries("shared", "")


def test_a_store_whose_folder_cannot_be_created_gives_a_clear_error(tmp_path):
    (tmp_path / "file").write_text("x")
    with pytest.raises(MemoryStoreError, match="cannot create the folder"):
        MemoryStore(tmp_path / "file" / "m.db").entries("shared", "")


def test_a_writer_that_cannot_get_the_lock_fails_without_writing(tmp_path):
    path = tmp_path / "m.db"
    store = MemoryStore(path, busy_timeout_s=0.2)
    store.put("shared", "", "a", name="n", description="d", type="user", body="b")
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        with pytest.raises(
            MemoryStoreError, match=r"stayed locked by another writer for 0\.2 s; nothing was written"
        ):
            store.put("shared", "", "b", name="n", description="d", type="user", body="b")
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert store.get("shared", "", "b") is None


def test_a_store_error_reaches_the_model_as_an_execution_error(sqlite_memory, make_entry):
    m = sqlite_memory
    m.db.write_bytes(b"garbage" * 1000)
    env = m.call("remember_shared", make_entry("x"))
    assert env["error"]["kind"] == "execution_error"
    assert "not a readable SQLite database" in env["error"]["message"]
    assert "Traceback" not in env["error"]["message"]
