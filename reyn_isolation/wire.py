"""What crosses the pipe: a ``ToolContext`` as data, and a tool definition as data.

A context crosses without callables: its surface, agent, workspace, caller state, per-agent
allowlist and the JSON-safe part of its ``extras`` (a value that is not JSON data is left out, never
turned into a string the tool could misread). The host's ``bridge`` never crosses: in the worker it is
empty, so a tool that calls one gets ``runtime_missing`` naming it. A definition crosses as exactly
what a surface serves (``served_fields``, so the host's ``definition_digest`` of the rebuilt
definition is the worker's), plus its timeout and the answers of its ``available`` check. A failed
call's reply becomes the same ``ToolError`` the dispatcher would raise in process (``error_from_reply``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict
from pathlib import Path
from typing import Any

from reyn_core import (
    ArgumentProblem,
    InvalidToolArguments,
    PhaseCallerState,
    RouterCallerState,
    SecretFile,
    ToolCancelled,
    ToolContext,
    ToolDefinition,
    ToolDenied,
    ToolError,
    ToolExecutionError,
    ToolGateRefused,
    ToolGates,
    ToolRuntimeMissing,
    ToolTimeout,
)
from reyn_core.host import SURFACES, CheckFailed, ask_available, failure_text, is_secret, served_fields


def context_to_data(ctx: ToolContext) -> dict[str, Any]:
    """``ctx`` as JSON data (no settings: the worker holds its own; no bridge: it cannot cross)."""
    extras: dict[str, Any] = {}
    for key, value in ctx.extras.items():
        try:
            json.dumps(value, allow_nan=False)
        except (TypeError, ValueError):
            continue
        extras[str(key)] = value
    router = ctx.router_state
    phase = ctx.phase_state
    return {
        "surface": ctx.surface,
        "agent": ctx.agent,
        "workspace": str(ctx.workspace),
        "router_state": None
        if router is None
        else {
            "exclude": sorted(router.exclude),
            "allowed_tools": None if router.allowed_tools is None else sorted(router.allowed_tools),
            "plan_mode": router.plan_mode,
            "turn": router.turn,
            "conversation_id": router.conversation_id,
        },
        "phase_state": None if phase is None else asdict(phase),
        "agent_tools": None if ctx.agent_tools is None else sorted(ctx.agent_tools),
        "extras": extras,
        # the host's own files: the packs in the worker refuse them as the host's packs do
        "host_files": {str(path): str(what) for path, what in ctx.host_files.items()},
        "secret_host_files": sorted(str(path) for path, what in ctx.host_files.items() if is_secret(what)),
    }


def context_from_data(data: dict[str, Any], settings: Any) -> ToolContext:
    """The worker's ``ToolContext`` for a call (raises ``TypeError``/``ValueError`` on bad data)."""
    router = data.get("router_state")
    phase = data.get("phase_state")
    return ToolContext(
        surface=data["surface"],
        agent=data.get("agent"),
        workspace=Path(data.get("workspace") or "/"),
        settings=settings,
        router_state=None if router is None else RouterCallerState(**router),
        phase_state=None if phase is None else PhaseCallerState(**phase),
        agent_tools=None if data.get("agent_tools") is None else frozenset(data["agent_tools"]),
        extras=dict(data.get("extras") or {}),
        host_files=_host_files(data),
    )


def _host_files(data: dict[str, Any]) -> dict[str, str]:
    """The host's files of a call's data, the secret ones marked again (``SecretFile``)."""
    secret = set(data.get("secret_host_files") or ())
    return {
        path: SecretFile(what) if path in secret else what
        for path, what in (data.get("host_files") or {}).items()
    }


def availability_table(tool: ToolDefinition, settings: Any) -> dict[str, list[Any]] | None:
    """``{surface: [allowed, reason, failure]}`` of ``tool.available`` for each surface, asked once
    with the plugin's settings, strictly (``ask_available``: only True admits), None when the tool has
    no check. ``reason`` is a ``ToolError``'s own message; ``failure`` the text of a check that failed
    (raised, or answered something not a bool) — for the host to log in the operator's log, never
    shown to a model (``proxy.availability_check``)."""
    if tool.available is None:
        return None
    table: dict[str, list[Any]] = {}
    for surface in SURFACES:
        ctx = ToolContext(surface=surface, settings=settings, workspace=Path("/"))
        answer = ask_available(tool, ctx)
        failure = None if answer.failure is None else failure_text(answer.failure)
        table[surface] = [answer.allowed, answer.reason, failure]
    return table


