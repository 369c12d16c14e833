"""The host API: what an application that loads plugins and runs a model needs — load a profile,
render tools for a surface, dispatch calls, defer and search tools. A plugin author needs none of
it (that API is ``reyn_core`` itself); the LLM loops are the reyn-loops distribution (``reyn_loops``),
built on this API alone.

Every name is imported on first use, so ``import reyn_core.host`` costs nothing.
"""

from __future__ import annotations

from typing import Any

from reyn_core.lazy_exports import lazy_exports
from reyn_core.moved import moved_attributes

_EXPORTS = {
    # load
    "load": "reyn_core.loading.loader",
    "LoadResult": "reyn_core.loading.report",
    "Profile": "reyn_core.loading.step1_profile.profile",
    "ProfileError": "reyn_core.errors",
    "load_profile": "reyn_core.loading.step1_profile.profile",
    # provenance and the lock (what `reyn plugins lock / audit` use)
    "provenance_for": "reyn_core.loading.step3_provenance.record",
    "tree_digest": "reyn_core.loading.step3_provenance.digest",
    "DIGEST_VERSION": "reyn_core.loading.step3_provenance.digest",
    "LockFile": "reyn_core.loading.step3_provenance.lock",
    "LockedPlugin": "reyn_core.loading.step3_provenance.lock",
    "lock_from_load": "reyn_core.loading.step3_provenance.lock_audit",
    "read_lock": "reyn_core.loading.step3_provenance.lock_file",
    "write_lock": "reyn_core.loading.step3_provenance.lock_file",
    "audit": "reyn_core.loading.step3_provenance.lock_audit",
    "compare_tools": "reyn_core.loading.step3_provenance.drift",
    # the one identity of what a tool definition serves (the lock pins it, the audit log records it)
    "definition_digest": "reyn_core.definition_digest",
    # render targets: a tool's parameters adapted for a provider, and the target of a model name
    "TARGETS": "reyn_core.provider_schemas",
    "adapt_parameters": "reyn_core.provider_schemas",
    "target_for_model": "reyn_core.provider_schemas",
    # a tool's result schema with an object root (MCP's outputSchema), and whether results are wrapped
    "output_schema": "reyn_core.result_schema",
    # the workspace a host serves tools in (refuses an implicit `/` or home directory)
    "choose_workspace": "reyn_core.context",
    # diagnostics of a load
    "explain_unavailable_tool": "reyn_core.loading.unavailable",
    "Diagnostic": "reyn_core.loading.diagnostics",
    "DIAGNOSTIC_CODES": "reyn_core.loading.diagnostics:CODES",
    "CodeTable": "reyn_core.code_table",  # a distribution's own codes, read from its codes.toml
    # the registry (built by RegistryBuilder, read as a frozen ToolRegistry) and its gates
    "RegistryBuilder": "reyn_core.registry",
    "ToolRegistry": "reyn_core.registry",
    "gates": "reyn_core.registry:gates",  # gates.check is the one gate evaluation
    "Decision": "reyn_core.gates",
    "op_matches": "reyn_core.gates",  # whether an allowed_ops entry names a tool (name or cluster)
    "OperatorPolicy": "reyn_core.operator_policy",
    "PluginPolicy": "reyn_core.operator_policy",
    # render
    "render_router": "reyn_core.render",
    "render_router_json": "reyn_core.render.router",
    "render_phase": "reyn_core.render",
    "phase_context": "reyn_core.render.phase_catalog",
    "PhaseCatalog": "reyn_core.render",
    "StrictRenderError": "reyn_core.errors",
    "StrictSchemaError": "reyn_core.errors",
    "parse_phase_output": "reyn_core.render.phase_contract",
    "PhaseOutput": "reyn_core.render.phase_contract",
    "PhaseOpCall": "reyn_core.render.phase_contract",
    "PhaseOutputError": "reyn_core.errors",
    # how every error a model or a user reads names an exception (one line, never a traceback)
    "describe_exception": "reyn_core.errors",
    # dispatch
    "dispatch_tool": "reyn_core.dispatch",
    "dispatch_batch": "reyn_core.dispatch",
    "HandlerThreads": "reyn_core.dispatch",  # a host counting a call until its handler's thread ends
    "BatchCall": "reyn_core.dispatch",
    "ToolNotRun": "reyn_core.errors",
    # approvals bound to the exact call (docs/approvals.md)
    "ApprovalGate": "reyn_core.approvals",
    "ApprovalPolicy": "reyn_core.approvals",
    "ApprovalRule": "reyn_core.approvals",
    "ApprovalRecord": "reyn_core.approvals",
    "ApprovalStore": "reyn_core.approvals",
    "ApprovalStoreFactory": "reyn_core.approvals",  # what a `reyn.approval_stores` entry point names
    "ApprovalStatements": "reyn_core.approvals",  # the store rules in SQL, for every SQL store
    "ProcessConnection": "reyn_core.approvals.process_connection",  # its one connection per process
    "ToolApprovalRequired": "reyn_core.errors",
    "ApprovalRefused": "reyn_core.errors",
    "ApprovalDecisionError": "reyn_core.errors",
    "decide_pending_on_terminal": "reyn_core.approvals.terminal",
    "invoke_tool": "reyn_core.dispatch",
    "ToolCall": "reyn_core.dispatch",
    "ToolCallHooks": "reyn_core.dispatch",
    "ToolCallOutcome": "reyn_core.dispatch",
    "JsonlAuditLog": "reyn_core.dispatch",
    # the one observation seam (reyn-otel's spans): calls, load phases, isolated workers
    "Observer": "reyn_core.observation",
    "ObservedCall": "reyn_core.observation",
    "observe_with": "reyn_core.observation",
    "active_observer": "reyn_core.observation",  # for an extension that runs calls elsewhere (workers)
    "active_tracer": "reyn_core.observation",  # for a runtime's own spans (reyn-loops: chat spans)
    "tool_call_id": "reyn_core.observation",  # dispatched calls inside carry the model's call id
    "redact": "reyn_core.redaction",  # what a schema marks secret, hidden wherever arguments are shown
    "installation_key": "reyn_core.loading.argument_key",
    # what a tool reports while it works (ctx.report_progress / ctx.log), for the host's listener
    "Reporter": "reyn_core.tool_reports",
    "QueuedReporter": "reyn_core.tool_reports",
    "Progress": "reyn_core.tool_reports",
    "ToolLog": "reyn_core.tool_reports",
    "ToolReport": "reyn_core.tool_reports",
    "LOG_LEVELS": "reyn_core.tool_reports",
    # running a plugin out of process: the extension point (a `reyn.isolation` entry point named
    # `process`, docs/security.md#isolated-plugins)
    "PluginIsolation": "reyn_core.loading.isolation_point",
    "IsolationRequest": "reyn_core.loading.isolation_point",
    "IsolatedPlugin": "reyn_core.loading.isolation_point",
    "DeclaredPermissions": "reyn_core.loading.permissions",
    # one plugin run through the loader's own steps outside `load()`: in an isolated plugin's worker
    # (from its verified record) and in reyn-testing's registry_from_plugin (from a bare module)
    "plugin_from_record": "reyn_core.loading.plugin_module",
    "plugin_from_module": "reyn_core.loading.plugin_module",
    "PluginModule": "reyn_core.loading.plugin_module",
    "WorkerPlugin": "reyn_core.loading.plugin_module",
    "worker_warnings": "reyn_core.loading.plugin_module",
    "PluginLoadError": "reyn_core.errors",
    # what a worker's wire needs: the fields a definition serves, the surfaces, JSON nesting bound
    "served_fields": "reyn_core.definition_digest",
    # a tool's own available(ctx), asked strictly; its failure's text crosses for the host to log
    "ask_available": "reyn_core.own_check",
    "CheckFailed": "reyn_core.own_check",
    "failure_text": "reyn_core.own_check",
    "SURFACES": "reyn_core.context",
    "depth_within": "reyn_core.jsondata",
    # the value bound beside it: a peer's JSON text counted before it is parsed (cost is per value)
    "values_within": "reyn_core.jsondata",
    "json_values": "reyn_core.jsondata",
    "JsonValueCount": "reyn_core.jsondata",
    # bytes are counted only as UTF-8 JSON (a parser of bytes detects UTF-16/32): else NotUtf8Json
    "check_utf8_head": "reyn_core.jsondata",
    "NotUtf8Json": "reyn_core.errors",
    # a peer's JSON text parsed with JSON's numbers only (NaN, Infinity, 1e400: NotJsonNumber)
    "parse_json": "reyn_core.jsondata",
    "NotJsonNumber": "reyn_core.errors",
    # the one reader of a peer's JSON text (the value bound, then parse_json), and of text Reyn wrote
    # itself; json.loads is banned elsewhere (ruff TID251)
    "read_json": "reyn_core.jsondata",
    "TooManyJsonValues": "reyn_core.errors",
    "parse_own_json": "reyn_core.jsondata",
    "is_secret": "reyn_core.secret_files",  # and the one predicate of the host's secret-file mark
    # the one writer of a file a command replaces: atomic, keeping a link and the file's mode
    "atomic_write_bytes": "reyn_core.atomic_write",
    # where the host's code comes from (import path, distributions, imported modules, finders), which
    # no write root may overlap: the trusted files' and reyn-isolation's one source
    "host_code": "reyn_core.loading.host_code",
    # text UTF-8 cannot carry (a lone surrogate): where it is in JSON data, for a surface's own input
    "lone_surrogate_at": "reyn_core.unicode_text",
    "escape_lone_surrogates": "reyn_core.unicode_text",
    "describe_lone_surrogate": "reyn_core.unicode_text",
    # large registries
    "DeferralPolicy": "reyn_core.deferral",
    "ToolDeferral": "reyn_core.deferral",
    "TurnTools": "reyn_core.deferral",
    "estimate_tokens": "reyn_core.deferral",
    "found_tool_names": "reyn_core.deferral",
}

_exported, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
_moved = moved_attributes(__name__)


def __getattr__(name: str) -> Any:
    """An exported name, imported on first use; a name that left the core (``reyn_core.moved``) is
    an error naming its new distribution, or saying why it was removed (``ImportError`` in ``from
    reyn_core.host import name``, ``AttributeError`` elsewhere: ``hasattr`` is False)."""
    return _exported(name) if name in _EXPORTS else _moved(name)


__all__ = sorted(_EXPORTS)
