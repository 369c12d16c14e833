"""Reyn: one registry of LLM tools, rendered for native function calling and phase JSON contracts.

This module is the whole public API a plugin author or host needs; everything else is internal.
Importing it never imports litellm, mcp or httpx.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from reyn_core.hookspecs import API_VERSION, hookimpl

from .context import HostBridge, PhaseCallerState, RouterCallerState, ToolContext
from .errors import (
    ArgumentProblem,
    InvalidToolArguments,
    PhaseOutputError,
    ReynError,
    StrictSchemaError,
    ToolCancelled,
    ToolDenied,
    ToolError,
    ToolExecutionError,
    ToolGateRefused,
    ToolNotFound,
    ToolRegistrationError,
    ToolRuntimeMissing,
    ToolTimeout,
)
from .gates import Decision, OperatorPolicy, PluginPolicy
from .gates import check as check_gates
from .registry import ToolRegistry
from .render import PhaseSurface, StrictRenderError, render_phase, render_router
from .render.phase import phase_context
from .tool import ToolDefinition, ToolGates, ToolOrigin, tool
from .validation import SchemaRefused, json_schema_validator

if TYPE_CHECKING:
    from reyn_core.loading.loader import LoadResult, load

    from .deferral import DeferralPolicy, ToolDeferral, TurnTools, estimate_tokens, found_tool_names
    from .dispatch import JsonlAuditLog, ToolCall, ToolCallHooks, ToolCallOutcome, dispatch_tool, invoke_tool
    from .manifest import lazy_definitions, read_manifest, tool_manifest
    from .phase_contract import PhaseOpCall, PhaseOutput, parse_phase_output
    from .profile import Profile, load_profile
    from .tool_search import ToolMatch, search_tools

__version__ = "0.1.0"

# The dispatcher, the plugin loader, the profile and the phase contract's pydantic models are
# imported on first use, so `import reyn_core` stays light (listing and rendering tools never call one).
_LAZY = {
    "JsonlAuditLog": "reyn_core.dispatch",
    "ToolCall": "reyn_core.dispatch",
    "ToolCallHooks": "reyn_core.dispatch",
    "ToolCallOutcome": "reyn_core.dispatch",
    "dispatch_tool": "reyn_core.dispatch",
    "invoke_tool": "reyn_core.dispatch",
    "PhaseOpCall": "reyn_core.phase_contract",
    "PhaseOutput": "reyn_core.phase_contract",
    "parse_phase_output": "reyn_core.phase_contract",
    "LoadResult": "reyn_core.loading.report",
    "load": "reyn_core.loading.loader",
    "Profile": "reyn_core.profile",
    "load_profile": "reyn_core.profile",
    "lazy_definitions": "reyn_core.manifest",
    "read_manifest": "reyn_core.manifest",
    "tool_manifest": "reyn_core.manifest",
    "DeferralPolicy": "reyn_core.deferral",
    "ToolDeferral": "reyn_core.deferral",
    "TurnTools": "reyn_core.deferral",
    "estimate_tokens": "reyn_core.deferral",
    "found_tool_names": "reyn_core.deferral",
    "ToolMatch": "reyn_core.tool_search",
    "search_tools": "reyn_core.tool_search",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'reyn_core' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


__all__ = [
    "API_VERSION",
    "ArgumentProblem",
    "Decision",
    "DeferralPolicy",
    "HostBridge",
    "InvalidToolArguments",
    "JsonlAuditLog",
    "LoadResult",
    "OperatorPolicy",
    "PhaseCallerState",
    "PhaseOpCall",
    "PhaseOutput",
    "PhaseOutputError",
    "PhaseSurface",
    "PluginPolicy",
    "Profile",
    "ReynError",
    "RouterCallerState",
    "SchemaRefused",
    "StrictRenderError",
    "StrictSchemaError",
    "ToolCall",
    "ToolCallHooks",
    "ToolCallOutcome",
    "ToolCancelled",
    "ToolContext",
    "ToolDefinition",
    "ToolDeferral",
    "ToolDenied",
    "ToolError",
    "ToolExecutionError",
    "ToolGateRefused",
    "ToolGates",
    "ToolMatch",
    "ToolNotFound",
    "ToolOrigin",
    "ToolRegistrationError",
    "ToolRegistry",
    "ToolRuntimeMissing",
    "ToolTimeout",
    "TurnTools",
    "check_gates",
    "dispatch_tool",
    "estimate_tokens",
    "found_tool_names",
    "hookimpl",
    "invoke_tool",
    "json_schema_validator",
    "lazy_definitions",
    "load",
    "load_profile",
    "parse_phase_output",
    "phase_context",
    "read_manifest",
    "render_phase",
    "render_router",
    "search_tools",
    "tool",
    "tool_manifest",
]
