"""Skills and agents: the records, how they are read from folders, and what went wrong doing so.

A bad file never breaks loading: it becomes a ``CatalogDiagnostic`` (stable code, severity, file,
line, message, hint) and every other file still loads. ``catalog_diagnostics(settings)`` returns
them for ``reyn doctor``; the plugin also logs them as warnings when it registers its tools.
"""

from __future__ import annotations

import errno
import json
import logging
import os
import re
import stat
import threading
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any, Literal

from reyn_core import SchemaRefused, ToolContext, json_schema_validator, settings_as

from .frontmatter import FrontMatter, FrontMatterError, parse_front_matter
from .settings import CatalogSettings

log = logging.getLogger("reyn_tools_catalog")

NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
NAME_RULE = "1-64 characters: letters, digits, '.', '_' and '-', starting with a letter or digit"
DESCRIPTION_MAX = 1024
DEFAULT_CATEGORY = "general"
MAX_DEPTH = 4
SKILL_KEYS = ("name", "description", "category", "input_schema")
AGENT_KEYS = ("name", "description", "tools", "model")

# code -> (severity, title). Codes are stable; docs/packs/catalog.md lists them.
CODES: dict[str, tuple[Literal["error", "warning"], str]] = {
    "RK001": ("error", "malformed front matter"),
    "RK002": ("error", "missing or invalid field"),
    "RK003": ("error", "duplicate skill or agent name"),
    "RK004": ("warning", "configured folder does not exist"),
    "RK005": ("warning", "unknown front-matter key"),
    "RK006": ("error", "file unreadable or too large"),
    "RK007": ("error", "invalid input schema"),
    "RK008": ("error", "invalid record in the host catalogue"),
}


@dataclass(frozen=True, slots=True)
class CatalogDiagnostic:
    """One problem found while building a catalogue."""

    code: str
    message: str
    hint: str = ""
    path: Path | None = None
    line: int = 0

    @property
    def severity(self) -> str:
        """``error`` (the file was skipped) or ``warning`` (it loaded anyway)."""
        return CODES[self.code][0]

    def render(self) -> str:
        """``CODE severity path:line: message (hint)``."""
        where = (
            f"{self.path}:{self.line}: " if self.path and self.line else f"{self.path}: " if self.path else ""
        )
        hint = f" ({self.hint})" if self.hint else ""
        return f"{self.code} {self.severity} {where}{self.message}{hint}"

    def as_dict(self) -> dict[str, Any]:
        """Its own fields (``path`` as text) plus the rest of a core ``Diagnostic``: the severity,
        plugin ``catalog``, no tool."""
        path = str(self.path) if self.path else None
        return {**asdict(self), "path": path, "severity": self.severity, "plugin": "catalog", "tool": None}


@dataclass(frozen=True, slots=True)
class Skill:
    """A skill: what it does, how to call it (``input_schema``) and its instructions (the file body)."""

    name: str
    description: str
    category: str = DEFAULT_CATEGORY
    input_schema: Mapping[str, Any] | None = None
    instructions: str = ""
    path: Path | None = None

    def record(self) -> dict[str, Any]:
        """The full record ``describe_skill`` returns."""
        return _record(self)


@dataclass(frozen=True, slots=True)
class Agent:
    """An agent another agent may delegate to."""

    name: str
    description: str
    tools: tuple[str, ...] | None = None
    model: str | None = None
    instructions: str = ""
    path: Path | None = None

    def record(self) -> dict[str, Any]:
        """The full record ``describe_agent`` returns."""
        return _record(self)


def _record(entry: Skill | Agent) -> dict[str, Any]:
    """Every field of a skill or agent but its file path (host-only), tuples as lists."""
    values = {f.name: getattr(entry, f.name) for f in fields(entry) if f.name != "path"}
    return {k: list(v) if isinstance(v, tuple) else v for k, v in values.items()}


@dataclass(frozen=True, slots=True)
class Catalog:
    """Skills and agents by name, and the diagnostics of building them."""

    skills: Mapping[str, Skill] = field(default_factory=dict)
    agents: Mapping[str, Agent] = field(default_factory=dict)
    diagnostics: tuple[CatalogDiagnostic, ...] = ()


# --------------------------------------------------------------------------- field checks


class _Invalid(Exception):
    def __init__(self, code: str, message: str, line: int = 0, hint: str = "") -> None:
        super().__init__(message)
        self.code, self.message, self.line, self.hint = code, message, line, hint


def _name(values: Mapping[str, Any], lines: Mapping[str, int]) -> str:
    name = values.get("name")
    if not isinstance(name, str) or not name:
        raise _Invalid("RK002", "missing 'name'", lines.get("name", 0), "add a line 'name: <name>'")
    if NAME_RE.fullmatch(name) is None:
        raise _Invalid("RK002", f"name {name[:80]!r} is invalid: {NAME_RULE}", lines.get("name", 0))
    return name


