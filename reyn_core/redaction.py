"""What a schema marks secret, replaced wherever a call's arguments are shown: an approver's view of a
held call (``approvals``) and the opted-in content of a span (the tracing add-on). One rule, so what
one place hides no other place shows.

A property is secret when its schema says ``writeOnly: true`` or ``format: "password"``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

REDACTED = "[redacted]"


def _secret_names(schema: Any) -> frozenset[str]:
    props = schema.get("properties") if isinstance(schema, Mapping) else None
    if not isinstance(props, Mapping):
        return frozenset()
    return frozenset(
        n
        for n, s in props.items()
        if isinstance(s, Mapping) and (s.get("writeOnly") or s.get("format") == "password")
    )


def redact(value: Any, schema: Any) -> Any:
    """``value`` with every property the schema marks secret (``writeOnly`` / ``format: password``)
    replaced by ``"[redacted]"``, at any depth of ``properties`` and ``items``."""
    if isinstance(value, Mapping) and isinstance(schema, Mapping):
        secret = _secret_names(schema)
        props = schema.get("properties")
        props = props if isinstance(props, Mapping) else {}
        return {k: REDACTED if k in secret else redact(v, props.get(k)) for k, v in value.items()}
    if isinstance(value, list) and isinstance(schema, Mapping):
        return [redact(v, schema.get("items")) for v in value]
    return value


__all__ = ["REDACTED", "redact"]
