"""``lint_skill``: the catalogue's own checks (``checks.check_file``) on one skill folder of the
workspace, every problem with its file and line, plus the one check that needs the catalogue: a name
another loaded skill already has (RK003, which would drop both)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from reyn_core import ArgumentProblem, InvalidToolArguments, ToolContext, settings_as

from .catalog import catalog_for
from .checks import check_file
from .records import CatalogDiagnostic, Skill
from .settings import CatalogSettings

SKILL_FILE = "SKILL.md"


def _refuse(message: str) -> InvalidToolArguments:
    return InvalidToolArguments(
        f"invalid arguments for 'lint_skill': /path: {message}",
        tool="lint_skill",
        problems=[ArgumentProblem("/path", message)],
    )


def skill_file_in(workspace: Path, path: str) -> Path:
    """The SKILL.md of the skill folder ``path`` (or ``path`` itself when it names a SKILL.md), as a
    real path inside ``workspace``; else ``InvalidToolArguments`` saying why. Links in the folder's
    path are resolved once here and the result must still lie in the workspace; the file itself is
    then read without following a link, as the catalogue reads it."""
    root = os.path.realpath(workspace)
    if "\0" in path:
        raise _refuse("the path contains a NUL character")
    given = Path(path)
    target = given if given.is_absolute() else Path(root) / given
    if target.name == SKILL_FILE:
        folder, leaf = os.path.realpath(target.parent), SKILL_FILE
    else:
        folder, leaf = os.path.realpath(target), SKILL_FILE
    if not (folder == root or folder.startswith(root + os.sep)):
        raise _refuse(
            f"{path[:200]!r} leads outside the workspace {root} (through '..', an absolute path or a "
            "symbolic link); lint_skill checks skill folders inside the workspace only"
        )
    if not os.path.isdir(folder):
        raise _refuse(f"{path[:200]!r} is not a folder in the workspace; give the skill's folder")
    return Path(folder) / leaf


def _problem(d: CatalogDiagnostic, root: str) -> dict[str, Any]:
    where = str(d.path) if d.path else None
    if where and (where == root or where.startswith(root + os.sep)):
        where = os.path.relpath(where, root)
    out: dict[str, Any] = {"code": d.code, "severity": d.severity, "file": where, "line": d.line}
    out["message"] = d.message
    if d.hint:
        out["hint"] = d.hint
    return out


def lint_skill_folder(path: str, ctx: ToolContext) -> dict[str, Any]:
    """Every problem of the skill at ``path`` (relative to the workspace), and whether it would load."""
    settings = settings_as(ctx, CatalogSettings)
    root = os.path.realpath(ctx.workspace)
    skill_file = skill_file_in(ctx.workspace, path)
    if not os.path.lexists(skill_file):
        problems = [
            CatalogDiagnostic(
                "RK006",
                f"the folder has no {SKILL_FILE}",
                f"create {SKILL_FILE} with front matter",
                skill_file,
            )
        ]
        record = None
    else:
        record, problems = check_file(skill_file, settings.max_file_bytes, skill=True)
    if isinstance(record, Skill):
        problems += _name_taken(record, ctx)
    errors = sum(1 for p in problems if p.severity == "error")
    return {
        "skill": record.name if isinstance(record, Skill) else None,
        "file": os.path.relpath(skill_file, root),
        "loads": errors == 0,
        "errors": errors,
        "warnings": len(problems) - errors,
        "problems": [_problem(p, root) for p in problems],
    }


def _name_taken(skill: Skill, ctx: ToolContext) -> list[CatalogDiagnostic]:
    """RK003 when another file of the catalogue declares the same name: a loaded skill, or files
    the catalogue already dropped for declaring it (the checked file may be one of them)."""
    try:
        catalog = catalog_for(ctx)
    except Exception:  # a broken host catalogue must not break the lint of a file
        return []
    if skill.path is None:
        return []
    mine = os.path.realpath(skill.path)
    loaded = catalog.skills.get(skill.name)
    claimants = [
        *catalog.skill_clashes.get(skill.name, ()),
        *([loaded.path] if loaded and loaded.path else []),
    ]
    others = sorted({str(p) for p in claimants if os.path.realpath(p) != mine})
    if not others:
        return []
    return [
        CatalogDiagnostic(
            "RK003",
            f"skill name {skill.name!r} is also declared by {', '.join(others)}; "
            "the catalogue loads none of them",
            "rename one of them",
            skill.path,
        )
    ]
