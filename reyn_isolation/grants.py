"""What the operator grants an isolated plugin, checked against what it declared.

Grants are never wider than the declaration: a grant the declaration does not cover refuses the
plugin (``RJ002``), since an operator who grants more than a plugin asked for has misread it. What the
plugin declared and was not granted is reported side by side (``RJ003``) and the plugin loads; its
attempts to use what it lacks fail inside the sandbox.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from reyn_core.host import DeclaredPermissions
from reyn_isolation.codes import Finding


@dataclass(frozen=True, slots=True)
class GrantedPermissions:
    """The profile's ``[plugins.<id>.grants]``, paths resolved (absolute)."""

    read: tuple[str, ...] = ()
    write: tuple[str, ...] = ()
    network: bool = False
    subprocess: bool = False
    environment: tuple[str, ...] = ()
    memory_mb: int = 1024
    max_result_bytes: int = 1 << 20
    call_timeout_s: float = 60.0

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form, in the declaration's terms (``plugins show``)."""
        return {
            "filesystem_read": list(self.read),
            "filesystem_write": list(self.write),
            "network": self.network,
            "subprocess": self.subprocess,
            "environment": list(self.environment),
        }

    @property
    def has_effects(self) -> bool:
        """Whether anything granted reaches outside the worker (a write root, network, programs)."""
        return bool(self.write) or self.network or self.subprocess


def compare(plugin_id: str, declared: DeclaredPermissions, granted: GrantedPermissions) -> list[Finding]:
    """``RJ002`` for each grant the declaration does not cover; ``RJ003`` for each declared need the
    grants leave out; ``RJ004`` when the plugin needs host bridges."""
    where = f"[plugins.{plugin_id}.grants]"
    wider: list[str] = []
    missing: list[str] = []
    for need, given, what in (
        (declared.filesystem_read, bool(granted.read), "read"),
        (declared.filesystem_write, bool(granted.write), "write"),
        (declared.network, granted.network, "network"),
        (declared.subprocess, granted.subprocess, "subprocess"),
    ):
        if given and not need:
            wider.append(f"{what} (granted {_shown(getattr(granted, what))}, declared: no)")
        elif need and not given:
            missing.append(f"{what} (declared: yes, granted: no)")
    extra_env = sorted(set(granted.environment) - set(declared.environment))
    if extra_env:
        wider.append(f"environment {extra_env} (declared: {list(declared.environment)})")
    missing_env = sorted(set(declared.environment) - set(granted.environment))
    if missing_env:
        missing.append(f"environment {missing_env} (declared, not granted)")
    findings: list[Finding] = []
    if declared.host_bridges:
        findings.append(
            Finding(
                "RJ004",
                f"it declares the host bridges {', '.join(declared.host_bridges)}: a bridge is a "
                "callable of the host application that the plugin's tools call with host objects (the "
                "call's ToolContext, the plugin's own records) and that answers with host objects, and a "
                "worker's pipe carries only data (no typed bridge protocol: docs/decisions.md)",
            )
        )
    if wider:
        findings.append(
            Finding(
                "RJ002",
                f"{where} grants more than plugin {plugin_id!r} declares: {'; '.join(wider)}. "
                f"Declared: {declared.summary}",
            )
        )
    if missing:
        findings.append(
            Finding(
                "RJ003",
                f"plugin {plugin_id!r} declares what {where} does not grant: {'; '.join(missing)}. "
                f"Declared: {declared.summary}; granted: {_granted_summary(granted)}",
            )
        )
    return findings


def purity_findings(
    plugin_id: str, tools: Sequence[tuple[str, str]], granted: GrantedPermissions
) -> list[Finding]:
    """The purity rule for an isolated plugin's tools, ``(name, purity)``: a claim the grants make
    impossible is refused (``RJ007``: ``external`` without network); every other claim is kept as the
    author made it — a ``read_only`` claim under effect grants stays self-declared, and a
    ``side_effect`` claim without them is kept because the worker's memory and private /tmp persist
    between calls (caution is never lowered)."""
    return [
        Finding(
            "RJ007",
            f"tool {name!r} of plugin {plugin_id!r} declares purity 'external' but the plugin is not "
            f"granted network, so it cannot reach anything outside; it is not registered",
            tool=name,
        )
        for name, purity in tools
        if purity == "external" and not granted.network
    ]


def purity_backing(purity: str, granted: GrantedPermissions) -> str:
    """``kernel`` when the grants themselves guarantee ``purity`` holds outside the worker, else
    ``self-declared``."""
    if purity == "read_only" and not granted.has_effects:
        return "kernel"
    return "self-declared"


def _shown(value: Any) -> str:
    return ", ".join(value) if isinstance(value, tuple) else str(value).lower()


def _granted_summary(granted: GrantedPermissions) -> str:
    parts = [name for name, on in (("read", granted.read), ("write", granted.write)) if on]
    parts += [name for name in ("network", "subprocess") if getattr(granted, name)]
    if granted.environment:
        parts.append("env " + " ".join(granted.environment))
    return ", ".join(parts) or "nothing"


__all__ = ["GrantedPermissions", "compare", "purity_backing", "purity_findings"]
