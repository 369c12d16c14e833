"""The two renderers: one registry, two views. See ``render_router`` and ``render_phase``."""

from __future__ import annotations

import json
from typing import Any

from ..context import ToolContext
from ..schema import copy_json
from ..tool import ToolDefinition


def canonical_json(value: Any) -> str:
    """Deterministic compact JSON (keys in definition order, no spaces, UTF-8 kept)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def effective_parameters(tool: ToolDefinition, ctx: ToolContext) -> dict[str, Any]:
    """The tool's parameters for this call: a deep copy, passed through its ``schema_enricher``.

    The registry's definition is never mutated, so per-session data (e.g. skill names in an
    ``enum``) cannot leak between sessions.
    """
    params = copy_json(tool.parameters)
    if tool.schema_enricher is not None:
        enriched = tool.schema_enricher(params, ctx)
        params = enriched if enriched is not None else params
    return params


from .phase import PhaseOpSpec, PhaseSurface, render_phase  # noqa: E402
from .router import StrictRenderError, render_router, render_router_json  # noqa: E402

__all__ = [
    "PhaseOpSpec",
    "PhaseSurface",
    "StrictRenderError",
    "canonical_json",
    "copy_json",
    "effective_parameters",
    "render_phase",
    "render_router",
    "render_router_json",
]
