"""What a renderer shows as a tool's parameters for one call: ``effective_parameters``."""

from __future__ import annotations

from typing import Any

from ..context import ToolContext
from ..schema import copy_json
from ..tool import ToolDefinition


def _warn(message: str, *args: Any) -> None:
    import logging  # only when an enricher misbehaves: rendering itself never needs logging

    logging.getLogger("reyn_core.render").warning(message, *args)


def effective_parameters(tool: ToolDefinition, ctx: ToolContext) -> dict[str, Any]:
    """The tool's parameters for this call: a deep copy, passed through its ``schema_enricher``.

    The result is the caller's own tree (an enricher's answer is copied too: it may hold the
    plugin's own lists), so a renderer may adapt it without copying it again. The registry's
    definition is never mutated, so per-session data (e.g. skill names in an ``enum``) cannot leak
    between sessions. An enricher that raises, or returns something that is
    not an object schema, is logged and skipped: the tool renders with its registered schema
    (which is also what the dispatcher validates against), and the other tools are unaffected.
    """
    params = copy_json(tool.parameters)
    if tool.schema_enricher is None:
        return params
    try:
        enriched = tool.schema_enricher(params, ctx)
    except (Exception, SystemExit) as exc:  # plugin code: it may not end the host
        _warn(
            "schema_enricher of tool %r failed (%s: %s); rendering its registered schema",
            tool.name,
            type(exc).__name__,
            exc,
        )
        return copy_json(tool.parameters)
    if enriched is None:
        return params
    if not isinstance(enriched, dict) or enriched.get("type") != "object":
        _warn(
            "schema_enricher of tool %r returned %s, not an object schema; rendering its registered schema",
            tool.name,
            type(enriched).__name__,
        )
        return copy_json(tool.parameters)
    return copy_json(enriched)


__all__ = ["effective_parameters"]
