"""The PostgreSQL memory store's schema: its tables, the migrations between versions, and the lock
that makes many hosts starting together migrate once.

``reyn_memory_schema`` holds the version; ``MIGRATIONS[i]`` upgrades ``i`` to ``i + 1``. The first use
in a process migrates inside one transaction holding an advisory lock; a newer schema is refused.
Text columns that are compared or sorted use ``COLLATE "C"`` — byte order, as in SQLite — and the
database must be UTF8. Nothing here imports the driver: every function takes an open connection.
"""

from __future__ import annotations

import hashlib
from typing import Any

from .backend import MemoryStoreError

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
ADVISORY_NAMESPACE = int.from_bytes(
    hashlib.blake2b(b"reyn-tools-memory", digest_size=4).digest(), "big", signed=True
)
MIGRATION_KEY = 0


def read_version(conn: Any) -> int:
    """The stored schema version, 0 when there is no store in this database (search_path) yet."""
    if conn.execute("SELECT to_regclass(%s)", (VERSION_TABLE,)).fetchone()[0] is None:
        return 0
    row = conn.execute(f"SELECT version FROM {VERSION_TABLE}").fetchone()
    return int(row[0]) if row else 0


def _newer(location: str, version: int) -> MemoryStoreError:
    return MemoryStoreError(
        f"the PostgreSQL memory store {location} has schema version {version}, newer than this "
        f"reyn-tools-memory understands ({SCHEMA_VERSION}); upgrade reyn-tools-memory on this host"
    )


def migrate(conn: Any, location: str) -> None:
    """Bring the store's schema in ``conn``'s database to ``SCHEMA_VERSION`` (``location`` names the
    store in messages): refused when the database is not UTF8 or its schema is newer."""
    with conn.transaction():
        # Every host that starts now queues here; the first migrates, the others find it done.
        conn.execute("SELECT pg_advisory_xact_lock(%s, %s)", (ADVISORY_NAMESPACE, MIGRATION_KEY))
        encoding = conn.execute("SHOW server_encoding").fetchone()[0]
        if str(encoding).upper() not in ("UTF8", "UTF-8"):
            raise MemoryStoreError(
                f"the database of the PostgreSQL memory store {location} uses encoding "
                f"{encoding}; the store needs UTF8 (CREATE DATABASE ... ENCODING 'UTF8')"
            )
        conn.execute(CREATE_VERSION_TABLE)
        version = read_version(conn)
        if version > SCHEMA_VERSION:
            raise _newer(location, version)
        for step in range(version, SCHEMA_VERSION):
            for statement in MIGRATIONS[step]:
                conn.execute(statement)
        conn.execute(
            f"INSERT INTO {VERSION_TABLE} (singleton, version) VALUES (true, %s) "
            "ON CONFLICT (singleton) DO UPDATE SET version = EXCLUDED.version",
            (SCHEMA_VERSION,),
        )