def _description(values: Mapping[str, Any], lines: Mapping[str, int]) -> str:
    text = values.get("description")
    if not isinstance(text, str) or not text.strip():
        raise _Invalid(
            "RK002",
            "missing 'description'",
            lines.get("description", 0),
            "models choose by the description; add 'description: <one or two sentences>'",
        )
    text = text.strip()
    if len(text) > DESCRIPTION_MAX:
        raise _Invalid(
            "RK002",
            f"the description is {len(text)} characters, over the limit of {DESCRIPTION_MAX}",
            lines.get("description", 0),
        )
    return text


def _optional_text(
    values: Mapping[str, Any], lines: Mapping[str, int], key: str, limit: int = 200
) -> str | None:
    value = values.get(key)
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip() or len(value) > limit or "\n" in value.strip():
        raise _Invalid(
            "RK002", f"{key!r} must be one line of text (at most {limit} characters)", lines.get(key, 0)
        )
    return value.strip()


def check_input_schema(schema: Any) -> str | None:
    """Why ``schema`` cannot be a skill's input schema, or None. Screened by the core's validator
    factory: only local ``#/...`` references (nothing is ever fetched), patterns RE2 can run, a valid
    Draft 2020-12 schema."""
    if not isinstance(schema, Mapping):
        return "the input schema must be a JSON object"
    if schema.get("type", "object") != "object":
        return "the input schema's root must have type 'object' (skill input is a JSON object)"
    try:
        encoded = json.dumps(schema)
    except (TypeError, ValueError, RecursionError):
        return "the input schema is not JSON data"
    if len(encoded) > 64 * 1024:
        return "the input schema is over 64 KiB"
    try:
        json_schema_validator(schema)
    except SchemaRefused as exc:
        return f"the input schema is refused: {'; '.join(p.render() for p in exc.problems[:3])}"
    return None


def _warn_unknown(
    values: Mapping[str, Any], lines: Mapping[str, int], allowed: tuple[str, ...], path: Path | None
) -> list[CatalogDiagnostic]:
    return [
        CatalogDiagnostic(
            "RK005",
            f"unknown front-matter key {key!r} is ignored",
            f"allowed keys: {', '.join(allowed)}",
            path,
            lines.get(key, 0),
        )
        for key in values
        if key not in allowed
    ]


def _parse(text: str) -> tuple[FrontMatter, str, str, str]:
    """What skill and agent files share: the front matter, the checked name and description, and the
    body as instructions (without leading or trailing blank lines, ending in one newline)."""
    try:
        fm = parse_front_matter(text)
    except FrontMatterError as exc:
        raise _Invalid("RK001", exc.message, exc.line) from None
    instructions = fm.body.strip("\n") + ("\n" if fm.body.strip() else "")
    return fm, _name(fm.values, fm.lines), _description(fm.values, fm.lines), instructions


def skill_from_text(text: str, path: Path | None = None) -> tuple[Skill, list[CatalogDiagnostic]]:
    """A skill from the text of its SKILL.md, plus warnings. Raises ``_Invalid`` for errors."""
    fm, name, description, instructions = _parse(text)
    v, lines = fm.values, fm.lines
    category = _optional_text(v, lines, "category", 64) or DEFAULT_CATEGORY
    schema = v.get("input_schema")
    if schema is not None:
        problem = check_input_schema(schema)
        if problem:
            raise _Invalid(
                "RK007",
                problem,
                lines.get("input_schema", 0),
                'write input_schema as a JSON object, e.g. {"type": "object", "properties": {...}}',
            )
    skill = Skill(name, description, category, schema, instructions, path)
    return skill, _warn_unknown(v, lines, SKILL_KEYS, path)


def agent_from_text(text: str, path: Path | None = None) -> tuple[Agent, list[CatalogDiagnostic]]:
    """An agent from the text of its .md file, plus warnings. Raises ``_Invalid`` for errors."""
    fm, name, description, instructions = _parse(text)
    v, lines = fm.values, fm.lines
    tools = v.get("tools")
    if tools is not None:
        if isinstance(tools, str):
            tools = [t.strip() for t in tools.split(",") if t.strip()]
        if not isinstance(tools, list) or not all(isinstance(t, str) and t for t in tools):
            raise _Invalid("RK002", "'tools' must be a list of tool names", lines.get("tools", 0))
        tools = tuple(tools)
    agent = Agent(name, description, tools, _optional_text(v, lines, "model"), instructions, path)
    return agent, _warn_unknown(v, lines, AGENT_KEYS, path)


