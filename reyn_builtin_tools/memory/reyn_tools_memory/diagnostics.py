"""``reyn doctor`` findings of the memory pack (the ``reyn_diagnostics`` hook), family ``RY``.

=====  ========  ==================================================================================
code   severity  meaning
=====  ========  ==================================================================================
RY001  error     the backend is not usable as configured: the DSN variable is unset or invalid, or
                 psycopg (the ``[postgres]`` extra) is not installed
RY002  error     the store cannot be reached or read (the message names the host, never a password)
RY003  error     the store's schema is newer than this reyn-tools-memory understands
RY004  info      there is no store on the server yet, or its schema is older: it is created /
                 migrated at first use
=====  ========  ==================================================================================

The SQLite file is read without being created or migrated; PostgreSQL is asked over one direct
connection bounded by ``connect_timeout_s``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from reyn_core import settings_as

from .settings import MemorySettings


def _finding(code: str, severity: str, message: str, hint: str = "") -> dict[str, str]:
    found = {"code": code, "severity": severity, "message": message}
    if hint:
        found["hint"] = hint
    return found


def _version_findings(where: str, version: int | None, current: int) -> list[dict[str, str]]:
    if version is None:
        return [_finding("RY004", "info", f"no memory store at {where} yet; it is created at first use")]
    if version > current:
        return [
            _finding(
                "RY003",
                "error",
                f"the memory store {where} has schema version {version}, newer than this "
                f"reyn-tools-memory understands ({current})",
                "upgrade reyn-tools-memory on this host",
            )
        ]
    if version < current:
        return [
            _finding(
                "RY004",
                "info",
                f"the memory store {where} has schema version {version}; "
                f"it is migrated to {current} at first use",
            )
        ]
    return []


def diagnostics(settings: Any) -> list[dict[str, str]]:
    """The findings for these settings (``MemorySettings`` or its mapping)."""
    s = settings_as(settings, MemorySettings)
    if s.backend == "postgres":
        return _postgres(s)
    return _sqlite(s.db_path(Path.cwd()))


def _sqlite(path: Path) -> list[dict[str, str]]:
    if not path.exists():
        return []  # the normal state before the first write: the file is created then
    # Only now: loading and rendering the tools (which ask for diagnostics) import no store module.
    import sqlite3

    from .store import SCHEMA_VERSION

    try:
        with sqlite3.connect(f"{path.absolute().as_uri()}?mode=ro", uri=True, timeout=5) as conn:
            version = int(conn.execute("PRAGMA user_version").fetchone()[0])
        conn.close()
    except sqlite3.Error as exc:
        return [_finding("RY002", "error", f"cannot read the memory store {path}: {exc}")]
    return _version_findings(str(path), version or None, SCHEMA_VERSION)


def _postgres(s: MemorySettings) -> list[dict[str, str]]:
    # Only for a postgres store: a load with the default (SQLite) store imports no backend module.
    from .backend import MemoryBackendMissing, MemoryStoreError, MemoryStoreUnavailable

    try:
        from .postgres import PostgresStore
        from .postgres_schema import SCHEMA_VERSION

        store = PostgresStore(
            s.dsn(), connect_timeout_s=s.connect_timeout_s, statement_timeout_s=s.statement_timeout_s
        )
    except MemoryBackendMissing as exc:
        return [_finding("RY001", "error", str(exc))]
    except MemoryStoreError as exc:
        return [_finding("RY001", "error", str(exc))]
    try:
        version = store.stored_version()
    except MemoryStoreUnavailable as exc:
        return [_finding("RY002", "error", str(exc), "start the server or fix the DSN's host and port")]
    except MemoryStoreError as exc:
        return [_finding("RY002", "error", str(exc))]
    return _version_findings(store.location, version, SCHEMA_VERSION)
