"""``reyn.lock``: what the enabled plugins were when an operator accepted them, and what has drifted since.

``lock_from_load(result)`` records, per loaded plugin, its origin (distribution, version, source,
artifact sha256, tree digest and the per-file hashes the digest is computed over) and, per tool, a
sha256 of its canonical definition plus the parts needed to say *what* changed. ``write_lock``
writes deterministic TOML; ``read_lock`` validates it strictly. ``compare_provenance`` (before a
plugin is imported) and ``compare_tools`` (after it registered) return ``Drift`` items; ``audit``
compares a whole ``LoadResult``. docs/provenance.md shows the format and every drift kind.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Protocol

from reyn_core.dispatch import to_jsonable
from reyn_core.errors import ReynError
from reyn_core.loading.provenance.cache import atomic_write_bytes
from reyn_core.loading.provenance.record import DIGEST_SCOPES, SOURCE_KINDS, ProvenanceRecord, tree_digest
from reyn_core.tool import ToolDefinition

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

LOCK_VERSION = 1
DEFAULT_LOCK_PATH = "reyn.lock"

DRIFT_KINDS: dict[str, str] = {
    "plugin_added": "an enabled plugin is not in the lock",
    "plugin_removed": "a locked plugin is no longer enabled or installed",
    "plugin_not_loaded": "a locked plugin is installed as locked but did not load",
    "distribution_changed": "another distribution now provides the plugin id",
    "version_changed": "the distribution's version changed",
    "entry_point_changed": "the entry point names another module",
    "source_changed": "source kind, URL, commit, artifact sha256 or digest scope changed",
    "digest_changed": "the tree digest differs (the file drifts name each file)",
    "file_added": "a file is in the digest listing that the lock does not have",
    "file_removed": "a locked file is gone",
    "file_changed": "a file's bytes changed",
    "record_mismatch": "an installed file no longer matches the installer's RECORD",
    "api_version_changed": "the plugin declares another REYN_API",
    "tool_added": "the plugin registers a tool the lock does not have",
    "tool_removed": "a locked tool is no longer registered",
    "tool_description_changed": "a tool's description changed (what the model reads)",
    "tool_schema_changed": "a tool's parameters JSON Schema changed",
    "tool_gates_changed": "a tool's router/phase gates or cluster (allowed_ops matching) changed",
    "tool_traits_changed": "a tool's purity or dispatch kind changed",
}


class LockError(ReynError):
    """A lock file that cannot be used: missing, not TOML, an unknown version, or malformed."""

    def __init__(self, path: Path | str, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = Path(path)
        self.reason = reason


# --------------------------------------------------------------------------- tool hashes


def _canonical_json(value: Any) -> bytes:
    return json.dumps(to_jsonable(value), sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def _sha256(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def _gating(tool: ToolDefinition) -> dict[str, str]:
    """The attributes that decide where a tool may appear: author gates and cluster (allowed_ops)."""
    return {**asdict(tool.gates), "cluster": tool.cluster}


def _traits(tool: ToolDefinition) -> dict[str, str]:
    """Declared behaviour the phase catalogue shows the model."""
    return {"purity": tool.purity, "dispatch_kind": tool.dispatch_kind}


def tool_definition_hash(tool: ToolDefinition) -> str:
    """``sha256:`` over the canonical JSON of a tool's name, description, parameters and gates.

    "Gates" here are every attribute that decides where the tool may appear or how it is presented:
    the author's router/phase gates, the cluster (phase ``allowed_ops`` match on it), purity and
    dispatch kind. Handlers, timeouts and origin are not part of the definition's identity.
    """
    return _sha256(
        _canonical_json(
            {
                "name": tool.name,
                "description": tool.description,
                "parameters": tool.parameters,
                "gates": {**_gating(tool), **_traits(tool)},
            }
        )
    )


# --------------------------------------------------------------------------- model


@dataclass(frozen=True, slots=True)
class LockedTool:
    """One tool as locked: its definition hash, and the parts audit reports separately."""

    name: str
    sha256: str
    description: str
    parameters_sha256: str
    properties: tuple[str, ...]
    router: str
    phase: str
    cluster: str
    purity: str
    dispatch_kind: str

    @classmethod
    def from_definition(cls, tool: ToolDefinition) -> LockedTool:
        """Lock ``tool`` as registered."""
        props = tool.parameters.get("properties")
        return cls(
            name=tool.name,
            sha256=tool_definition_hash(tool),
            description=tool.description,
            parameters_sha256=_sha256(_canonical_json(tool.parameters)),
            properties=tuple(sorted(props)) if isinstance(props, Mapping) else (),
            router=tool.gates.router,
            phase=tool.gates.phase,
            cluster=tool.cluster,
            purity=tool.purity,
            dispatch_kind=tool.dispatch_kind,
        )


@dataclass(frozen=True, slots=True)
class LockedPlugin:
    """One plugin as locked: origin, tree digest with its file listing, API version and tools."""

    plugin_id: str
    distribution: str
    version: str
    entry_point: str
    api_version: int | None
    source_kind: str
    source_url: str | None
    commit: str | None
    artifact_sha256: str | None
    tree_digest: str
    digest_scope: str
    files: tuple[tuple[str, str], ...]
    tools: tuple[LockedTool, ...] = ()

    def __post_init__(self) -> None:
        # Canonical order, whatever order the caller used: equal locks compare and render equal.
        object.__setattr__(self, "files", tuple(sorted(self.files)))
        object.__setattr__(self, "tools", tuple(sorted(self.tools, key=lambda t: t.name)))

    @classmethod
    def from_provenance(
        cls, record: ProvenanceRecord, tools: Iterable[ToolDefinition] = (), api_version: int | None = None
    ) -> LockedPlugin:
        """Lock a plugin from its provenance record and its registered tools."""
        return cls(
            plugin_id=record.plugin_id,
            distribution=record.distribution,
            version=record.version,
            entry_point=record.entry_point,
            api_version=api_version,
            source_kind=record.source_kind,
            source_url=record.source_url,
            commit=record.commit,
            artifact_sha256=record.artifact_sha256,
            tree_digest=record.tree_digest,
            digest_scope=record.digest_scope,
            files=tuple(record.files),
            tools=tuple(LockedTool.from_definition(t) for t in tools),
        )

    def tool(self, name: str) -> LockedTool | None:
        """The locked tool called ``name``, if any."""
        return next((t for t in self.tools if t.name == name), None)


@dataclass(frozen=True, slots=True)
class LockFile:
    """The whole ``reyn.lock``: format version and the locked plugins, sorted by id."""

    plugins: tuple[LockedPlugin, ...] = ()
    version: int = LOCK_VERSION

    def __post_init__(self) -> None:
        object.__setattr__(self, "plugins", tuple(sorted(self.plugins, key=lambda p: p.plugin_id)))

    def plugin(self, plugin_id: str) -> LockedPlugin | None:
        """The locked plugin ``plugin_id``, if any."""
        return next((p for p in self.plugins if p.plugin_id == plugin_id), None)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (same content as the TOML)."""
        return {"version": self.version, "plugins": {p.plugin_id: _plugin_table(p) for p in self.plugins}}


