"""What a renderer shows as a tool's parameters for one call: ``effective_parameters``."""

from __future__ import annotations

from typing import Any

from ..context import ToolContext
from ..schema import copy_json
from ..tool import ToolDefinition
from ..unicode_text import describe_lone_surrogate, lone_surrogate_at


def _warn(message: str, *args: Any) -> None:
    import logging  # only when an enricher misbehaves: rendering itself never needs logging

    logging.getLogger("reyn_core.render").warning(message, *args)


def effective_parameters(tool: ToolDefinition, ctx: ToolContext) -> dict[str, Any]:
    """The tool's parameters for this call: a deep copy, passed through its ``schema_enricher``.

    The result is the caller's own tree (an enricher's answer is copied too: it may hold the
    plugin's own lists), so a renderer may adapt it without copying it again. The registry's
    definition is never mutated, so per-session data (e.g. skill names in an ``enum``) cannot leak
    between sessions. An enricher that raises, or returns something that is
    not an object schema, or one holding text UTF-8 cannot carry (a lone surrogate, as ``RT012``
    refuses in a registered schema), is logged and skipped: the tool renders with its registered schema
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
    enriched = copy_json(enriched)
    found = lone_surrogate_at(enriched)
    if found is not None:  # every surface writes UTF-8: one such string would break a whole listing
        _warn(
            "schema_enricher of tool %r returned text UTF-8 cannot carry (a lone surrogate) %s; "
            "rendering its registered schema",
            tool.name,
            describe_lone_surrogate(found),
        )
        return copy_json(tool.parameters)
    return enriched


__all__ = ["effective_parameters"]
