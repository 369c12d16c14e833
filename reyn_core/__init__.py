"""Reyn: one registry of LLM tools, rendered for native function calling and phase JSON contracts.

This module is the whole public API a plugin author or host needs; everything else is internal.
Importing it never imports litellm, mcp or httpx.
"""

from __future__ import annotations

from .context import HostBridge, PhaseCallerState, RouterCallerState, ToolContext
from .dispatch import JsonlAuditLog, ToolCall, ToolCallHooks, ToolCallOutcome, dispatch_tool, invoke_tool
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
from .phase_contract import PhaseOpCall, PhaseOutput, parse_phase_output
from .plugins.hookspecs import API_VERSION, hookimpl
from .registry import ToolRegistry
from .render import PhaseSurface, render_phase, render_router
from .render.phase import phase_context
from .tool import ToolDefinition, ToolGates, ToolOrigin, tool

__version__ = "0.1.0"

__all__ = [
    "API_VERSION",
    "ArgumentProblem",
    "Decision",
    "HostBridge",
    "InvalidToolArguments",
    "JsonlAuditLog",
    "OperatorPolicy",
    "PhaseCallerState",
    "PhaseOpCall",
    "PhaseOutput",
    "PhaseOutputError",
    "PhaseSurface",
    "PluginPolicy",
    "ReynError",
    "RouterCallerState",
    "StrictSchemaError",
    "ToolCall",
    "ToolCallHooks",
    "ToolCallOutcome",
    "ToolCancelled",
    "ToolContext",
    "ToolDefinition",
    "ToolDenied",
    "ToolError",
    "ToolExecutionError",
    "ToolGateRefused",
    "ToolGates",
    "ToolNotFound",
    "ToolOrigin",
    "ToolRegistrationError",
    "ToolRegistry",
    "ToolRuntimeMissing",
    "ToolTimeout",
    "check_gates",
    "dispatch_tool",
    "hookimpl",
    "invoke_tool",
    "parse_phase_output",
    "phase_context",
    "render_phase",
    "render_router",
    "tool",
]
