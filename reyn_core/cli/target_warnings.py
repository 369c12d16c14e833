"""``reyn tools render --target``'s warnings: what a provider's schema dialect cannot take whole."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from reyn_core.registry import ToolRegistry


def warn_unadaptable(registry: ToolRegistry, tools: list[dict[str, Any]], target: str) -> None:
    """One stderr line per rendered tool whose schema ``target`` cannot take whole (strict mode
    already failed loudly; the other targets render and say what they dropped)."""
    from reyn_core.provider_schemas import adapt_parameters

    if target in ("openai-strict", "mcp", "openai", "anthropic"):
        return
    for entry in tools:
        name = entry["function"]["name"]
        if name not in registry:
            continue
        for problem in adapt_parameters(registry.get(name).parameters, target).problems:
            print(f"reyn: warning: tool {name!r} for {target}: {problem}", file=sys.stderr)
