"""What every memory store is: the entry types, the errors, and the ``MemoryBackend`` protocol.

The tools, the CLI and export/import are written once against ``MemoryBackend``; a backend is one
class that implements it — ``MemoryStore`` (SQLite, ``store.py``, the embedded default) and
``PostgresStore`` (``postgres.py``, for agents on many hosts); ``open_store`` (``opening.py``) picks
one from the settings and imports only that backend's driver. This module imports nothing else of
the pack (the stores import it, never the reverse) and no database driver.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Literal, Protocol, runtime_checkable

from reyn_core import ReynError

Layer = Literal["shared", "agent"]
MEMORY_TYPES: tuple[str, ...] = ("user", "feedback", "project", "reference")
# The fields of an entry that ``list_memory`` shows, in this order.
SUMMARY_FIELDS = ("slug", "name", "description", "type", "layer", "updated")


class MemoryStoreError(ReynError):
    """The store cannot be opened, read or written; the message says why and what to do."""


class MemoryStoreUnavailable(MemoryStoreError):
    """The store's server cannot be reached (or the connection was lost); nothing was acknowledged."""


class MemoryBackendMissing(MemoryStoreError):
    """The configured backend needs a driver that is not installed (e.g. psycopg for postgres)."""


@dataclass(frozen=True, slots=True)
class MemoryEntry:
    """One memory entry. ``body`` is None when listed without bodies."""

    layer: Layer
    agent: str
    slug: str
    name: str
    description: str
    type: str
    body: str | None
    created: str
    updated: str

    def summary(self) -> dict[str, str]:
        """What ``list_memory`` shows: the ``SUMMARY_FIELDS``, no body."""
        return {f: getattr(self, f) for f in SUMMARY_FIELDS}


@dataclass(frozen=True, slots=True)
class PutResult:
    """The outcome of a committed write."""

    slug: str
    layer: Layer
    status: Literal["created", "updated"]
    updated: str


def now_iso() -> str:
    """The current UTC time, ISO 8601 with microseconds."""
    return datetime.now(timezone.utc).isoformat(timespec="microseconds")


def text_problem(value: str) -> str | None:
    """Why ``value`` cannot be stored as text by every backend, or None.

    PostgreSQL ``text`` cannot hold NUL, and a lone surrogate is not encodable as UTF-8 for any
    store; both are refused up front, on every backend, so the contract does not depend on it.
    """
    if "\x00" in value:
        return f"contains a NUL character at position {value.index(chr(0))}; NUL cannot be stored"
    for i, ch in enumerate(value):
        if "\ud800" <= ch <= "\udfff":
            return f"contains a lone surrogate (U+{ord(ch):04X}) at position {i}, which is not valid Unicode"
    return None


def check_entry(e: MemoryEntry) -> None:
    """Raise ``MemoryStoreError`` when ``e`` cannot be written by any backend (shared by all of them)."""
    if e.type not in MEMORY_TYPES:
        raise MemoryStoreError(f"unknown memory type {e.type!r}; use one of {', '.join(MEMORY_TYPES)}")
    for field, value in (("name", e.name), ("description", e.description), ("body", e.body or "")):
        problem = text_problem(value)
        if problem is not None:
            raise MemoryStoreError(f"the {field} of entry {e.slug!r} {problem}")


def full_layer_error(e: MemoryEntry, count: int) -> MemoryStoreError:
    """The refusal of a new slug in a layer that holds ``max_entries_per_layer`` entries."""
    where = "the shared layer" if e.layer == "shared" else f"the layer of agent {e.agent!r}"
    return MemoryStoreError(
        f"{where} already holds {count} entries, the limit (max_entries_per_layer); "
        "forget or update an entry instead of adding one"
    )


@runtime_checkable
class MemoryBackend(Protocol):
    """A memory store. Every write is one transaction and returns only after its commit; every
    method raises ``MemoryStoreError`` (or a subclass) with a message fit for a user or a model."""

    @property
    def location(self) -> str:
        """Where the store is, for messages: a file path, or ``postgresql://user@host:port/db``
        (never a password)."""
        ...

    def exists(self) -> bool:
        """Whether the store has been created (export refuses a store that does not exist)."""
        ...

    def schema_version(self) -> int:
        """The store's schema version (after any migration)."""
        ...

    def get(self, layer: Layer, agent: str, slug: str) -> MemoryEntry | None:
        """The entry, with its body, or None."""
        ...

    def entries(
        self, layer: Layer, agent: str, *, type: str | None = None, limit: int | None = None
    ) -> list[MemoryEntry]:
        """Entries of one layer sorted by slug (byte order), without bodies."""
        ...

    def all_entries(self) -> list[MemoryEntry]:
        """Every entry with its body, shared layer first, then by agent and slug (for export)."""
        ...

    def put(
        self, layer: Layer, agent: str, slug: str, *, name: str, description: str, type: str, body: str
    ) -> PutResult:
        """Create or update one entry in its own transaction."""
        ...

    def put_many(self, entries: Iterable[MemoryEntry]) -> list[PutResult]:
        """Create or update many entries in ONE transaction (all or nothing), keeping their
        timestamps when they carry them (import). Results are in the order of ``entries``."""
        ...

    def delete(self, layer: Layer, agent: str, slug: str) -> bool:
        """Remove one entry; True when it existed."""
        ...
