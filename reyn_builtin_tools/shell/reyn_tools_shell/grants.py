"""The grant keys of ``[plugins.shell.settings]``: what the kernel sandbox lets a command reach.

Every command runs under ``reyn_sandbox``'s launcher (``sandbox.py``), which confines itself with
Landlock, namespaces and rlimits and then execs the command: the command and everything it starts
can read only ``read_roots`` (plus the system directories programs need, which the launcher adds),
write only ``write_roots``, open no socket unless ``network = true``, and never outgrow the limits.

The keys have the same names and meaning as the file pack's ``read_roots`` / ``write_roots`` (one
concept: where a model may read, where it may write) and as an MCP stdio server's grants. The
shell's former ``writable_dirs`` is the same thing as ``write_roots``; a profile that still uses it
fails to load with a message naming the new key. The keys and their defaults are declared once, by
``reyn_sandbox.GrantKeys`` (the mcp pack's servers take the same class); the limit keys default to
``None``: the launcher's own defaults (``reyn_sandbox.Grants``) then apply.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, field_validator, model_validator

from reyn_sandbox import LIMIT_KEYS, PATH_KEYS, GrantKeys, check_grant, describe_grants


def refuse_writable_dirs(data: Any) -> Any:
    """A clear error for ``writable_dirs``, renamed ``write_roots`` with the sandbox (issue 22),
    instead of the generic "extra inputs are not permitted"."""
    if isinstance(data, dict) and "writable_dirs" in data:
        raise ValueError(
            "writable_dirs was renamed write_roots (the same concept as the file pack's write_roots: "
            "the directories a model may write; commands run in a kernel sandbox that can write only "
            f"there); write write_roots = {list(data['writable_dirs'])!r}"
        )
    return data


class GrantSettings(GrantKeys, BaseModel):
    """What a confined process may reach: the grant keys of ``reyn_sandbox.GrantKeys``. Roots are
    directories, relative to the workspace or absolute; a write root is readable too. ``hide``
    names paths inside a read root that the process must not see (a workspace ``.env``);
    ``read_only`` paths inside a write root it may read but not change (a workspace ``.git``: what
    the operator may later run). ``sandbox = "off"`` runs commands unconfined — reported as a
    warning on every load, never silently. Every entry and limit is checked by ``reyn_sandbox``'s
    one validator of the grant keys (the mcp pack's servers use it too)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    @model_validator(mode="before")
    @classmethod
    def _old_keys(cls, data: Any) -> Any:
        return refuse_writable_dirs(data)

    @field_validator(*PATH_KEYS, *LIMIT_KEYS)
    @classmethod
    def _grant(cls, value: Any, info: Any) -> Any:
        return check_grant(info.field_name, value, relative_to="the workspace")

    def describe(self) -> str:
        """The grants in one line, for errors and diagnostics (``read_roots=['.'] ...``)."""
        return describe_grants(self)
