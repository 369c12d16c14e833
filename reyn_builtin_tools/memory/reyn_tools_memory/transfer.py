"""Export and import: one Markdown file per entry, with a front-matter block people can read.

    ---
    slug: "release-checklist"
    name: "Release checklist"
    description: "Steps before tagging a release"
    type: "project"
    layer: "shared"
    created: "2025-01-01T10:00:00.000000+00:00"
    updated: "2025-01-02T09:30:00.000000+00:00"
    ---
    <body, byte for byte>

Values are written as JSON strings (which YAML also reads); hand-written files may use plain
values (``type: project``). Files live in ``shared/<slug>.md`` and ``agents/<agent>/<slug>.md``;
on import the front matter, not the path, says where an entry belongs. An import checks every file
first and writes nothing unless all are valid; then it writes all entries in one transaction.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import get_args
from urllib.parse import quote

from reyn_core.host import parse_json

from .backend import MEMORY_TYPES, Layer, MemoryBackend, MemoryEntry, PutResult, text_problem
from .export_folder import replace_folder
from .settings import MemorySettings
from .slugs import agent_problem, slug_problem

FIELDS = ("slug", "name", "description", "type", "layer", "agent", "created", "updated")
REQUIRED = ("slug", "name", "description", "type", "layer")
NAME_MAX = 200
DESCRIPTION_MAX = 1000
_KEY_RE = re.compile(r"^([A-Za-z_][A-Za-z0-9_-]*):(?:[ \t]+(.*))?$")


@dataclass(frozen=True, slots=True)
class ImportProblem:
    """One reason a file cannot be imported: the file, the 1-based line (0 = whole file) and why."""

    path: Path
    line: int
    message: str

    def render(self) -> str:
        """``path:line: message``."""
        return f"{self.path}:{self.line}: {self.message}" if self.line else f"{self.path}: {self.message}"


class _Problem(Exception):
    def __init__(self, message: str, line: int = 0) -> None:
        super().__init__(message)
        self.message = message
        self.line = line


# --------------------------------------------------------------------------- writing


def entry_to_markdown(e: MemoryEntry) -> str:
    """The Markdown file of one entry (the body is kept byte for byte)."""
    values = {
        "slug": e.slug,
        "name": e.name,
        "description": e.description,
        "type": e.type,
        "layer": e.layer,
        "agent": e.agent if e.layer == "agent" else None,
        "created": e.created,
        "updated": e.updated,
    }
    lines = ["---"]
    lines += [f"{k}: {json.dumps(v, ensure_ascii=False)}" for k, v in values.items() if v is not None]
    lines.append("---")
    return "\n".join(lines) + "\n" + (e.body or "")


def _folder_name(agent: str) -> str:
    name = quote(agent, safe="")
    return "%2E" + name[1:] if name.startswith(".") else name


def export_path(root: Path, e: MemoryEntry) -> Path:
    """Where ``e`` goes under ``root``: ``shared/<slug>.md`` or ``agents/<agent, %-quoted>/<slug>.md``."""
    if e.layer == "shared":
        return root / "shared" / f"{e.slug}.md"
    return root / "agents" / _folder_name(e.agent) / f"{e.slug}.md"


def export_store(store: MemoryBackend, root: Path) -> list[Path]:
    """Make ``root`` exactly the export of ``store``: one file per entry and nothing else (built
    beside it, then swapped in: ``export_folder``); returns the files written. Raises
    ``ExportRefused`` (nothing written) when ``root`` holds files an export did not write."""
    entries = store.all_entries()

    def write(folder: Path) -> list[Path]:
        written = []
        for e in entries:
            target = export_path(folder, e)
            target.parent.mkdir(parents=True, exist_ok=True)
            with open(target, "x", encoding="utf-8", newline="") as fh:
                fh.write(entry_to_markdown(e))
            written.append(target)
        return written

    return replace_folder(root, write)


# --------------------------------------------------------------------------- reading


def _value(raw: str, line: int) -> str:
    raw = raw.strip()
    if raw.startswith('"'):
        try:
            # one string: the parser stops at whatever follows it, so no value bound is needed
            value = parse_json(raw)
        except json.JSONDecodeError as exc:
            raise _Problem(f"malformed quoted value ({exc.msg})", line) from None
        if not isinstance(value, str):
            raise _Problem("a quoted value must be a single string", line)
        return value
    if raw.startswith(("'", "[", "{", "|", ">", "&", "*", "!")):
        raise _Problem(
            "unsupported value syntax; write the value plain or as a JSON string in double quotes", line
        )
    return raw


def parse_entry(text: str, path: Path, settings: MemorySettings) -> MemoryEntry:
    """One entry from the text of its file. Raises ``_Problem`` naming the line."""
    # Split on "\n" only: str.splitlines would also split inside values at U+2028, U+0085, ...
    lines = re.split(r"(?<=\n)", text)
    if lines and lines[-1] == "":
        lines.pop()
    if not lines or lines[0].rstrip("\r\n") != "---":
        raise _Problem("the file must start with a front-matter block: a line '---'", 1)
    values: dict[str, str] = {}
    end = None
    for i, raw in enumerate(lines[1:], start=2):
        line = raw.rstrip("\r\n")
        if line == "---":
            end = i
            break
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        m = _KEY_RE.match(line)
        if m is None:
            raise _Problem("expected 'key: value'", i)
        key, raw_value = m.group(1), m.group(2) or ""
        if key not in FIELDS:
            raise _Problem(f"unknown key {key!r}; allowed keys: {', '.join(FIELDS)}", i)
        if key in values:
            raise _Problem(f"key {key!r} appears twice", i)
        values[key] = _value(raw_value, i)
    if end is None:
        raise _Problem("the front-matter block is not closed by a line '---'", len(lines))
    body = "".join(lines[end:])
    return _entry(values, body, settings)


# A file's `layer`, by its text: the one check of it and the typed value an entry is built with.
_LAYERS: dict[str, Layer] = {layer: layer for layer in get_args(Layer)}


def _entry(v: dict[str, str], body: str, settings: MemorySettings) -> MemoryEntry:
    # Every required key must be present; all but the description must also be non-empty.
    missing = [k for k in REQUIRED if k not in v or (k != "description" and not v[k])]
    if missing:
        raise _Problem(f"missing front-matter keys: {', '.join(missing)}")
    for problem in (
        slug_problem(v["slug"]),
        None if v["type"] in MEMORY_TYPES else f"type {v['type']!r} is not one of {', '.join(MEMORY_TYPES)}",
        None if v["layer"] in _LAYERS else f"layer {v['layer']!r} is not 'shared' or 'agent'",
        None if len(v["name"]) <= NAME_MAX else f"the name is over {NAME_MAX} characters",
        None
        if len(v["description"]) <= DESCRIPTION_MAX
        else f"the description is over {DESCRIPTION_MAX} characters",
    ):
        if problem:
            raise _Problem(problem)
    agent = v.get("agent", "")
    if v["layer"] == "agent":
        problem = agent_problem(agent)
        if problem:
            raise _Problem(f"an agent-layer entry needs a valid 'agent': {problem}")
    elif agent:
        raise _Problem("a shared entry must not name an agent")
    for key in ("created", "updated"):
        if v.get(key):
            try:
                datetime.fromisoformat(v[key])
            except ValueError:
                raise _Problem(f"{key} {v[key]!r} is not an ISO 8601 timestamp") from None
    for key, value in (("name", v["name"]), ("description", v["description"]), ("body", body)):
        problem = text_problem(value)
        if problem:
            raise _Problem(f"the {key} {problem}")
    size = len(body.encode("utf-8"))
    if size > settings.max_body_bytes:
        raise _Problem(f"the body is {size:,} bytes, over the limit of {settings.max_body_bytes:,} bytes")
    return MemoryEntry(
        _LAYERS[v["layer"]],
        agent,
        v["slug"],
        v["name"],
        v["description"],
        v["type"],
        body,
        v.get("created", ""),
        v.get("updated", ""),
    )


def read_folder(root: Path, settings: MemorySettings) -> tuple[list[MemoryEntry], list[ImportProblem]]:
    """Every ``*.md`` file under ``root`` (hidden files and folders skipped), parsed and checked."""
    entries: list[MemoryEntry] = []
    problems: list[ImportProblem] = []
    seen: dict[tuple[str, str, str], Path] = {}
    limit = settings.max_body_bytes + 64 * 1024
    files = sorted(
        p for p in root.rglob("*.md") if not any(part.startswith(".") for part in p.relative_to(root).parts)
    )
    for path in files:
        try:
            if not path.is_file() or path.is_symlink():
                raise _Problem("not a regular file (symlinks are not followed)")
            if path.stat().st_size > limit:
                raise _Problem(f"the file is over {limit:,} bytes")
            try:
                text = path.read_bytes().decode("utf-8")
            except UnicodeDecodeError as exc:
                raise _Problem(f"not UTF-8 text (byte {exc.start})") from None
            entry = parse_entry(text, path, settings)
        except _Problem as exc:
            problems.append(ImportProblem(path, exc.line, exc.message))
            continue
        except OSError as exc:
            problems.append(ImportProblem(path, 0, f"cannot read: {exc.strerror}"))
            continue
        key = (entry.layer, entry.agent, entry.slug)
        if key in seen:
            problems.append(
                ImportProblem(path, 0, f"the same entry as {seen[key]} ({entry.layer} {entry.slug!r})")
            )
            continue
        seen[key] = path
        entries.append(entry)
    return entries, problems


def import_folder(
    store: MemoryBackend, root: Path, settings: MemorySettings
) -> tuple[list[PutResult], list[ImportProblem]]:
    """Import ``root`` into ``store``: all entries in one transaction, or nothing if any file is bad."""
    entries, problems = read_folder(root, settings)
    if problems:
        return [], problems
    return store.put_many(entries), []
