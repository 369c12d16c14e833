"""The checks of one skill or agent file: the catalogue applies them when it loads its folders, and
``lint_skill`` applies the very same functions to a skill an author is writing.

Every check runs, and each problem is one ``CatalogDiagnostic`` with its file and line: the loader
skips a file with an error and loads it with warnings; ``lint_skill`` reports them all. The checks:
the front matter parses (``frontmatter.py``: size, keys and nesting bounded), ``name`` and
``description`` are present and valid, ``category`` / ``model`` are one line, ``input_schema`` passes
the core's one validator factory, ``tools`` is a list of names, unknown keys are named, files the
instructions link to exist inside the skill's folder, and the file is a regular UTF-8 file under the
size limit, never read through a symbolic link.
"""

from __future__ import annotations

import errno
import functools
import json
import os
import re
import stat
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

from reyn_core import SchemaRefused, json_schema_validator

from .frontmatter import FrontMatter, FrontMatterError, parse_front_matter
from .records import (
    AGENT_KEYS,
    DEFAULT_CATEGORY,
    DESCRIPTION_MAX,
    NAME_RE,
    NAME_RULE,
    SKILL_KEYS,
    Agent,
    CatalogDiagnostic,
    Skill,
)

T = TypeVar("T")


class Invalid(Exception):
    """One problem found by a check: its code, message, line (0: the whole file) and hint."""

    def __init__(self, code: str, message: str, line: int = 0, hint: str = "") -> None:
        super().__init__(message)
        self.code, self.message, self.line, self.hint = code, message, line, hint

    def diagnostic(self, path: Path | None) -> CatalogDiagnostic:
        """This problem as a diagnostic about the file at ``path``."""
        return CatalogDiagnostic(self.code, self.message, self.hint, path, self.line)


def check_name(values: Mapping[str, Any], lines: Mapping[str, int]) -> str:
    name = values.get("name")
    if not isinstance(name, str) or not name:
        raise Invalid("RK002", "missing 'name'", lines.get("name", 0), "add a line 'name: <name>'")
    if NAME_RE.fullmatch(name) is None:
        raise Invalid("RK002", f"name {name[:80]!r} is invalid: {NAME_RULE}", lines.get("name", 0))
    return name