# --------------------------------------------------------------------------- folders


def _files(folder: Path, *, skills: bool) -> list[Path]:
    """SKILL.md files anywhere under ``folder`` (skills) or ``*.md`` files (agents), sorted.
    Hidden folders are skipped and folder symlinks are not followed."""
    found = []
    base_depth = len(folder.parts)
    for root, dirs, files in os.walk(folder):
        depth = len(Path(root).parts) - base_depth
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and depth < MAX_DEPTH)
        for f in files:
            if (f == "SKILL.md") if skills else (f.endswith(".md") and not f.startswith(".")):
                found.append(Path(root) / f)
    return sorted(found)


_READ_FLAGS = (
    os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
)


def _read(path: Path, limit: int) -> str:
    """The UTF-8 text of a regular file. A symbolic link is refused like a folder link (``lstat``
    first, then opened with ``O_NOFOLLOW`` and checked again with ``fstat``): a link could make a
    file outside the skill folders, such as a secret, part of a model's instructions."""
    try:
        if path.is_symlink():
            raise _Invalid(
                "RK006",
                "a symbolic link; skill and agent files are never followed through links",
                hint="copy the file into the folder instead of linking it",
            )
        if not stat.S_ISREG(path.lstat().st_mode):
            raise _Invalid("RK006", "not a regular file")
        fd = os.open(path, _READ_FLAGS)
        with os.fdopen(fd, "rb") as fh:
            st = os.fstat(fh.fileno())
            if not stat.S_ISREG(st.st_mode):
                raise _Invalid("RK006", "not a regular file")
            if st.st_size > limit:
                raise _Invalid(
                    "RK006",
                    f"the file is {st.st_size:,} bytes, over the limit of {limit:,}",
                    hint="raise plugins.catalog.settings.max_file_bytes or shorten the file",
                )
            data = fh.read(limit + 1)
        if len(data) > limit:
            raise _Invalid(
                "RK006",
                f"the file is over the limit of {limit:,} bytes",
                hint="raise plugins.catalog.settings.max_file_bytes or shorten the file",
            )
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _Invalid("RK006", f"not UTF-8 text (byte {exc.start})") from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:  # swapped for a link since the check
            raise _Invalid(
                "RK006", "a symbolic link; skill and agent files are never followed through links"
            ) from None
        raise _Invalid("RK006", f"cannot read the file: {exc.strerror}") from None


def _load_kind(
    folders: list[Path], *, skills: bool, limit: int
) -> tuple[dict[str, Any], list[CatalogDiagnostic]]:
    kind = "skill" if skills else "agent"
    diags: list[CatalogDiagnostic] = []
    by_name: dict[str, Any] = {}
    claims: dict[str, list[Path]] = {}
    for folder in folders:
        if not folder.is_dir():
            diags.append(
                CatalogDiagnostic(
                    "RK004",
                    f"the {kind} folder {folder} does not exist",
                    f"create it or remove it from plugins.catalog.settings.{kind}_dirs",
                    folder,
                )
            )
            continue
        for path in _files(folder, skills=skills):
            try:
                record, warnings = (skill_from_text if skills else agent_from_text)(_read(path, limit), path)
            except _Invalid as exc:
                diags.append(
                    CatalogDiagnostic(
                        exc.code, f"{kind} file skipped: {exc.message}", exc.hint, path, exc.line
                    )
                )
                continue
            diags.extend(warnings)
            claims.setdefault(record.name, []).append(path)
            by_name.setdefault(record.name, record)
    for name, paths in claims.items():
        if len(paths) > 1:  # no silent winner: every claimant is dropped
            del by_name[name]
            diags.append(
                CatalogDiagnostic(
                    "RK003",
                    f"{kind} name {name!r} is declared by {len(paths)} files: {', '.join(map(str, paths))}; "
                    "none of them is loaded",
                    "rename one of them",
                    paths[0],
                )
            )
    return dict(sorted(by_name.items())), diags


_CACHE_LOCK = threading.Lock()
_CACHE: dict[tuple[Any, ...], tuple[Any, Catalog]] = {}


def _signature(folders: Iterable[Path], skills: bool) -> tuple[Any, ...]:
    sig: list[Any] = []
    for folder in folders:
        if not folder.is_dir():
            sig.append((str(folder), None))
            continue
        for p in _files(folder, skills=skills):
            try:
                st = p.lstat()
                sig.append((str(p), st.st_mtime_ns, st.st_size))
            except OSError:
                sig.append((str(p), None))
    return tuple(sig)


