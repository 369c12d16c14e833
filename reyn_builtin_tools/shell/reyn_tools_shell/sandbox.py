"""Every command through the kernel sandbox (``reyn_sandbox``): the grants a command gets, the
launcher's argv, and what its exit means.

The promise is the kernel's: whatever an allowed program runs — its configuration's plugins, a
model-written ``conftest.py`` — reads only the read roots, writes only the write roots, opens no
socket without ``network = true``, sees no other process and ends at its limits. The argument
rules and git's hardening (``confine.py``) stay as defence in depth on top.

Fail closed: when the kernel cannot confine (no Landlock, no user namespaces, ``reyn-sandbox`` not
installed), the ``shell`` tool is unavailable with the launcher's reason, unless the operator set
``sandbox = "off"`` — which every load reports as a warning (``RX003``).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from reyn_core import ToolDenied, ToolExecutionError, ToolRuntimeMissing
from reyn_sandbox import LIMIT_KEYS, OPT_OUT, unavailable_reason

from .grants import GrantSettings

STATUS_CODES = {"ok": "RX001", "unavailable": "RX002", "off": "RX003"}
PREFIX = "reyn-sandbox: "
ROOT_NOTE = (
    "; Reyn runs as root, so the sandbox runs commands as an unprivileged user (uid 65534): the read "
    "roots must be readable and the write roots writable by it"
)


def require_sandbox(grants: GrantSettings, what: str, key_prefix: str) -> None:
    """Refuse (``ToolRuntimeMissing``) when ``grants`` need a sandbox the kernel cannot give."""
    if grants.sandbox == "off":
        return
    reason = unavailable_reason()
    if reason is not None:
        raise ToolRuntimeMissing(
            f"{what} runs only inside the kernel sandbox, which is unavailable: {reason}; "
            f"set {OPT_OUT} in {key_prefix} to run unconfined (reported as a warning on every load)"
        )


def launcher_grants(grants: GrantSettings, base: Path, key_prefix: str, protected: Mapping[str, str]) -> Any:
    """The launcher's ``Grants`` for these settings, roots resolved against ``base``; a write root
    over one of the host's own files (``protected``: the call's ``ToolContext.host_files``), or a
    read root that is or lies inside one of its secret files, is refused with ``ToolDenied`` naming
    the file (``reyn_sandbox.resolve_grants``, which also hides the secret files inside the roots)."""
    import reyn_sandbox

    try:
        return reyn_sandbox.resolve_grants(str(base), grants, protected)
    except reyn_sandbox.GrantsError as exc:
        raise ToolDenied(f"the command was refused by the roots in {key_prefix}: {exc}") from None


def launcher_for(
    command: list[str], grants: GrantSettings, base: Path, key_prefix: str, protected: Mapping[str, str]
) -> Callable[[int, int], list[str]] | None:
    """How ``command`` starts inside the sandbox: given the read end of the call's stop pipe and the
    write end of its verdict pipe, the launcher's argv (``reyn_sandbox.launcher_argv(..., stop_fd=,
    verdict_fd=)``: the launcher kills the whole sandbox when a byte is written to the stop pipe or
    its write end closes, see ``process.run_command``, and writes its verdicts to the verdict pipe,
    see ``sandbox_failure``); None with
    ``sandbox = "off"``. The grants are resolved now (``launcher_grants``: ``ToolDenied`` before
    anything starts); ``protected``: the host's own files, which no write root may cover."""
    if grants.sandbox == "off":
        return None
    import reyn_sandbox

    granted = launcher_grants(grants, base, key_prefix, protected)

    def argv(stop_fd: int, verdict_fd: int) -> list[str]:
        try:
            return reyn_sandbox.launcher_argv(command, granted, stop_fd=stop_fd, verdict_fd=verdict_fd)
        except reyn_sandbox.SandboxUnavailable as exc:
            raise ToolRuntimeMissing(
                f"the kernel sandbox cannot confine {os.path.basename(command[0])!r}: {exc}; "
                f"set {OPT_OUT} in {key_prefix} to run unconfined (reported as a warning on every load)"
            ) from None

    return argv


def sandbox_failure(exit_code: int, verdict: str, grants: GrantSettings, key_prefix: str) -> str | None:
    """What the launcher's verdict says when the sandbox, not the command, ended the run: confinement
    could not be set up (exit 125, the command did not run), or a limit was hit. ``verdict``: what
    the launcher wrote to the call's verdict pipe (``CommandResult.verdict``), never the command's
    stderr — a command printing the launcher's words and exiting 125 is the command's own result."""
    if grants.sandbox == "off":
        return None
    import reyn_sandbox

    which = reyn_sandbox.limit_exceeded(verdict)
    if which is not None:
        return (
            f"the command was stopped by the sandbox: limit exceeded: {which}; raise it in {key_prefix} "
            f"({', '.join(LIMIT_KEYS)}) if the command needs more"
        )
    lines = [line for line in verdict.splitlines() if line.startswith(PREFIX)]
    if exit_code == reyn_sandbox.SETUP_FAILED_EXIT and lines:
        line = lines[-1]
        return (
            f"the sandbox could not be set up, so the command did not run: {line[len(PREFIX) :].strip()} "
            f"(grants: {grants.describe()}){ROOT_NOTE if os.geteuid() == 0 else ''}"
        )
    return None


def raise_for_sandbox(exit_code: int, verdict: str, grants: GrantSettings, key_prefix: str) -> None:
    """Raise ``ToolExecutionError`` when the sandbox ended the command (see ``sandbox_failure``)."""
    message = sandbox_failure(exit_code, verdict, grants, key_prefix)
    if message is not None:
        raise ToolExecutionError(message)


def status_diagnostics(grants: GrantSettings, what: str, key_prefix: str, tool: str) -> list[dict[str, str]]:
    """``reyn doctor``'s view of the sandbox for ``what``: RX001 (info) confined, with the Landlock
    ABI and what is enforced; RX002 (error) the kernel cannot confine, so ``what`` is refused;
    RX003 (warning) the operator turned the sandbox off."""
    if grants.sandbox == "off":
        return [
            {
                "code": STATUS_CODES["off"],
                "severity": "warning",
                "tool": tool,
                "message": f"{what} run UNCONFINED: {OPT_OUT} in {key_prefix}; a program (or code it "
                "loads from a model-written file) can read, write and connect wherever this host can",
                "hint": f"remove {OPT_OUT} to confine them to read_roots, write_roots and network",
            }
        ]
    reason = unavailable_reason()
    if reason is not None:
        return [
            {
                "code": STATUS_CODES["unavailable"],
                "severity": "error",
                "tool": tool,
                "message": f"the kernel sandbox is unavailable ({reason}), so {what} are refused",
                "hint": "run on Linux with Landlock (5.13+) and user namespaces enabled, or set "
                f"{OPT_OUT} in {key_prefix} to run unconfined",
            }
        ]
    import reyn_sandbox

    status = reyn_sandbox.status()
    return [
        {
            "code": STATUS_CODES["ok"],
            "severity": "info",
            "tool": tool,
            "message": f"{what} run in the kernel sandbox: Landlock ABI {status.landlock_abi}, "
            f"enforced: {', '.join(status.enforced)}; grants: {grants.describe()}",
            "hint": "",
        }
    ]