# --------------------------------------------------------------------------- writing


_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")
_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}


def _toml_str(value: str) -> str:
    out = []
    for ch in value:
        if ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def _toml_key(key: str) -> str:
    return key if _BARE_KEY.fullmatch(key) else _toml_str(key)


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return _toml_str(value)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    raise TypeError(f"cannot write {type(value).__name__} to reyn.lock")


def _plugin_table(p: LockedPlugin) -> dict[str, Any]:
    head = {
        "distribution": p.distribution,
        "version": p.version,
        "entry_point": p.entry_point,
        "api_version": p.api_version,
        "source_kind": p.source_kind,
        "source_url": p.source_url,
        "commit": p.commit,
        "artifact_sha256": p.artifact_sha256,
        "tree_digest": p.tree_digest,
        "digest_scope": p.digest_scope,
    }
    table: dict[str, Any] = {k: v for k, v in head.items() if v is not None}
    table["files"] = dict(p.files)
    table["tools"] = {t.name: _tool_table(t) for t in p.tools}
    return table


def _tool_table(t: LockedTool) -> dict[str, Any]:
    return {
        "sha256": t.sha256,
        "description": t.description,
        "parameters_sha256": t.parameters_sha256,
        "properties": list(t.properties),
        "router": t.router,
        "phase": t.phase,
        "cluster": t.cluster,
        "purity": t.purity,
        "dispatch_kind": t.dispatch_kind,
    }


