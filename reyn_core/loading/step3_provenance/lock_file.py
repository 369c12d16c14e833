"""``reyn.lock`` on disk: deterministic TOML out (tomlkit, imported when a lock is written), strict
validation in, every error naming the file and the key path."""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from reyn_core.atomic_write import atomic_write_bytes
from reyn_core.loading.permissions import PERMISSION_FLAGS, PERMISSION_LISTS
from reyn_core.loading.step3_provenance.digest import tree_digest
from reyn_core.loading.step3_provenance.direct_url import SOURCE_KINDS
from reyn_core.loading.step3_provenance.lock import (
    LOCK_VERSION,
    TOOL_KEYS,
    LockedPlugin,
    LockedTool,
    LockError,
    LockFile,
    OutdatedLockError,
)
from reyn_core.loading.step3_provenance.record import DIGEST_SCOPES

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

_HEADER = "# reyn.lock, written by `reyn plugins lock`. Do not edit by hand: review its changes like code."


# --------------------------------------------------------------------------- writing


def render_lock(lock: LockFile) -> str:
    """The canonical TOML text of ``lock``: same lock, same bytes (written with tomlkit, the one TOML
    writer of the project; it writes arrays on one line and a tab inside a string as ``\\t``, like
    every other control character, so the text has no tab at all).

    Tables are written in a fixed order (plugins by id, then each plugin's keys, files, tools; then
    extensions by ``<group>:<name>``, each one's keys and files); empty ``tools`` tables are left out.
    """
    import tomlkit

    doc: dict[str, Any] = {"version": lock.version}
    for section, entries in (("plugins", lock.plugins), ("extensions", lock.extensions)):
        tables = {}
        for p in entries:
            table = p.as_table()
            table["files"] = dict(sorted(p.files))
            if not table["tools"]:
                del table["tools"]
            tables[p.plugin_id] = table
        if tables:
            doc[section] = tables
    return _HEADER + "\n" + tomlkit.dumps(doc)


def write_lock(path: Path | str, lock: LockFile) -> None:
    """Write ``lock`` to ``path`` atomically (temporary file and rename); bytes are deterministic."""
    target = Path(path)
    try:
        data = render_lock(lock).encode("utf-8")
    except UnicodeEncodeError as exc:  # a file name that is not valid UTF-8 cannot be a TOML key
        bad = exc.object[max(0, exc.start - 40) : exc.end + 40].encode("utf-8", "backslashreplace").decode()
        raise LockError(
            target, f"cannot lock a name that is not valid UTF-8: {bad!r}; rename the file"
        ) from exc
    try:
        atomic_write_bytes(target, data)
    except OSError as exc:
        raise LockError(target, f"cannot write the lock: {exc.strerror or exc}") from exc


# --------------------------------------------------------------------------- reading


_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")


def _toml_key(key: str) -> str:
    """``key`` as it appears in a TOML key path (quoted unless bare), for error messages."""
    if _BARE_KEY.fullmatch(key):
        return key
    return '"' + key.replace("\\", "\\\\").replace('"', '\\"') + '"'


_SHA256_HEX = re.compile(r"[0-9a-f]{64}")
_SHA256_TAGGED = re.compile(r"sha256:[0-9a-f]{64}")


