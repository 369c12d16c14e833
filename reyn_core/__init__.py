"""Reyn: one registry of LLM tools, rendered for native function calling, phase JSON contracts and MCP.

This module is the plugin author's API: define tools, register them, read settings, raise the
right errors. An application that loads plugins and runs a model uses ``reyn_core.host``; the LLM
runtime (``RouterLoop``, ``PhaseRunner``, replay, ``reyn chat``) is the reyn-loops distribution
(``reyn_loops``). Everything else is internal. Importing it never imports litellm, mcp or httpx.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from reyn_core.context import HostBridge, PhaseCallerState, RouterCallerState, ToolContext
from reyn_core.errors import (
    ArgumentProblem,
    InvalidToolArguments,
    ReynError,
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
from reyn_core.hookspecs import API_VERSION, hookimpl
from reyn_core.lazy_exports import lazy_exports as _lazy_exports
from reyn_core.moved import install_finder
from reyn_core.secret_files import SecretFile, SecretPaths, secret_paths
from reyn_core.settings import settings_as
from reyn_core.tool import ToolDefinition, ToolGates, ToolOrigin, tool

if TYPE_CHECKING:
    from reyn_core.cli.command_parser import command_parser
    from reyn_core.jsondata import canonical_json
    from reyn_core.manifest import lazy_definitions, read_manifest, tool_manifest
    from reyn_core.remote_log import log_remote_failure
    from reyn_core.validation import SchemaRefused, json_schema_validator

__version__ = "0.1.0"

install_finder()  # a name that moved out of the core is an ImportError naming its new home

# Imported on first use, so `import reyn_core` stays light.
__getattr__, __dir__ = _lazy_exports(
    __name__,
    {
        "reyn_core.manifest": ("lazy_definitions", "read_manifest", "tool_manifest"),
        "reyn_core.validation": ("json_schema_validator", "SchemaRefused"),
        "reyn_core.jsondata": ("canonical_json",),
        "reyn_core.remote_log": ("log_remote_failure",),
        "reyn_core.cli.command_parser": ("command_parser",),
    },
    globals(),
)

__all__ = [
    "API_VERSION",
    "ArgumentProblem",
    "HostBridge",
    "InvalidToolArguments",
    "PhaseCallerState",
    "ReynError",
    "RouterCallerState",
    "SchemaRefused",
    "SecretFile",
    "SecretPaths",
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
    "ToolRuntimeMissing",
    "ToolTimeout",
    "canonical_json",
    "command_parser",
    "hookimpl",
    "json_schema_validator",
    "lazy_definitions",
    "log_remote_failure",
    "read_manifest",
    "secret_paths",
    "settings_as",
    "tool",
    "tool_manifest",
]