def render_lock(lock: LockFile) -> str:
    """The canonical TOML text of ``lock``: same lock, same bytes."""
    lines = [
        "# reyn.lock, written by `reyn plugins lock`. Do not edit by hand: review its changes like code.",
        f"version = {lock.version}",
    ]
    for p in lock.plugins:
        table = _plugin_table(p)
        prefix = f"plugins.{_toml_key(p.plugin_id)}"
        lines += ["", f"[{prefix}]"]
        lines += [
            f"{_toml_key(k)} = {_toml_value(v)}" for k, v in table.items() if k not in ("files", "tools")
        ]
        lines += ["", f"[{prefix}.files]"]
        lines += [f"{_toml_key(path)} = {_toml_value(sha)}" for path, sha in sorted(p.files)]
        for t in p.tools:
            lines += ["", f"[{prefix}.tools.{_toml_key(t.name)}]"]
            lines += [f"{k} = {_toml_value(v)}" for k, v in _tool_table(t).items()]
    return "\n".join(lines) + "\n"


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
    if type(version) is not int or version != LOCK_VERSION:
        raise r.fail(
            "version",
            f"unsupported lock version {version!r} (this Reyn reads version {LOCK_VERSION}); "
            "regenerate it with `reyn plugins lock`",
        )
    r.keys(data, "", required=("version",), optional=("plugins",))
    plugins = r.table(data.get("plugins", {}), "plugins")
    return LockFile(
        plugins=tuple(_read_plugin(r, pid, r.table(t, f"plugins.{pid}")) for pid, t in plugins.items())
    )


