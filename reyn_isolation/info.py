"""What the load report and approval requests show of an isolated plugin: its grants, what the kernel
enforces, its worker."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from reyn_isolation.grants import GrantedPermissions


@dataclass(frozen=True, slots=True)
class IsolationInfo:
    """How an isolated plugin runs: its grants, what the kernel enforces, and its worker."""

    granted: GrantedPermissions
    enforced: dict[str, Any]
    client: Any

    def to_dict(self) -> dict[str, Any]:
        """The load report's ``permissions`` beside the declaration (``IsolatedPlugin.report``)."""
        return {
            "granted": self.granted.to_dict(),
            "max_result_bytes": self.granted.max_result_bytes,
            "call_timeout_s": self.granted.call_timeout_s,
            "landlock_abi": self.enforced.get("landlock_abi"),
            "enforced": self.enforced.get("enforced"),
        }

    def reach(self) -> dict[str, Any]:
        """What the plugin's calls can touch, for approval requests (``IsolatedPlugin.reach``): the
        grants' names and paths; the values of granted environment variables are never shown."""
        granted = self.granted

        def listed(paths: tuple[str, ...]) -> str:
            return ", ".join(paths) if paths else "nothing"

        words = (
            f"a sandboxed worker that may read {listed(granted.read)}; write {listed(granted.write)}; "
            f"network: {'yes' if granted.network else 'no'}; start programs: "
            f"{'yes' if granted.subprocess else 'no'}; environment variables: "
            f"{listed(granted.environment)}"
        )
        return {
            "sandbox": "process",
            "grants": granted.to_dict(),
            "enforced": self.enforced.get("enforced"),
            "summary": words,
        }


__all__ = ["IsolationInfo"]
