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
mirror ``reyn_tools_shell.grants`` (one concept in both packs, kept equal by a test); they live in
each pack because packs never import each other.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, field_validator

LIMIT_KEYS = ("cpu_seconds", "memory_bytes", "max_processes", "file_size_bytes", "open_files", "tmp_bytes")
GRANT_KEYS = ("read_roots", "write_roots", "network", "hide", "read_only", *LIMIT_KEYS, "sandbox")
OPT_OUT = 'sandbox = "off"'
PSEUDO_FS_PREFIXES = ("/proc", "/sys", "/dev")


class ServerGrants(BaseModel):
    """The grant keys of one stdio server (see the module docstring)."""

    read_roots: tuple[str, ...] = (".",)
    write_roots: tuple[str, ...] = ()
    network: bool = False
    hide: tuple[str, ...] = ()
    read_only: tuple[str, ...] = ()
    cpu_seconds: int | None = Field(default=None, ge=1)
    memory_bytes: int | None = Field(default=None, ge=16 * 1024 * 1024)
    max_processes: int | None = Field(default=None, ge=1)
    file_size_bytes: int | None = Field(default=None, ge=1)
    open_files: int | None = Field(default=None, ge=16)
    tmp_bytes: int | None = Field(default=None, ge=1024 * 1024)
    sandbox: Literal["required", "off"] = "required"

    @field_validator("read_roots", "write_roots", "hide", "read_only")
    @classmethod
    def _plain_paths(cls, paths: tuple[str, ...], info: Any) -> tuple[str, ...]:
        for path in paths:
            if not path or "\x00" in path or ".." in path.split("/"):
                raise ValueError(
                    f"{info.field_name} entry {path!r} must be a directory relative to the server's cwd "
                    "or absolute, without '..'"
                )
            if info.field_name in ("read_roots", "write_roots") and any(
                path == p or path.startswith(p + "/") for p in PSEUDO_FS_PREFIXES
            ):
                raise ValueError(f"{info.field_name} entry {path!r} is inside a pseudo-filesystem")
        return paths

    def limit_overrides(self) -> dict[str, int]:
        """The limits the profile sets (the launcher's defaults apply to the rest)."""
        return {k: v for k in LIMIT_KEYS if (v := getattr(self, k)) is not None}

    def describe_grants(self) -> str:
        """The grants in one line, for errors and diagnostics."""
        if self.sandbox == "off":
            return "unconfined (sandbox = off)"
        limits = " ".join(f"{k}={v}" for k, v in self.limit_overrides().items())
        return (
            f"read_roots={list(self.read_roots)} write_roots={list(self.write_roots)} "
            f"network={str(self.network).lower()} hide={list(self.hide)}"
            + (f" {limits}" if limits else " (default limits)")
        )


def sandbox_status() -> Any:
    """The launcher's ``SandboxStatus`` (its kernel probe is cached), or None when ``reyn_sandbox``
    is missing."""
    try:
        import reyn_sandbox
    except ImportError:
        return None
    if not callable(getattr(reyn_sandbox, "status", None)):  # a folder shadowing the package
        return None
    return reyn_sandbox.status()


def unavailable_reason() -> str | None:
    """Why the kernel cannot confine servers here, or None when it can."""
    status = sandbox_status()
    if status is None:
        return "the reyn-sandbox distribution is not installed (or a folder named reyn_sandbox shadows it)"
    if not status.available:
        return str(status.reason or "the kernel cannot confine processes here")
    return None


def widen_hint(name: str, grants: ServerGrants) -> str:
    """The sentence an error about a sandboxed server ends with: its grants and how to widen them."""
    if grants.sandbox == "off":
        return ""
    return (
        f"; it ran in the kernel sandbox with {grants.describe_grants()} — if it needs more, widen them "
        f"in [plugins.mcp.settings.servers.{name}] (read_roots, write_roots, network = true, "
        f"{', '.join(LIMIT_KEYS)})"
    )


def _roots(base: Path, entries: tuple[str, ...], *, create: bool = False) -> tuple[str, ...]:
    out = []
    for entry in entries:
        path = Path(os.path.realpath(base / os.path.expanduser(entry)))
        if create and not os.path.lexists(path):
            path.mkdir(parents=True, exist_ok=True)
        if os.path.exists(path):  # False also when this user cannot even look there
            out.append(str(path))
    return tuple(out)


def confined_command(
    name: str,
    grants: ServerGrants,
    command: str,
    args: list[str],
    env: dict[str, str] | None,
    cwd: str | None,
) -> tuple[str, list[str]]:
    """The ``(command, args)`` that start the server inside the sandbox (unchanged with
    ``sandbox = "off"``). Raises ``RuntimeError`` saying why when it cannot be confined."""
    if grants.sandbox == "off":
        return command, args
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
    base = Path(os.path.realpath(cwd or os.getcwd()))
    launcher_grants = reyn_sandbox.Grants(
        read_roots=_roots(base, grants.read_roots),
        write_roots=_roots(base, grants.write_roots, create=True),
        network=grants.network,
        hide=_roots(base, grants.hide),
        read_only=_roots(base, grants.read_only),
        **grants.limit_overrides(),
    )
    try:
        argv = list(reyn_sandbox.launcher_argv([os.path.abspath(executable), *args], launcher_grants))
    except reyn_sandbox.SandboxUnavailable as exc:
        raise RuntimeError(f"MCP server {name!r} cannot be confined: {exc}") from None
    return argv[0], argv[1:]


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
    status = sandbox_status()
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
