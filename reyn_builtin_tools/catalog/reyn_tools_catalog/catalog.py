"""Skills and agents read from folders, or from the host's own catalogue, and what went wrong doing so.

A bad file never breaks loading: it becomes a ``CatalogDiagnostic`` (stable code, severity, file,
line, message, hint) and every other file still loads. ``catalog_diagnostics(settings)`` returns
them for ``reyn doctor`` (the plugin's ``reyn_diagnostics`` hook hands them to the load report). Each
file is checked by ``checks.check_file``, which ``lint_skill`` runs too.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from reyn_core import ToolContext, settings_as

from .records import CODES, DEFAULT_CATEGORY, MAX_DEPTH, Agent, Catalog, CatalogDiagnostic, Skill
from .service import catalog_service
from .settings import CatalogSettings

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


def _skipped(problem: CatalogDiagnostic, kind: str) -> CatalogDiagnostic:
    """An error that made the loader skip the file, saying so."""
    return replace(problem, message=f"{kind} file skipped: {problem.message}")


def _load_kind(
    folders: list[Path], *, skills: bool, limit: int
) -> tuple[dict[str, Any], list[CatalogDiagnostic], dict[str, tuple[Path, ...]]]:
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
            # Only with a file to read: a load without skill or agent files imports no checks.
            from .checks import check_file

            record, problems = check_file(path, limit, skill=skills)
            if record is None:
                diags.extend(_skipped(p, kind) if p.severity == "error" else p for p in problems)
                continue
            diags.extend(problems)
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
    clashes = {name: tuple(paths) for name, paths in sorted(claims.items()) if len(paths) > 1}
    return dict(sorted(by_name.items())), diags, clashes


_CACHE_LOCK = threading.Lock()
_CACHE: dict[tuple[Any, ...], tuple[Any, Catalog]] = {}
RACY_NS = 2_000_000_000
"""A file changed this recently is read again on the next call (its catalogue is not kept): a second
change within one timestamp tick would otherwise look like no change."""


def _signature(folders: Iterable[Path], skills: bool, now_ns: int) -> tuple[Any, ...] | None:
    """What every file is now: its inode, size, mtime and ctime. The ctime is the kernel's (no
    ``os.utime`` sets it), so bytes replaced with the size and mtime kept still change the signature.
    None when a file changed within ``RACY_NS`` of ``now_ns``: such a catalogue is not kept."""
    sig: list[Any] = []
    for folder in folders:
        if not folder.is_dir():
            sig.append((str(folder), None))
            continue
        for p in _files(folder, skills=skills):
            try:
                st = p.lstat()
            except OSError:
                sig.append((str(p), None))
                continue
            if now_ns - max(st.st_mtime_ns, st.st_ctime_ns) < RACY_NS:
                return None
            sig.append((str(p), st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns))
    return tuple(sig)


def load_catalog(settings: CatalogSettings | None = None, workspace: Path | None = None) -> Catalog:
    """The catalogue configured by ``settings`` (folders resolved against ``workspace``, default cwd).
    Kept between calls only while no file was added, removed or changed (inode, size, mtime and the
    kernel's ctime all equal), and never for files changed in the last two seconds."""
    settings = settings or CatalogSettings()
    workspace = workspace or Path.cwd()
    skill_dirs = settings.resolve(settings.skill_dirs, workspace)
    agent_dirs = settings.resolve(settings.agent_dirs, workspace)
    key = (tuple(skill_dirs), tuple(agent_dirs), settings.max_file_bytes)
    now_ns = time.time_ns()
    skill_sig, agent_sig = _signature(skill_dirs, True, now_ns), _signature(agent_dirs, False, now_ns)
    sig = None if skill_sig is None or agent_sig is None else (skill_sig, agent_sig)
    with _CACHE_LOCK:
        hit = _CACHE.get(key)
        if sig is not None and hit is not None and hit[0] == sig:
            return hit[1]
    skills, d1, clashes = _load_kind(skill_dirs, skills=True, limit=settings.max_file_bytes)
    agents, d2, _ = _load_kind(agent_dirs, skills=False, limit=settings.max_file_bytes)
    catalog = Catalog(skills, agents, tuple(d1 + d2), clashes)
    with _CACHE_LOCK:
        if sig is None:
            _CACHE.pop(key, None)
        else:
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
    from .checks import Invalid, check_description, check_input_schema, check_name  # a record to check

    try:
        name, description = check_name(values, {}), check_description(values, {})
        if cls is Skill:
            schema = values.get("input_schema")
            problem = check_input_schema(schema) if schema is not None else None
            if problem:
                raise Invalid("RK007", problem)
            return Skill(
                name,
                description,
                str(values.get("category") or DEFAULT_CATEGORY),
                schema,
                str(values.get("instructions", "")),
            ), None
        tools = values.get("tools")
        if tools is not None and (isinstance(tools, str) or not all(isinstance(t, str) for t in tools)):
            raise Invalid("RK008", "'tools' must be a list of tool names")
        return Agent(
            name,
            description,
            tuple(tools) if tools is not None else None,
            values.get("model"),
            str(values.get("instructions", "")),
        ), None
    except Invalid as exc:
        return None, CatalogDiagnostic("RK008", f"host {kind} #{index}: {exc.message}")


def coerce_host_catalog(source: Any) -> Catalog:
    """The host's own catalogue (``CatalogBridge.catalog``) as a ``Catalog``.

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
    """The catalogue of this call: the host's (``CatalogBridge.catalog``) when supplied, else the folders."""
    host = catalog_service(ctx).catalog
    if host is not None:
        return coerce_host_catalog(host)
    return load_catalog(settings_as(ctx, CatalogSettings), ctx.workspace)


__all__ = [
    "CODES",
    "Agent",
    "Catalog",
    "CatalogDiagnostic",
    "Skill",
    "catalog_diagnostics",
    "catalog_for",
    "coerce_host_catalog",
    "load_catalog",
]
