"""The grant keys as a pack's settings declare them, with the defaults that fail closed: one declaration.

A pack that confines processes (the shell pack's commands, the mcp pack's stdio servers) takes the
keys by inheriting ``GrantKeys`` beside its model base — ``class GrantSettings(GrantKeys,
BaseModel)``: pydantic makes the annotated attributes of a plain base class fields of the model —
and adds one field validator that calls ``check_grant`` with the words for its base directory.
The defaults: the base directory readable, nothing writable, no network, nothing hidden, the
launcher's own limits (``None``: ``Grants``'s defaults apply, so they are written down once), and
the sandbox required.

Not imported by the launcher (it imports ``typing``, ~15 ms of every launch): ``reyn_sandbox``
imports this module when ``GrantKeys`` is first asked for.
"""

from __future__ import annotations

from typing import Literal


class GrantKeys:
    """The grant keys (``GRANT_KEYS``, in that order) with their defaults; relative roots are
    relative to the pack's base directory (the workspace, a server's ``cwd``)."""

    read_roots: tuple[str, ...] = (".",)
    """Directories the process may read (plus the system directories the launcher adds)."""
    write_roots: tuple[str, ...] = ()
    """Directories it may write (a write root is readable too); created when missing."""
    network: bool = False
    """Whether it may open internet sockets."""
    hide: tuple[str, ...] = ()
    """Paths inside a read root it must not see (a workspace ``.env``)."""
    read_only: tuple[str, ...] = ()
    """Paths inside a write root it may read but not change (a workspace ``.git``)."""
    cpu_seconds: int | None = None
    memory_bytes: int | None = None
    max_processes: int | None = None
    file_size_bytes: int | None = None
    open_files: int | None = None
    tmp_bytes: int | None = None
    sandbox: Literal["required", "off"] = "required"
    """``"off"`` runs the process unconfined: the pack reports it on every load, never silently."""
