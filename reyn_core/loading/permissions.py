"""What a plugin declares it needs: ``reyn_permissions.toml`` inside its hashed tree.

The file sits in the plugin's top-level import package, next to its code, so the tree digest, a
``digest`` pin and the lock cover it: a changed declaration is a changed file (drift), and the lock
records the parsed declaration too, so an audit says *what* changed. It is read only from bytes whose
sha256 is the one the digest listed, and parsed strictly (an unknown key is an error, not ignored)::

    version = 1

    [permissions]
    filesystem_read = true      # reads paths the operator chooses
    filesystem_write = false
    network = false             # internet sockets
    subprocess = false          # starting programs
    environment = ["EXAMPLE_API_KEY"]
    host_bridges = []           # e.g. ["run_skill"]: needs host objects, cannot run isolated

A plugin without the file declares nothing: isolated, it may read only its own code.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from reyn_core.jsondata import fields_json

DECLARATION_FILE = "reyn_permissions.toml"
DECLARATION_VERSION = 1
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")
_BRIDGE_NAME = re.compile(r"^[a-z_][a-z0-9_]{0,63}$")
PERMISSION_FLAGS = ("filesystem_read", "filesystem_write", "network", "subprocess")
"""The yes/no permissions a declaration (and the lock's copy of it) holds."""
PERMISSION_LISTS = ("environment", "host_bridges")
"""The permissions that are lists of names."""
_MAX_BYTES = 64 * 1024


class DeclarationError(ValueError):
    """The declaration file is malformed (the message names the key and what is allowed)."""


@dataclass(frozen=True, slots=True)
class DeclaredPermissions:
    """What a plugin says it needs when it runs isolated."""

    filesystem_read: bool = False
    """Reads paths the operator grants (``grants.read``)."""
    filesystem_write: bool = False
    """Writes below paths the operator grants (``grants.write``)."""
    network: bool = False
    """Opens internet sockets (``grants.network``)."""
    subprocess: bool = False
    """Starts programs (``grants.subprocess``); they run inside the same confinement."""
    environment: tuple[str, ...] = ()
    """Names of environment variables it reads (``grants.environment`` passes their values)."""
    host_bridges: tuple[str, ...] = ()
    """Host bridges it calls (``ToolContext.bridge``): a plugin naming any cannot run isolated."""
    source: str | None = None
    """The declaration file's path inside the plugin's tree (None: the plugin declares nothing)."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (``plugins show``, ``plugins list --json``, the lock): all but ``source``."""
        return fields_json(self, omit=("source",))

    @property
    def summary(self) -> str:
        """``read, network, env EXAMPLE_API_KEY`` — or ``nothing``."""
        names = {"filesystem_read": "read", "filesystem_write": "write"}
        parts = [names.get(flag, flag) for flag in PERMISSION_FLAGS if getattr(self, flag)]
        if self.environment:
            parts.append("env " + " ".join(self.environment))
        if self.host_bridges:
            parts.append("bridges " + " ".join(self.host_bridges))
        return ", ".join(parts) or "nothing"


NOTHING = DeclaredPermissions()


def parse_declaration(data: bytes, source: str) -> DeclaredPermissions:
    """Parse the declaration file's bytes; raises ``DeclarationError`` naming the key."""
    if len(data) > _MAX_BYTES:
        raise DeclarationError(f"{source} is {len(data)} bytes; a declaration is at most {_MAX_BYTES}")
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib  # type: ignore[no-redef]
    try:
        document = tomllib.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise DeclarationError(f"{source} is not valid TOML: {exc}") from None
    unknown = sorted(set(document) - {"version", "permissions"})
    if unknown:
        raise DeclarationError(f"{source}: unknown top-level keys {unknown}; known: version, permissions")
    if document.get("version") != DECLARATION_VERSION:
        raise DeclarationError(
            f"{source}: version = {document.get('version')!r}; this Reyn reads version {DECLARATION_VERSION}"
        )
    table = document.get("permissions", {})
    if not isinstance(table, Mapping):
        raise DeclarationError(f"{source}: [permissions] must be a table")
    known = (*PERMISSION_FLAGS, *PERMISSION_LISTS)
    unknown = sorted(set(table) - set(known))
    if unknown:
        raise DeclarationError(
            f"{source}: unknown keys {unknown} in [permissions]; known: {', '.join(known)}"
        )
    values: dict[str, Any] = {}
    for flag in PERMISSION_FLAGS:
        value = table.get(flag, False)
        if not isinstance(value, bool):
            raise DeclarationError(f"{source}: permissions.{flag} must be true or false, got {value!r}")
        values[flag] = value
    values["environment"] = _names(
        table.get("environment", []), _ENV_NAME, f"{source}: permissions.environment"
    )
    values["host_bridges"] = _names(
        table.get("host_bridges", []), _BRIDGE_NAME, f"{source}: permissions.host_bridges"
    )
    return DeclaredPermissions(**values, source=source)


def _names(value: object, pattern: re.Pattern[str], where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) and pattern.match(v) for v in value):
        raise DeclarationError(
            f"{where} must be a list of names matching {pattern.pattern}, got {value!r:.200}"
        )
    return tuple(sorted(set(value)))


def declaration_path(
    entry_point: str, module_locations: Sequence[tuple[str, str]], files: Iterable[tuple[str, str]]
) -> tuple[str, str, str] | None:
    """``(relative path, absolute path, digested sha256)`` of the declaration in the entry point's
    top-level package, or None when the digest lists none (a single-module plugin has none)."""
    top = entry_point.partition(":")[0].strip().split(".")[0]
    location = dict(module_locations).get(top)
    if location is None or not os.path.isdir(location):
        return None
    rel = f"{top}/{DECLARATION_FILE}"
    digested = dict(files).get(rel)
    if digested is None:
        return None
    return rel, os.path.join(location, DECLARATION_FILE), digested


def read_declaration(
    entry_point: str, module_locations: Sequence[tuple[str, str]], files: Iterable[tuple[str, str]]
) -> DeclaredPermissions:
    """The plugin's declaration, read from the digested bytes only (``NOTHING`` when it has none).

    Raises ``DeclarationError`` when the file is malformed or its bytes are not the digested ones.
    """
    found = declaration_path(entry_point, module_locations, files)
    if found is None:
        return NOTHING
    rel, path, digested = found
    try:
        with open(path, "rb") as handle:
            data = handle.read(_MAX_BYTES + 1)
    except OSError as exc:
        raise DeclarationError(f"{path} cannot be read: {exc.strerror or exc}") from None
    if hashlib.sha256(data).hexdigest() != digested:
        raise DeclarationError(f"{path} changed after its digest was computed; it was not read")
    return parse_declaration(data, rel)


__all__ = [
    "DECLARATION_FILE",
    "NOTHING",
    "DeclarationError",
    "DeclaredPermissions",
    "declaration_path",
    "parse_declaration",
    "read_declaration",
]