def check_description(values: Mapping[str, Any], lines: Mapping[str, int]) -> str:
    text = values.get("description")
    if not isinstance(text, str) or not text.strip():
        raise Invalid(
            "RK002",
            "missing 'description'",
            lines.get("description", 0),
            "models choose by the description; add 'description: <one or two sentences>'",
        )
    text = text.strip()
    if len(text) > DESCRIPTION_MAX:
        raise Invalid(
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
        raise Invalid(
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


# --------------------------------------------------------------------------- files a skill links to

# An inline Markdown link or image target: ``[text](target)`` / ``![alt](target "title")``. The
# target is bounded, so a line of unclosed ``](`` is scanned in linear time.
_LINK = re.compile(r"\]\(\s*<?([^()\s<>]{1,1024})")
_FENCE = ("```", "~~~")
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


def _references(body: str, first_line: int) -> list[tuple[str, int]]:
    """Relative link targets in the instructions, outside fenced code, with their line in the file."""
    found: list[tuple[str, int]] = []
    fenced = False
    for offset, line in enumerate(body.split("\n")):
        if line.lstrip().startswith(_FENCE):
            fenced = not fenced
            continue
        if fenced:
            continue
        for match in _LINK.finditer(line):
            target = match.group(1).split("#", 1)[0].split("?", 1)[0]
            if target and not target.startswith(("/", "\\")) and _SCHEME.match(target) is None:
                found.append((target, first_line + offset))
    return found


def missing_references(fm: FrontMatter, body_line: int, path: Path | None) -> list[CatalogDiagnostic]:
    """RK009 for each relative link in the instructions whose file is not inside the skill's folder
    (missing, or outside it through ``..`` or a link). Nothing is read: only ``lstat`` and
    ``realpath`` of names inside the folder."""
    if path is None:
        return []
    folder = os.path.realpath(path.parent)
    out: list[CatalogDiagnostic] = []
    for target, line in _references(fm.body, body_line):
        resolved = os.path.realpath(os.path.join(folder, target))
        inside = resolved == folder or resolved.startswith(folder + os.sep)
        if inside and os.path.lexists(resolved):
            continue
        why = "is outside the skill's folder" if not inside else "does not exist"
        out.append(
            CatalogDiagnostic(
                "RK009",
                f"the instructions link to {target[:200]!r}, which {why}",
                "add the file to the skill's folder or fix the link",
                path,
                line,
            )
        )
    return out


# --------------------------------------------------------------------------- whole files


def _attempt(problems: list[CatalogDiagnostic], path: Path | None, check: Callable[[], T]) -> T | None:
    """``check()``, or None with its problem added to ``problems``: one failing check does not hide
    the others."""
    try:
        return check()
    except Invalid as exc:
        problems.append(exc.diagnostic(path))
        return None


def _front_matter(text: str, path: Path | None) -> tuple[FrontMatter | None, list[CatalogDiagnostic]]:
    try:
        return parse_front_matter(text), []
    except FrontMatterError as exc:
        return None, [Invalid("RK001", exc.message, exc.line).diagnostic(path)]


def _instructions(fm: FrontMatter) -> str:
    """The body as instructions: without leading or trailing blank lines, ending in one newline."""
    return fm.body.strip("\n") + ("\n" if fm.body.strip() else "")


def _body_line(text: str, fm: FrontMatter) -> int:
    """The line of the file where the body starts."""
    return text.count("\n", 0, len(text) - len(fm.body)) + 1


def _schema(values: Mapping[str, Any], lines: Mapping[str, int]) -> Any:
    schema = values.get("input_schema")
    if schema is not None:
        problem = check_input_schema(schema)
        if problem:
            raise Invalid(
                "RK007",
                problem,
                lines.get("input_schema", 0),
                'write input_schema as a JSON object, e.g. {"type": "object", "properties": {...}}',
            )
    return schema


_Check = Callable[[Mapping[str, Any], Mapping[str, int]], Any]


def _checked_entry(
    text: str, path: Path | None, keys: tuple[str, ...], checks: Mapping[str, _Check]
) -> tuple[FrontMatter | None, dict[str, Any], list[CatalogDiagnostic]]:
    """The front matter of a skill or agent file, the value of each check (``name``, ``description``,
    then ``checks``; None where it failed) and every problem found, unknown keys included. One
    failing check does not hide the others."""
    fm, problems = _front_matter(text, path)
    if fm is None:
        return None, {}, problems
    v, lines = fm.values, fm.lines
    every: dict[str, _Check] = {"name": check_name, "description": check_description, **checks}
    found = {
        key: _attempt(problems, path, functools.partial(check, v, lines)) for key, check in every.items()
    }
    problems += _warn_unknown(v, lines, keys, path)
    return fm, found, problems


def _usable(found: Mapping[str, Any], problems: list[CatalogDiagnostic]) -> bool:
    """Whether an entry can be built: it has a name and a description, and no check found an error."""
    named = found.get("name") is not None and found.get("description") is not None
    return named and not any(p.severity == "error" for p in problems)


def skill_from_text(text: str, path: Path | None = None) -> tuple[Skill | None, list[CatalogDiagnostic]]:
    """A skill from the text of its SKILL.md (None when any check found an error) and every problem
    found, errors and warnings, each with its line."""
    checks = {"category": lambda v, lines: _optional_text(v, lines, "category", 64), "schema": _schema}
    fm, f, problems = _checked_entry(text, path, SKILL_KEYS, checks)
    if fm is None:
        return None, problems
    problems += missing_references(fm, _body_line(text, fm), path)
    if not _usable(f, problems):
        return None, problems
    category = f["category"] or DEFAULT_CATEGORY
    return Skill(f["name"], f["description"], category, f["schema"], _instructions(fm), path), problems


def _tools(values: Mapping[str, Any], lines: Mapping[str, int]) -> tuple[str, ...] | None:
    tools = values.get("tools")
    if tools is None:
        return None
    if isinstance(tools, str):
        tools = [t.strip() for t in tools.split(",") if t.strip()]
    if not isinstance(tools, list) or not all(isinstance(t, str) and t for t in tools):
        raise Invalid("RK002", "'tools' must be a list of tool names", lines.get("tools", 0))
    return tuple(tools)


def agent_from_text(text: str, path: Path | None = None) -> tuple[Agent | None, list[CatalogDiagnostic]]:
    """An agent from the text of its .md file (None when any check found an error) and every
    problem found."""
    checks = {"tools": _tools, "model": lambda v, lines: _optional_text(v, lines, "model")}
    fm, f, problems = _checked_entry(text, path, AGENT_KEYS, checks)
    if fm is None or not _usable(f, problems):
        return None, problems
    return Agent(f["name"], f["description"], f["tools"], f["model"], _instructions(fm), path), problems


_READ_FLAGS = (
    os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
)
_TOO_LARGE_HINT = "raise plugins.catalog.settings.max_file_bytes or shorten the file"
_LINKED = "a symbolic link; skill and agent files are never followed through links"


def read_entry_file(path: Path, limit: int) -> str:
    """The UTF-8 text of a skill or agent file, else ``Invalid`` (RK006). A symbolic link is refused
    like a folder link (``lstat`` first, then opened with ``O_NOFOLLOW`` and checked again with
    ``fstat``): a link could make a file outside the skill folders, such as a secret, part of a
    model's instructions."""
    try:
        if path.is_symlink():
            raise Invalid("RK006", _LINKED, hint="copy the file into the folder instead of linking it")
        if not stat.S_ISREG(path.lstat().st_mode):
            raise Invalid("RK006", "not a regular file")
        fd = os.open(path, _READ_FLAGS)
        with os.fdopen(fd, "rb") as fh:
            st = os.fstat(fh.fileno())
            if not stat.S_ISREG(st.st_mode):
                raise Invalid("RK006", "not a regular file")
            if st.st_size > limit:
                raise Invalid(
                    "RK006",
                    f"the file is {st.st_size:,} bytes, over the limit of {limit:,}",
                    hint=_TOO_LARGE_HINT,
                )
            data = fh.read(limit + 1)
        if len(data) > limit:
            raise Invalid("RK006", f"the file is over the limit of {limit:,} bytes", hint=_TOO_LARGE_HINT)
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise Invalid("RK006", f"not UTF-8 text (byte {exc.start})") from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:  # swapped for a link since the check
            raise Invalid("RK006", _LINKED) from None
        raise Invalid("RK006", f"cannot read the file: {exc.strerror}") from None


def check_file(
    path: Path, limit: int, *, skill: bool
) -> tuple[Skill | Agent | None, list[CatalogDiagnostic]]:
    """Read and check one skill (``skill``) or agent file: the record, or None, and every problem."""
    try:
        text = read_entry_file(path, limit)
    except Invalid as exc:
        return None, [exc.diagnostic(path)]
    return (skill_from_text if skill else agent_from_text)(text, path)