def load_catalog(settings: CatalogSettings | None = None, workspace: Path | None = None) -> Catalog:
    """The catalogue configured by ``settings`` (folders resolved against ``workspace``, default cwd).
    Re-read only when a file was added, removed or changed."""
    settings = settings or CatalogSettings()
    workspace = workspace or Path.cwd()
    skill_dirs = settings.resolve(settings.skill_dirs, workspace)
    agent_dirs = settings.resolve(settings.agent_dirs, workspace)
    key = (tuple(skill_dirs), tuple(agent_dirs), settings.max_file_bytes)
    sig = (_signature(skill_dirs, True), _signature(agent_dirs, False))
    with _CACHE_LOCK:
        hit = _CACHE.get(key)
        if hit is not None and hit[0] == sig:
            return hit[1]
    skills, d1 = _load_kind(skill_dirs, skills=True, limit=settings.max_file_bytes)
    agents, d2 = _load_kind(agent_dirs, skills=False, limit=settings.max_file_bytes)
    catalog = Catalog(skills, agents, tuple(d1 + d2))
    with _CACHE_LOCK:
        _CACHE[key] = (sig, catalog)
    return catalog


def catalog_diagnostics(
    settings: CatalogSettings | Mapping[str, Any] | None = None, workspace: Path | None = None
) -> list[CatalogDiagnostic]:
    """Every problem in the configured skill and agent folders (for ``reyn doctor``)."""
    return list(load_catalog(settings_as(settings, CatalogSettings), workspace).diagnostics)


# --------------------------------------------------------------------------- host catalogue


def _records(source: Any, attr: str) -> list[Any]:
    value = source.get(attr) if isinstance(source, Mapping) else getattr(source, attr, None)
    if callable(value):
        value = value()
    if value is None:
        return []
    if isinstance(value, Mapping):
        return list(value.values())
    return list(value)


def _coerce(item: Any, cls: type[Any], index: int, kind: str) -> tuple[Any | None, CatalogDiagnostic | None]:
    if isinstance(item, cls):
        return item, None
    if not isinstance(item, Mapping):
        return None, CatalogDiagnostic(
            "RK008", f"host {kind} #{index} is a {type(item).__name__}, not a mapping or {cls.__name__}"
        )
    values = dict(item)
    try:
        name, description = _name(values, {}), _description(values, {})
        if cls is Skill:
            schema = values.get("input_schema")
            problem = check_input_schema(schema) if schema is not None else None
            if problem:
                raise _Invalid("RK007", problem)
            return Skill(
                name,
                description,
                str(values.get("category") or DEFAULT_CATEGORY),
                schema,
                str(values.get("instructions", "")),
            ), None
        tools = values.get("tools")
        if tools is not None and (isinstance(tools, str) or not all(isinstance(t, str) for t in tools)):
            raise _Invalid("RK008", "'tools' must be a list of tool names")
        return Agent(
            name,
            description,
            tuple(tools) if tools is not None else None,
            values.get("model"),
            str(values.get("instructions", "")),
        ), None
    except _Invalid as exc:
        return None, CatalogDiagnostic("RK008", f"host {kind} #{index}: {exc.message}")


def coerce_host_catalog(source: Any) -> Catalog:
    """The host's own catalogue (``HostBridge.catalog``) as a ``Catalog``.

    ``source`` may be a ``Catalog``, or any object or mapping with ``skills`` and ``agents`` — each a
    mapping or iterable of ``Skill`` / ``Agent`` records or of dicts with the same fields, or a
    callable returning one. Invalid records are skipped with an RK008 diagnostic.
    """
    if isinstance(source, Catalog):
        return source
    diags: list[CatalogDiagnostic] = []
    out: dict[str, dict[str, Any]] = {"skills": {}, "agents": {}}
    for attr, cls, kind in (("skills", Skill, "skill"), ("agents", Agent, "agent")):
        for i, item in enumerate(_records(source, attr)):
            record, diag = _coerce(item, cls, i, kind)
            if diag is not None or record is None:
                diags.extend([diag] if diag is not None else [])
            elif record.name in out[attr]:
                diags.append(
                    CatalogDiagnostic(
                        "RK003", f"host {kind} name {record.name!r} appears twice; the first is kept"
                    )
                )
            else:
                out[attr][record.name] = record
    return Catalog(dict(sorted(out["skills"].items())), dict(sorted(out["agents"].items())), tuple(diags))


def catalog_for(ctx: ToolContext) -> Catalog:
    """The catalogue of this call: the host's (``ctx.bridge.catalog``) when supplied, else the folders."""
    if ctx.bridge.catalog is not None:
        return coerce_host_catalog(ctx.bridge.catalog)
    return load_catalog(settings_as(ctx, CatalogSettings), ctx.workspace)