def _read_plugin(r: _Reader, pid: str, t: dict[str, Any]) -> LockedPlugin:
    where = f"plugins.{_toml_key(pid)}"
    r.keys(
        t,
        where,
        required=(
            "distribution",
            "version",
            "entry_point",
            "source_kind",
            "tree_digest",
            "digest_scope",
            "files",
        ),
        optional=("api_version", "source_url", "commit", "artifact_sha256", "tools"),
    )
    api = t.get("api_version")
    if api is not None and type(api) is not int:
        raise r.fail(f"{where}.api_version", f"expected an integer, got {type(api).__name__}")
    files_t = r.table(t["files"], f"{where}.files")
    files: list[tuple[str, str]] = []
    for path, sha in files_t.items():
        if not isinstance(sha, str) or not _SHA256_HEX.fullmatch(sha):
            raise r.fail(f"{where}.files.{_toml_str(path)}", f"{sha!r} is not a sha256 hex digest")
        files.append((path, sha))
    plugin = LockedPlugin(
        plugin_id=pid,
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


def _read_tool(r: _Reader, where: str, name: str, t: dict[str, Any]) -> LockedTool:
    where = f"{where}.{_toml_key(name)}"
    fields = (
        "sha256",
        "description",
        "parameters_sha256",
        "properties",
        "router",
        "phase",
        "cluster",
        "purity",
        "dispatch_kind",
    )
    r.keys(t, where, required=fields)
    props = t["properties"]
    if not isinstance(props, list) or not all(isinstance(p, str) for p in props):
        raise r.fail(f"{where}.properties", "expected a list of strings")
    return LockedTool(
        name=name,
        sha256=r.string(t, "sha256", where, _SHA256_TAGGED),
        description=r.string(t, "description", where),
        parameters_sha256=r.string(t, "parameters_sha256", where, _SHA256_TAGGED),
        properties=tuple(props),
        router=r.string(t, "router", where),
        phase=r.string(t, "phase", where),
        cluster=r.string(t, "cluster", where),
        purity=r.string(t, "purity", where),
        dispatch_kind=r.string(t, "dispatch_kind", where),
    )


# --------------------------------------------------------------------------- drift


@dataclass(frozen=True, slots=True)
class Drift:
    """One difference between the lock and the installed world. ``kind`` is one of ``DRIFT_KINDS``."""

    plugin_id: str
    kind: str
    detail: str
    tool: str | None = None
    path: str | None = None

    def __str__(self) -> str:
        return self.detail

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (``reyn plugins audit --json``)."""
        return {
            "plugin": self.plugin_id,
            "kind": self.kind,
            "detail": self.detail,
            "tool": self.tool,
            "path": self.path,
        }


def _short(digest: str | None) -> str:
    if not digest:
        return "none"
    tag, _, hexpart = digest.rpartition(":")
    return f"{tag + ':' if tag else ''}{hexpart[:12]}…"


def _clip(text: str, limit: int = 120) -> str:
    return repr(text if len(text) <= limit else text[: limit - 1] + "…")


def compare_provenance(locked: LockedPlugin, record: ProvenanceRecord) -> list[Drift]:
    """What differs between a locked plugin and its current origin record (run before import)."""
    pid = locked.plugin_id
    out: list[Drift] = []
    if record.distribution != locked.distribution:
        out.append(
            Drift(
                pid,
                "distribution_changed",
                f"plugin {pid!r} now comes from distribution {record.distribution!r}; "
                f"the lock has {locked.distribution!r}",
            )
        )
    renamed = _renamed_metadata(locked, record)
    if record.version != locked.version:
        folded = f" (its {len(renamed)} .dist-info file(s) moved with it)" if renamed else ""
        out.append(
            Drift(
                pid,
                "version_changed",
                f"plugin {pid!r}: version {locked.version} in the lock, {record.version} installed{folded}",
            )
        )
    if record.entry_point != locked.entry_point:
        out.append(
            Drift(
                pid,
                "entry_point_changed",
                f"plugin {pid!r}: entry point {record.entry_point!r}; the lock has {locked.entry_point!r}",
            )
        )
    changes = [
        f"{name} {old!r} → {new!r}"
        for name, old, new in (
            ("source_kind", locked.source_kind, record.source_kind),
            ("source_url", locked.source_url, record.source_url),
            ("commit", locked.commit, record.commit),
            ("artifact_sha256", locked.artifact_sha256, record.artifact_sha256),
            ("digest_scope", locked.digest_scope, record.digest_scope),
        )
        if old != new
    ]
    if changes:
        out.append(Drift(pid, "source_changed", f"plugin {pid!r}: source changed: {'; '.join(changes)}"))
    if record.tree_digest != locked.tree_digest:
        out += _file_drifts(locked, record, renamed)
    return out


def _renamed_metadata(locked: LockedPlugin, record: ProvenanceRecord) -> dict[str, str]:
    """Locked path → installed path for the files of a ``.dist-info`` folder renamed by a version bump
    (``name-0.1.0.dist-info/METADATA`` → ``name-0.2.0.dist-info/METADATA``). Their bytes change with
    the version by nature; the version drift reports them once instead of one removal and one
    addition per file. Files outside that folder are compared as always."""
    if record.version == locked.version:
        return {}

    def folder(version: str, files: Sequence[str]) -> str | None:
        tops = {p.split("/", 1)[0] for p in files if "/" in p}
        found = [t for t in tops if t.endswith(f"-{version}.dist-info")]
        return found[0] if len(found) == 1 else None

    old_dir = folder(locked.version, [p for p, _ in locked.files])
    new_dir = folder(record.version, [p for p, _ in record.files])
    if old_dir is None or new_dir is None:
        return {}
    installed = {p for p, _ in record.files}
    out = {}
    for path, _ in locked.files:
        if path.startswith(old_dir + "/"):
            moved = new_dir + path[len(old_dir) :]
            if moved in installed:
                out[path] = moved
    return out


def _file_drifts(locked: LockedPlugin, record: ProvenanceRecord, renamed: Mapping[str, str]) -> list[Drift]:
    pid = locked.plugin_id
    old, new = dict(locked.files), dict(record.files)
    for was, now in renamed.items():
        old.pop(was)
        new.pop(now)
    files: list[Drift] = []
    for path in sorted(old.keys() | new.keys()):
        if path not in new:
            files.append(
                Drift(
                    pid,
                    "file_removed",
                    f"plugin {pid!r}: file {path} is in the lock but not installed",
                    path=path,
                )
            )
        elif path not in old:
            files.append(
                Drift(
                    pid,
                    "file_added",
                    f"plugin {pid!r}: file {path} is installed but not in the lock",
                    path=path,
                )
            )
        elif old[path] != new[path]:
            files.append(
                Drift(
                    pid,
                    "file_changed",
                    f"plugin {pid!r}: file {path} changed (sha256 {old[path][:12]}… in the lock, "
                    f"{new[path][:12]}… installed)",
                    path=path,
                )
            )
    counts = {k: sum(d.kind == k for d in files) for k in ("file_changed", "file_added", "file_removed")}
    summary = ", ".join(f"{n} {k.removeprefix('file_')}" for k, n in counts.items() if n) or (
        "only the .dist-info files the version change renamed" if renamed else "no file differs"
    )
    head = Drift(
        pid,
        "digest_changed",
        f"plugin {pid!r}: tree digest {_short(record.tree_digest)} installed, "
        f"{_short(locked.tree_digest)} in the lock ({summary})",
    )
    return [head, *files]


def compare_tools(locked: LockedPlugin, tools: Sequence[ToolDefinition]) -> list[Drift]:
    """What differs between a locked plugin's tools and the tools it registered now."""
    pid = locked.plugin_id
    current = {t.name: LockedTool.from_definition(t) for t in tools}
    was = {t.name: t for t in locked.tools}
    out: list[Drift] = []
    for name in sorted(was.keys() | current.keys()):
        old, new = was.get(name), current.get(name)
        if old is None and new is not None:
            out.append(
                Drift(
                    pid,
                    "tool_added",
                    f"plugin {pid!r}: new tool {name!r} (not in the lock): {_clip(new.description)}",
                    tool=name,
                )
            )
        elif new is None:
            out.append(
                Drift(
                    pid,
                    "tool_removed",
                    f"plugin {pid!r}: tool {name!r} is in the lock but no longer registered",
                    tool=name,
                )
            )
        elif old is not None and old.sha256 != new.sha256:
            out += _tool_drifts(pid, old, new)
    return out


def _tool_drifts(pid: str, old: LockedTool, new: LockedTool) -> list[Drift]:
    name = old.name
    out: list[Drift] = []
    if old.description != new.description:
        out.append(
            Drift(
                pid,
                "tool_description_changed",
                f"plugin {pid!r}: description of tool {name!r} changed from {_clip(old.description)} "
                f"to {_clip(new.description)}",
                tool=name,
            )
        )
    if old.parameters_sha256 != new.parameters_sha256:
        added = sorted(set(new.properties) - set(old.properties))
        removed = sorted(set(old.properties) - set(new.properties))
        parts = ([f"properties added: {', '.join(added)}"] if added else []) + (
            [f"properties removed: {', '.join(removed)}"] if removed else []
        )
        what = "; ".join(parts) or "same property names, other types or constraints"
        out.append(
            Drift(
                pid,
                "tool_schema_changed",
                f"plugin {pid!r}: parameters of tool {name!r} changed ({what})",
                tool=name,
            )
        )
    gates = [
        f"{k} {getattr(old, k)!r} → {getattr(new, k)!r}"
        for k in ("router", "phase", "cluster")
        if getattr(old, k) != getattr(new, k)
    ]
    if gates:
        out.append(
            Drift(
                pid,
                "tool_gates_changed",
                f"plugin {pid!r}: gates of tool {name!r} changed: {'; '.join(gates)}",
                tool=name,
            )
        )
    traits = [
        f"{k} {getattr(old, k)!r} → {getattr(new, k)!r}"
        for k in ("purity", "dispatch_kind")
        if getattr(old, k) != getattr(new, k)
    ]
    if traits:
        out.append(
            Drift(
                pid,
                "tool_traits_changed",
                f"plugin {pid!r}: tool {name!r} changed {'; '.join(traits)}",
                tool=name,
            )
        )
    if not out:  # the hash moved but no recorded part did: the lock's tool entry was edited
        out.append(
            Drift(
                pid,
                "tool_schema_changed",
                f"plugin {pid!r}: definition hash of tool {name!r} differs from the lock",
                tool=name,
            )
        )
    return out


# --------------------------------------------------------------------------- load results


class _PluginInfo(Protocol):
    @property
    def plugin_id(self) -> str: ...
    @property
    def status(self) -> str: ...
    @property
    def provenance(self) -> ProvenanceRecord | None: ...
    @property
    def tools(self) -> Sequence[Any]: ...
    @property
    def api_version(self) -> int | None: ...


class _Report(Protocol):
    @property
    def plugins(self) -> Sequence[_PluginInfo]: ...


class _LoadResult(Protocol):
    @property
    def registry(self) -> Any: ...

    @property
    def report(self) -> _Report: ...


_ACTIVE = ("loaded", "refused", "failed")


def _tools_of(info: _PluginInfo, result: _LoadResult) -> list[ToolDefinition]:
    """A plugin's tools as definitions (``info.tools`` may hold definitions or registered names)."""
    out = []
    for t in info.tools or ():
        out.append(t if isinstance(t, ToolDefinition) else result.registry.get(str(t)))
    return out


def lock_from_load(result: _LoadResult) -> LockFile:
    """A lock of every plugin of ``result`` with status ``loaded``: origin, files and tools."""
    plugins = []
    for info in result.report.plugins:
        if info.status != "loaded":
            continue
        if info.provenance is None:
            raise LockError(
                DEFAULT_LOCK_PATH, f"plugin {info.plugin_id!r} loaded without a provenance record"
            )
        plugins.append(
            LockedPlugin.from_provenance(info.provenance, _tools_of(info, result), info.api_version)
        )
    return LockFile(plugins=tuple(plugins))


def audit(lock: LockFile, result: _LoadResult) -> list[Drift]:
    """Every drift between ``lock`` and the plugins of ``result``, sorted by plugin id."""
    infos: dict[str, _PluginInfo] = {}
    for (
        info
    ) in result.report.plugins:  # one id may be listed per candidate distribution: prefer the active one
        if info.plugin_id not in infos or info.status in _ACTIVE:
            infos[info.plugin_id] = info
    out: list[Drift] = []
    for locked in lock.plugins:
        out += _audit_plugin(locked, infos.get(locked.plugin_id), result)
    for pid, info in sorted(infos.items()):
        if info.status in _ACTIVE and lock.plugin(pid) is None:
            prov = info.provenance
            origin = f" ({prov.distribution} {prov.version}, {_short(prov.tree_digest)})" if prov else ""
            out.append(
                Drift(
                    pid,
                    "plugin_added",
                    f"plugin {pid!r} is enabled but not in the lock{origin}; "
                    "run `reyn plugins lock` to accept it",
                )
            )
    return sorted(out, key=lambda d: d.plugin_id)


def _audit_plugin(locked: LockedPlugin, info: _PluginInfo | None, result: _LoadResult) -> list[Drift]:
    pid = locked.plugin_id
    if info is None or info.status not in _ACTIVE or info.provenance is None:
        why = {
            None: "is not installed",
            "discovered": "is installed but not enabled by the profile",
            "missing": "is enabled but not installed",
        }.get(info.status if info is not None else None, "has no provenance record")
        return [Drift(pid, "plugin_removed", f"locked plugin {pid!r} {why}")]
    out = compare_provenance(locked, info.provenance)
    out += [
        Drift(
            pid,
            "record_mismatch",
            f"plugin {pid!r}: installed file {path} does not match the installer's "
            "RECORD (changed, missing or added after install)",
            path=path,
        )
        for path in info.provenance.record_mismatches
    ]
    if info.status == "loaded":
        if info.api_version != locked.api_version:
            out.append(
                Drift(
                    pid,
                    "api_version_changed",
                    f"plugin {pid!r}: REYN_API {info.api_version} now, {locked.api_version} in the lock",
                )
            )
        out += compare_tools(locked, _tools_of(info, result))
    elif not out:
        out.append(
            Drift(
                pid,
                "plugin_not_loaded",
                f"locked plugin {pid!r} matches the lock but did not load (status {info.status}); "
                "see `reyn plugins show`",
            )
        )
    return out


__all__ = [
    "DRIFT_KINDS",
    "LOCK_VERSION",
    "Drift",
    "LockError",
    "LockFile",
    "LockedPlugin",
    "LockedTool",
    "audit",
    "compare_provenance",
    "compare_tools",
    "lock_from_load",
    "read_lock",
    "render_lock",
    "tool_definition_hash",
    "write_lock",
]
