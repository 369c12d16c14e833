"""What the load report keeps of an isolated plugin: its grants, what the kernel enforces, its worker."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from reyn_core.isolation.grants import GrantedPermissions


@dataclass(frozen=True, slots=True)
class IsolationInfo:
    """How an isolated plugin runs: its grants, what the kernel enforces, and its worker."""

    granted: GrantedPermissions
    enforced: dict[str, Any]
    client: Any

    def to_dict(self) -> dict[str, Any]:
        return {
            "granted": self.granted.to_dict(),
            "max_result_bytes": self.granted.max_result_bytes,
            "call_timeout_s": self.granted.call_timeout_s,
            "landlock_abi": self.enforced.get("landlock_abi"),
            "enforced": self.enforced.get("enforced"),
        }


__all__ = ["IsolationInfo"]