class _Reader:
    """Strict field access with errors that name the key path."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def fail(self, where: str, reason: str) -> LockError:
        return LockError(self.path, f"{where}: {reason}" if where else reason)

    def table(self, value: Any, where: str) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise self.fail(where, f"expected a table, got {type(value).__name__}")
        return value

    def keys(
        self, table: Mapping[str, Any], where: str, required: Iterable[str], optional: Iterable[str] = ()
    ) -> None:
        required = tuple(required)
        allowed = set(required) | set(optional)
        unknown = sorted(set(table) - allowed)
        if unknown:
            raise self.fail(where, f"unknown key {unknown[0]!r} (allowed: {', '.join(sorted(allowed))})")
        missing = [k for k in required if k not in table]
        if missing:
            raise self.fail(where, f"missing key {missing[0]!r}")

    def string(
        self,
        table: Mapping[str, Any],
        key: str,
        where: str,
        pattern: re.Pattern[str] | None = None,
        choices: Sequence[str] | None = None,
    ) -> str:
        value = table[key]
        if not isinstance(value, str):
            raise self.fail(f"{where}.{key}", f"expected a string, got {type(value).__name__}")
        if pattern is not None and not pattern.fullmatch(value):
            raise self.fail(f"{where}.{key}", f"{value!r} is not a sha256 digest")
        if choices is not None and value not in choices:
            raise self.fail(f"{where}.{key}", f"{value!r} is not one of {', '.join(choices)}")
        return value

    def opt_string(
        self, table: Mapping[str, Any], key: str, where: str, pattern: re.Pattern[str] | None = None
    ) -> str | None:
        return self.string(table, key, where, pattern) if key in table else None


def read_lock(path: Path | str) -> LockFile:
    """Read and validate a lock file. Raises ``LockError`` naming the file and the reason."""
    target = Path(path)
    try:
        raw = target.read_bytes()
    except FileNotFoundError as exc:
        raise LockError(target, "no lock file here; run `reyn plugins lock` to write one") from exc
    except OSError as exc:
        raise LockError(target, f"cannot read the lock: {exc.strerror or exc}") from exc
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise LockError(target, f"not UTF-8 text ({exc.reason} at byte {exc.start})") from exc
    except tomllib.TOMLDecodeError as exc:
        raise LockError(target, f"not valid TOML: {exc}") from exc
    r = _Reader(target)
    version = data.get("version")
    if version is None:
        raise r.fail("", "missing 'version'; this does not look like a reyn.lock")
    if type(version) is int and 1 <= version < LOCK_VERSION:
        raise OutdatedLockError(target, version)
    if type(version) is not int or version != LOCK_VERSION:
        raise r.fail(
            "version",
            f"unsupported lock version {version!r} (this Reyn reads version {LOCK_VERSION}); "
            "regenerate it with `reyn plugins lock`",
        )
    r.keys(data, "", required=("version",), optional=("plugins", "extensions"))
    plugins = r.table(data.get("plugins", {}), "plugins")
    extensions = r.table(data.get("extensions", {}), "extensions")
    for key in extensions:
        if not _EXTENSION_KEY.fullmatch(key):
            raise r.fail(f"extensions.{_toml_key(key)}", "expected a key '<group>:<name>'")
    return LockFile(
        plugins=tuple(_read_plugin(r, pid, r.table(t, f"plugins.{pid}")) for pid, t in plugins.items()),
        extensions=tuple(
            _read_plugin(r, key, r.table(t, f"extensions.{key}"), section="extensions")
            for key, t in extensions.items()
        ),
    )


_EXTENSION_KEY = re.compile(r"[^:\s]+:[^:\s]+")
_ORIGIN_KEYS = (
    "distribution",
    "version",
    "entry_point",
    "source_kind",
    "tree_digest",
    "digest_scope",
    "files",
)
_OPTIONAL_ORIGIN_KEYS = ("source_url", "commit", "artifact_sha256")


def _read_plugin(r: _Reader, pid: str, t: dict[str, Any], section: str = "plugins") -> LockedPlugin:
    """A plugin's table, or (``section="extensions"``) an extension's: its origin and files only."""
    where = f"{section}.{_toml_key(pid)}"
    plugin_only = ("api_version", "tools", "permissions") if section == "plugins" else ()
    r.keys(t, where, required=_ORIGIN_KEYS, optional=(*_OPTIONAL_ORIGIN_KEYS, *plugin_only))
    api = t.get("api_version")
    if api is not None and type(api) is not int:
        raise r.fail(f"{where}.api_version", f"expected an integer, got {type(api).__name__}")
    files_t = r.table(t["files"], f"{where}.files")
    files: list[tuple[str, str]] = []
    for path, sha in files_t.items():
        if not isinstance(sha, str) or not _SHA256_HEX.fullmatch(sha):
            raise r.fail(f"{where}.files.{_toml_key(path)}", f"{sha!r} is not a sha256 hex digest")
        files.append((path, sha))
    permissions = t.get("permissions")
    if permissions is not None:
        permissions = _read_permissions(
            r, f"{where}.permissions", r.table(permissions, f"{where}.permissions")
        )
    plugin = LockedPlugin(
        plugin_id=pid,
        permissions=permissions,
        distribution=r.string(t, "distribution", where),
        version=r.string(t, "version", where),
        entry_point=r.string(t, "entry_point", where),
        api_version=api,
        source_kind=r.string(t, "source_kind", where, choices=SOURCE_KINDS),
        source_url=r.opt_string(t, "source_url", where),
        commit=r.opt_string(t, "commit", where),
        artifact_sha256=r.opt_string(t, "artifact_sha256", where, _SHA256_HEX),
        tree_digest=r.string(t, "tree_digest", where, _SHA256_TAGGED),
        digest_scope=r.string(t, "digest_scope", where, choices=DIGEST_SCOPES),
        files=tuple(files),
        tools=tuple(
            _read_tool(r, f"{where}.tools", name, r.table(tt, f"{where}.tools.{name}"))
            for name, tt in r.table(t.get("tools", {}), f"{where}.tools").items()
        ),
    )
    if tree_digest(plugin.files) != plugin.tree_digest:
        raise r.fail(
            f"{where}.files",
            "the file listing does not produce tree_digest (edited by hand?); "
            "regenerate the lock with `reyn plugins lock`",
        )
    return plugin


def _read_permissions(r: _Reader, where: str, t: dict[str, Any]) -> dict[str, Any]:
    """A locked declaration: the flags as booleans, the name lists as lists of strings."""
    flags, lists = PERMISSION_FLAGS, PERMISSION_LISTS
    r.keys(t, where, required=(*flags, *lists), optional=())
    for key in flags:
        if not isinstance(t[key], bool):
            raise r.fail(f"{where}.{key}", "expected true or false")
    for key in lists:
        if not isinstance(t[key], list) or not all(isinstance(v, str) for v in t[key]):
            raise r.fail(f"{where}.{key}", "expected a list of names")
    return {key: t[key] for key in (*flags, *lists)}


def _read_tool(r: _Reader, where: str, name: str, t: dict[str, Any]) -> LockedTool:
    where = f"{where}.{_toml_key(name)}"
    r.keys(t, where, required=TOOL_KEYS)
    props = t["properties"]
    if not isinstance(props, list) or not all(isinstance(p, str) for p in props):
        raise r.fail(f"{where}.properties", "expected a list of strings")
    strings: dict[str, Any] = {
        key: r.string(t, key, where, _SHA256_TAGGED if key.endswith("sha256") else None)
        for key in TOOL_KEYS
        if key != "properties"
    }
    return LockedTool(name=name, properties=tuple(props), **strings)


__all__ = ["read_lock", "render_lock", "write_lock"]
