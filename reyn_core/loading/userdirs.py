"""Platform-appropriate user directories for Reyn's profile and caches (no third-party dependency).

``user_config_dir()``: ``$XDG_CONFIG_HOME/reyn`` (default ``~/.config/reyn``) on Linux and other
Unixes, ``~/Library/Application Support/reyn`` on macOS, ``%APPDATA%\\reyn`` on Windows.
``user_cache_dir()``: ``$REYN_CACHE_DIR`` when set, else ``$XDG_CACHE_HOME/reyn`` (default
``~/.cache/reyn``), ``~/Library/Caches/reyn`` on macOS, ``%LOCALAPPDATA%\\reyn\\Cache`` on Windows.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

APP = "reyn"


def _env_dir(name: str) -> Path | None:
    value = os.environ.get(name)
    return Path(value) if value and os.path.isabs(value) else None


def user_config_dir() -> Path:
    """The directory holding the user-level ``reyn.toml``."""
    if sys.platform == "win32":
        base = _env_dir("APPDATA") or Path.home() / "AppData" / "Roaming"
        return base / APP
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Application Support" / APP
    return (_env_dir("XDG_CONFIG_HOME") or Path.home() / ".config") / APP


def user_cache_dir() -> Path:
    """The directory for Reyn's caches (digests, schema checks). Safe to delete at any time."""
    override = _env_dir("REYN_CACHE_DIR")
    if override is not None:
        return override
    if sys.platform == "win32":
        base = _env_dir("LOCALAPPDATA") or Path.home() / "AppData" / "Local"
        return base / APP / "Cache"
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Caches" / APP
    return (_env_dir("XDG_CACHE_HOME") or Path.home() / ".cache") / APP