def definition_to_data(tool: ToolDefinition, settings: Any) -> dict[str, Any]:
    """``tool`` as the worker sends it."""
    return {
        "served": served_fields(tool),
        "timeout_s": tool.timeout_s,
        "available": availability_table(tool, settings),
        "has_schema_enricher": tool.schema_enricher is not None,
        "handler_missing": tool.handler is None,
    }


def definition_from_data(data: dict[str, Any]) -> ToolDefinition:
    """The definition a worker sent, without handler or availability (the proxy adds them). Raises
    ``TypeError``/``ValueError`` for data that is not a definition."""
    served = dict(data["served"])
    gates = served.pop("gates", None) or {}
    if not isinstance(gates, dict):
        raise TypeError("gates must be a mapping")
    timeout = data.get("timeout_s")
    if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, int | float)):
        raise TypeError("timeout_s must be a number")
    return ToolDefinition(**served, handler=None, gates=ToolGates(**gates), timeout_s=timeout)


LOAD_FAILURE_CODES = frozenset(
    {"RI001", "RI002", "RI003", "RI004", "RI005", "RI006", "RI009"}
    | {"RC001", "RC002", "RP002", "RP005", "RJ005"}
)
"""The codes a worker's ``load_failed`` may name (``reyn_core.host.PluginLoadError``'s: the in-process
load's codes for the same failures); the host reports any other as ``RJ005``, so a worker cannot
make its failure read as another diagnostic."""


def loaded_problem(message: Mapping[str, Any]) -> str | None:
    """What is wrong with a worker's answer to the load request, or None when it has the protocol's
    shape: ``op`` "loaded", ``tools`` a list, ``hooks`` a list of names. Checked before the host uses
    any of it, so a forged answer fails the plugin (``RJ005``), never a step of the host's load."""
    if message.get("op") != "loaded":
        return f"answered the load with {str(message.get('op'))[:40]!r}"
    if not isinstance(message.get("tools"), list):
        return "sent tools that are not a list"
    hooks = message.get("hooks")
    if not isinstance(hooks, list) or not all(isinstance(h, str) for h in hooks):
        return "sent hook names that are not a list of strings"
    if not isinstance(message.get("warnings", []), list):
        return "sent warnings that are not a list"  # each is checked as the host words it
    return None


_ERRORS: dict[str, type[ToolError]] = {
    "runtime_missing": ToolRuntimeMissing,
    "timeout": ToolTimeout,
    "denied": ToolDenied,
    "cancelled": ToolCancelled,
    "execution_error": ToolExecutionError,
}


def error_from_reply(tool: str, reply: Mapping[str, Any]) -> ToolError:
    """The ``ToolError`` a worker's failed reply stands for (its kind, message and details, bounded);
    an unknown kind is an ``execution_error``. A refusal because the tool's own check failed in the
    worker (``check_failure``: the failure's text) is a ``CheckFailed`` carrying that text, which
    the dispatcher logs in the registry's log of failures and words as the refusal of a check that
    failed in process (``gates.failed_check``): nothing of the worker's text is shown."""
    kind = reply.get("kind")
    message = str(reply.get("message"))[:4000]
    if kind == "invalid_arguments":
        given = reply.get("problems")
        problems = [
            ArgumentProblem(str(p.get("pointer", ""))[:400], str(p.get("message", ""))[:4000])
            for p in (given[:100] if isinstance(given, list) else ())
            if isinstance(p, Mapping)
        ]
        return InvalidToolArguments(message, tool=tool, problems=problems)
    if kind == "gate_refused":
        failure = reply.get("check_failure")
        if isinstance(failure, str):  # the tool's own check failed in the worker: the dispatcher logs it
            return CheckFailed(tool, failure[-16_000:])
        layer, reason = str(reply.get("layer"))[:40], str(reply.get("reason"))[:4000]
        return ToolGateRefused(message, tool=tool, layer=layer, reason=reason)
    return _ERRORS.get(str(kind), ToolExecutionError)(message, tool=tool)


__all__ = [
    "LOAD_FAILURE_CODES",
    "availability_table",
    "error_from_reply",
    "loaded_problem",
    "context_from_data",
    "context_to_data",
    "definition_from_data",
    "definition_to_data",
]
