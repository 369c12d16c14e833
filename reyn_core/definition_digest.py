"""The one digest of a tool definition: ``definition_digest(tool)``, over everything a surface serves.

What a model or an MCP client is shown of a tool — its name, description, parameters schema, author
gates, cluster, purity and dispatch kind — is exactly the definition's fields minus the few that are
host-side machinery (``NOT_SERVED``). The canonical dict is built from ``dataclasses.fields`` of
``ToolDefinition`` by subtracting that set, so a field added to the definition is covered by the
digest the moment it exists (it must be data: a field holding code makes the digest raise until
it is classified).

One digest, used by everything that pins or records "which definition": the lock (``reyn.lock``
pins it per tool), the audit log (``definition_sha256`` on every line), and later approvals and
spans. Two definitions that serve the same thing have the same digest; key order inside the
parameters schema does not matter (``canonical_json`` sorts keys).
"""

from __future__ import annotations

import dataclasses
import hashlib
from typing import Any

from reyn_core.jsondata import canonical_json
from reyn_core.tool import ToolDefinition

NOT_SERVED: frozenset[str] = frozenset(
    {
        "handler",  # code, pinned by the plugin's tree digest, never shown
        "schema_enricher",  # code run at render time; what it returns is per session, not the definition
        "available",  # code deciding visibility for a context, not what is shown
        "timeout_s",  # how long the dispatcher waits, not part of the contract a model sees
        "origin",  # where the definition came from (host metadata), recorded beside the digest
        "arguments_model",  # the model the parameters were derived from: the parameters are digested
    }
)
"""Fields of ``ToolDefinition`` that no surface serves; every other field is digested."""


def served_fields(tool: ToolDefinition) -> dict[str, Any]:
    """The definition as served: every field except ``NOT_SERVED``, as JSON data (gates as a mapping)."""
    out: dict[str, Any] = {}
    for f in dataclasses.fields(ToolDefinition):
        if f.name in NOT_SERVED:
            continue
        value = getattr(tool, f.name)
        if callable(value):  # a new code-valued field: its repr would make the digest vary per process
            raise TypeError(
                f"ToolDefinition.{f.name} holds code ({type(value).__name__}); classify the field in "
                "reyn_core.definition_digest.NOT_SERVED or make it data"
            )
        is_instance = dataclasses.is_dataclass(value) and not isinstance(value, type)
        out[f.name] = dataclasses.asdict(value) if is_instance else value
    return out


def definition_digest(tool: ToolDefinition) -> str:
    """``sha256:`` over the canonical JSON of ``served_fields(tool)`` — the one identity of what a
    tool definition serves (the lock pins it, the audit log records it)."""
    return canonical_sha256(served_fields(tool))


def canonical_sha256(value: Any) -> str:
    """``sha256:`` over the canonical JSON of ``value`` (a lone surrogate hashes like anything else)."""
    return "sha256:" + hashlib.sha256(canonical_json(value).encode("utf-8", "surrogatepass")).hexdigest()


__all__ = ["NOT_SERVED", "canonical_sha256", "definition_digest", "served_fields"]
