"""A persistent cache of ``check_tool_schema`` results, so a warm load never imports the validator library.

Keyed by a sha256 of the canonical schema JSON, the phase flag and the checker's own source (an
edit to ``reyn_core/schema.py``, ``provider_schemas.py``, ``jsondata.py``, ``errors.py`` or any module of the
``reyn_core/validation/`` package — the screening it delegates to: references, meta-schema, RE2
patterns — a new reyn-core version, or another version of ``jsonschema-rs``, whose meta-schema
check and compiler decide, invalidates every entry). Stored as one
JSON file in the user cache dir, written atomically (mode 0600); an unreadable file is simply
ignored, and so is one that is not private (a link, another owner, group- or world-writable): a
forged "no issues" there would skip a check (``read_private``).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import asdict
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from reyn_core.loading.userdirs import read_private_entries, user_cache_dir, write_private
from reyn_core.registry.builder import CheckedDefinitions
from reyn_core.schema import SchemaIssue, check_tool_schema

if TYPE_CHECKING:
    from reyn_core.validation.compiled import SchemaValidator

# v2: patterns are checked by RE2 (v1 verdicts came from a backtracking-``re`` heuristic).
FILE_NAME = "schema-checks-v2.json"
MAX_ENTRIES = 20_000
MAX_FILE_BYTES = 64 * 1024 * 1024
"""A cache file larger than this is not read (a miss: every schema is checked, and the next save
writes a new one)."""


# The checker's own source: ``check_tool_schema`` and everything its verdict depends on.
_CHECKER_FILES = ("schema.py", "provider_schemas.py", "jsondata.py", "errors.py")
_CHECKER_PACKAGES = ("validation",)


def checker_files() -> list[Path]:
    """The source files whose edit invalidates every cached verdict, in a stable order."""
    core = Path(__file__).resolve().parent.parent
    files = [core / name for name in _CHECKER_FILES]
    for package in _CHECKER_PACKAGES:
        files += sorted((core / package).glob("*.py"))
    return files


@lru_cache(maxsize=1)
def _checker_fingerprint() -> str:
    core = Path(__file__).resolve().parent.parent
    h = hashlib.sha256()
    try:  # the library's verdicts are part of the checker
        from importlib.metadata import version

        h.update(f"jsonschema-rs {version('jsonschema-rs')}\0".encode())
    except Exception:
        h.update(b"jsonschema-rs unknown\0")
    for path in checker_files():
        h.update(path.relative_to(core).as_posix().encode() + b"\0")
        try:
            h.update(path.read_bytes())
        except OSError:
            h.update(b"unknown")
        h.update(b"\0")
    return h.hexdigest()[:16]


class SchemaCheckCache:
    """Callable like ``check_tool_schema(parameters, *, phase_usable)``; remembers every result.

    ``path=None`` keeps results in memory only. Call ``save()`` to persist new entries.
    ``disk_miss`` says why the file on disk was not used (None when it was, or is not read yet).

    ``checked`` is the ledger the load's builders share (``RegistryBuilder`` picks it up from its
    ``schema_check``): the real registry adopts the definitions the scratch builders already checked.
    """

    def __init__(self, path: Path | None = None) -> None:
        self.path = path
        self.checked = CheckedDefinitions()
        self._entries: dict[str, list[dict[str, Any]]] | None = None
        self._dirty = False
        self.disk_miss: str | None = None

    @classmethod
    def default(cls) -> SchemaCheckCache:
        """The cache in the user cache dir."""
        return cls(user_cache_dir() / FILE_NAME)

    def _load(self) -> dict[str, list[dict[str, Any]]]:
        if self._entries is None:
            self._entries = {}
            if self.path is not None:
                self._entries, self.disk_miss = _read_cache_file(self.path)
        return self._entries

    def __call__(
        self, parameters: Any, *, phase_usable: bool, validator: SchemaValidator | None = None
    ) -> list[SchemaIssue]:
        """``check_tool_schema``'s verdict, remembered. On a miss the check compiles ``validator``
        (the registry's own); on a hit nothing is compiled here, and ``validator`` compiles once, at
        its tool's first call (a warm load never imports the library)."""
        try:
            canonical = json.dumps(parameters, sort_keys=True, separators=(",", ":"))
        except (TypeError, ValueError, RecursionError):
            return check_tool_schema(parameters, phase_usable=phase_usable, validator=validator)
        if not isinstance(parameters, Mapping):
            return check_tool_schema(parameters, phase_usable=phase_usable, validator=validator)
        key = hashlib.sha256(f"{int(phase_usable)}\0{canonical}".encode()).hexdigest()
        entries = self._load()
        cached = entries.get(key)
        if isinstance(cached, list):
            try:
                return [SchemaIssue(**item) for item in cached]
            except TypeError:
                pass
        issues = check_tool_schema(parameters, phase_usable=phase_usable, validator=validator)
        entries[key] = [asdict(i) for i in issues]
        self._dirty = True
        return issues

    def save(self) -> None:
        """Write new entries to ``path`` atomically (silently skipped when the dir is not writable)."""
        if not self._dirty or self.path is None or self._entries is None:
            return
        entries = self._entries
        if len(entries) > MAX_ENTRIES:
            entries = dict(list(entries.items())[-MAX_ENTRIES // 2 :])
        payload = json.dumps({"checker": _checker_fingerprint(), "entries": entries}, separators=(",", ":"))
        try:
            write_private(self.path, payload.encode("utf-8"))
        except OSError:
            return
        self._dirty = False


def _read_cache_file(path: Path) -> tuple[dict[str, list[dict[str, Any]]], str | None]:
    """The entries of a private cache file written by this checker, and why there are none when the
    file was not used."""
    return read_private_entries(
        path,
        MAX_FILE_BYTES,
        stamp=("checker", _checker_fingerprint()),
        stranger="was written by another schema checker",
    )
