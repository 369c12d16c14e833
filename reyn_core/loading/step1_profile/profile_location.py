"""Finding and reading the profile file, without pydantic: ``find_profile_file`` and the TOML reader.

``loading.profile`` validates what is found here.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from reyn_core.errors import ProfileError

PROFILE_FILE_NAME = "reyn.toml"


def parse_toml(text: str, source: str) -> dict[str, Any]:
    """``text`` parsed as TOML; ``ProfileError`` naming ``source`` when it is not valid TOML."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on 3.10 only
        import tomli as tomllib
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ProfileError(f"{source}: invalid TOML: {exc}", file=source) from None


def read_profile_text(path: Path) -> str:
    """The profile file's text; ``ProfileError`` when it cannot be read as UTF-8."""
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ProfileError(f"{path}: cannot read profile file: {exc}", file=str(path)) from None


def find_profile_file(
    profile_file: str | os.PathLike[str] | None = None, cwd: str | os.PathLike[str] | None = None
) -> tuple[Path, bool] | None:
    """The profile file to use and whether it is a ``pyproject.toml``, or None (no profile).

    First match wins: ``profile_file`` (``--profile-file``), ``$REYN_PROFILE_FILE``, ``./reyn.toml``,
    ``[tool.reyn]`` in ``./pyproject.toml``, then ``<user config dir>/reyn.toml``.
    """
    here = Path(cwd) if cwd is not None else Path.cwd()
    explicit = profile_file if profile_file is not None else os.environ.get("REYN_PROFILE_FILE") or None
    if explicit is not None:
        path = Path(explicit).expanduser()
        path = path if path.is_absolute() else here / path
        if not path.is_file():
            origin = "--profile-file" if profile_file is not None else "$REYN_PROFILE_FILE"
            raise ProfileError(f"{path}: profile file given by {origin} does not exist", file=str(path))
        return path, path.name == "pyproject.toml"
    local = here / PROFILE_FILE_NAME
    if local.is_file():
        return local, False
    pyproject = here / "pyproject.toml"
    if pyproject.is_file() and _has_tool_reyn(pyproject):
        return pyproject, True
    from reyn_core.loading.userdirs import user_config_dir

    user = user_config_dir() / PROFILE_FILE_NAME
    if user.is_file():
        return user, False
    return None


def _has_tool_reyn(pyproject: Path) -> bool:
    data = parse_toml(read_profile_text(pyproject), str(pyproject))
    tool = data.get("tool")
    return isinstance(tool, Mapping) and "reyn" in tool


__all__ = ["PROFILE_FILE_NAME", "find_profile_file", "parse_toml", "read_profile_text"]
