"""A stdio MCP server runs inside the kernel sandbox (``reyn_sandbox``), under its own grants.

``[plugins.mcp.settings.servers.NAME]`` takes the same grant keys as the shell pack
(``read_roots``, ``write_roots``, ``network``, ``hide``, the limits, ``sandbox``): the server and
everything it starts can read only its read roots (plus the system directories and interpreter the
launcher adds), write only its write roots, and open no socket unless ``network = true``. Roots are
relative to the server's ``cwd`` (default: the directory Reyn runs in) or absolute. The defaults
fail closed: the working directory read-only, nothing writable, no network — so a fetch server
needs ``network = true`` and a filesystem server its roots. When a server fails, the error names
the grants it had and the keys that widen them; Reyn keeps no table of known servers.

Fail closed: when the kernel cannot confine, a stdio server is not started (the error says why),
unless its ``sandbox = "off"`` — reported as a warning by every load (``RX003``). The grant keys
are ``reyn_sandbox.GrantKeys``, the one declaration the shell pack's settings take too.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, field_validator

from reyn_sandbox import LIMIT_KEYS, OPT_OUT, PATH_KEYS, GrantKeys, check_grant, unavailable_reason


class ServerGrants(GrantKeys, BaseModel):
    """The grant keys of one stdio server (``reyn_sandbox.GrantKeys``, see the module docstring),
    checked by ``reyn_sandbox``'s one validator of the grant keys."""

    @field_validator(*PATH_KEYS, *LIMIT_KEYS)
    @classmethod
    def _grant(cls, value: Any, info: Any) -> Any:
        return check_grant(info.field_name, value, relative_to="the server's cwd")

    def describe_grants(self) -> str:
        """The grants in one line, for errors and diagnostics."""
        if self.sandbox == "off":
            return "unconfined (sandbox = off)"
        from reyn_sandbox import describe_grants

        return describe_grants(self)


def widen_hint(name: str, grants: ServerGrants) -> str:
    """The sentence an error about a sandboxed server ends with: its grants and how to widen them."""
    if grants.sandbox == "off":
        return ""
    return (
        f"; it ran in the kernel sandbox with {grants.describe_grants()} — if it needs more, widen them "
        f"in [plugins.mcp.settings.servers.{name}] (read_roots, write_roots, network = true, "
        f"{', '.join(LIMIT_KEYS)})"
    )


def refuse_roots(name: str, grants: ServerGrants, cwd: str | None, protected: Mapping[str, str]) -> None:
    """``ToolDenied`` naming the host's files a stdio server's roots would expose — a write root over
    any of them, a mounted path that is or lies inside a secret one (``reyn_sandbox.resolve_grants``)
    — checked before the server is started, so the caller is told why; ``confined_command`` checks
    again."""
    if grants.sandbox == "off":
        return
    import reyn_sandbox
    from reyn_core import ToolDenied

    try:
        reyn_sandbox.resolve_grants(cwd or os.getcwd(), grants, protected)
    except reyn_sandbox.GrantsError as exc:
        raise ToolDenied(_roots_refused(name, exc)) from None


def _roots_refused(name: str, exc: Exception) -> str:
    """The refusal of a server whose roots would expose the host's files (``resolve_grants``'s words)."""
    where = f"[plugins.mcp.settings.servers.{name}]"
    return f"MCP server {name!r} is not started: its roots in {where} are refused: {exc}"


def confined_command(
    name: str,
    grants: ServerGrants,
    command: str,
    args: list[str],
    env: dict[str, str] | None,
    cwd: str | None,
    protected: Mapping[str, str],
    *,
    stop_fd: int | None = None,
) -> list[str]:
    """The argv that starts the server inside the sandbox (``[command, *args]`` with
    ``sandbox = "off"``), the launcher watching ``stop_fd`` (``reyn_sandbox.StopPipe``). Raises
    ``RuntimeError`` saying why when it cannot be confined, or when its roots would expose one of
    the host's own files (``protected``: the calling context's ``ToolContext.host_files``;
    ``reyn_sandbox.resolve_grants`` names the file)."""
    if grants.sandbox == "off":
        return [command, *args]
    reason = unavailable_reason()
    if reason is not None:
        raise RuntimeError(
            f"MCP server {name!r} runs only inside the kernel sandbox, which is unavailable: {reason}; set "
            f"{OPT_OUT} in [plugins.mcp.settings.servers.{name}] to run it unconfined "
            "(a warning on every load)"
        )
    import reyn_sandbox

    path = (env or {}).get("PATH") or os.environ.get("PATH", os.defpath)
    executable = command if "/" in command else shutil.which(command, path=path)
    if not executable:
        raise RuntimeError(f"MCP server {name!r}: {command!r} is not found on PATH")
    try:
        launcher_grants = reyn_sandbox.resolve_grants(cwd or os.getcwd(), grants, protected)
    except reyn_sandbox.GrantsError as exc:
        raise RuntimeError(_roots_refused(name, exc)) from None
    try:
        return list(
            reyn_sandbox.launcher_argv([os.path.abspath(executable), *args], launcher_grants, stop_fd=stop_fd)
        )
    except reyn_sandbox.SandboxUnavailable as exc:
        raise RuntimeError(f"MCP server {name!r} cannot be confined: {exc}") from None


def status_diagnostics(servers: dict[str, Any]) -> list[dict[str, str]]:
    """``reyn doctor``'s view of the sandbox for the stdio servers: RX001 (info) confined, with the
    Landlock ABI and what is enforced; RX002 (error) the kernel cannot confine, so they are not
    started; RX003 (warning, every load) a server with ``sandbox = "off"``."""
    stdio = {n: c for n, c in servers.items() if c.command is not None}
    out: list[dict[str, str]] = []
    for name, config in sorted(stdio.items()):
        if config.sandbox == "off":
            out.append(
                {
                    "code": "RX003",
                    "severity": "warning",
                    "tool": "",
                    "message": f"MCP server {name!r} runs UNCONFINED ({OPT_OUT}): it can read, write and "
                    "connect wherever this host can",
                    "hint": f"remove {OPT_OUT} from [plugins.mcp.settings.servers.{name}] "
                    "and grant what it needs",
                }
            )
    confined = sorted(n for n, c in stdio.items() if c.sandbox != "off")
    if not confined:
        return out
    reason = unavailable_reason()
    if reason is not None:
        out.append(
            {
                "code": "RX002",
                "severity": "error",
                "tool": "",
                "message": f"the kernel sandbox is unavailable ({reason}), so the MCP servers "
                f"{confined} are not started",
                "hint": f"run on Linux with Landlock and user namespaces, or set {OPT_OUT} on a server",
            }
        )
        return out
    import reyn_sandbox

    status = reyn_sandbox.status()
    out.append(
        {
            "code": "RX001",
            "severity": "info",
            "tool": "",
            "message": f"MCP stdio servers {confined} run in the kernel sandbox: Landlock ABI "
            f"{status.landlock_abi}, enforced: {', '.join(status.enforced)}",
            "hint": "",
        }
    )
    return out
