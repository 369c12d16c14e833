"""The tables of a profile (``[features]``, ``[plugins]``, ``[surfaces]``, ``[lock]``, …) as strict,
frozen pydantic models; ``loading.profile`` assembles them into a ``Profile`` and reads the file."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from reyn_core.approvals.policy import APPROVERS, Approver

SurfaceName = Literal["router", "phase", "mcp", "cli"]

PHASE_DEFAULT_ALLOWED_OPS: tuple[str, ...] = ("file", "ask_user")
"""The profile's default for ``[surfaces.phase] default_allowed_ops``: the file pack's cluster and
the question to the user. A profile value like any other (docs/profiles.md), not a rule of the
gates, which name no tool; an entry that matches nothing loaded only warns when a profile sets it."""


class ProfileSection(BaseModel):
    """A table of the profile: unknown keys are errors, values are strictly typed, frozen."""

    # strict: TOML values are typed, so "yes" for a bool or 1 for a string is a mistake, not a coercion.
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class FeaturesConfig(ProfileSection):
    """``[features]``."""

    plugins: bool = True
    """Master switch for plugin tools on every surface (loaded plugins stay inspectable)."""


class ToolsFilter(ProfileSection):
    """``[plugins.<id>] tools.include / tools.exclude``: the plugin's own tool names."""

    include: list[str] | None = None
    exclude: list[str] = []


class PluginGrants(ProfileSection):
    """``[plugins.<id>.grants]``: what an isolated plugin's worker may reach (never more than the
    plugin declares in its ``reyn_permissions.toml``). Paths are relative to the profile file."""

    read: list[str] = []
    """Paths the worker may read (besides its own code and the Python installation)."""
    write: list[str] = []
    """Paths the worker may write below."""
    network: bool = False
    """Internet sockets."""
    subprocess: bool = False
    """Starting programs (they run inside the same confinement)."""
    environment: list[str] = []
    """Host environment variables whose values the worker gets."""
    memory_mb: int = Field(default=2048, ge=256, le=65536)
    """The worker's address-space limit."""
    max_result_bytes: int = Field(default=1 << 20, ge=1024, le=256 << 20)
    """The largest result (JSON bytes) a call may return; a larger one is an ``execution_error``."""
    call_timeout_s: float = Field(default=60.0, gt=0, le=86400)
    """How long a call may take when its tool sets no timeout of its own."""


class PluginConfig(ProfileSection):
    """``[plugins.<id>]``: how one enabled plugin is chosen, verified, narrowed and configured."""

    digest: str | None = Field(default=None, pattern=r"^sha256:[0-9a-f]{64}$")
    distribution: str | None = None
    surfaces: list[SurfaceName] | None = None
    tools: ToolsFilter = Field(default_factory=ToolsFilter)
    prefix: str = Field(default="", pattern=r"^[a-zA-Z0-9_-]{0,32}$")
    settings: dict[str, Any] | None = None
    isolation: Literal["in-process", "process"] = "in-process"
    """``"process"`` runs the plugin in a sandboxed worker with ``grants`` (docs/profiles.md)."""
    grants: PluginGrants | None = None


class PluginsConfig(ProfileSection):
    """``[plugins]``: ``enable`` plus one ``[plugins.<id>]`` table per configured plugin."""

    enable: list[str] = []
    configs: dict[str, PluginConfig] = {}

    @model_validator(mode="before")
    @classmethod
    def _split_tables(cls, data: Any) -> Any:
        # In TOML the per-plugin tables sit next to `enable`; any other non-table key stays at
        # top level so that `extra="forbid"` reports it (e.g. `enabel = [...]`).
        if not isinstance(data, Mapping):
            return data
        out: dict[str, Any] = {}
        configs: dict[str, Any] = {}
        for key, value in data.items():
            if key != "enable" and isinstance(value, Mapping):
                configs[key] = value
            else:
                out[key] = value
        out["configs"] = configs
        return out


class RouterDeferConfig(ProfileSection):
    """``[surfaces.router.defer]``: tools left out of the router's tools array, found instead through
    the search tool (docs/large-registries.md). Names are checked against the loaded registry."""

    tools: list[str] = []
    """Tool names (as registered, after any prefix) always deferred."""
    plugins: list[str] = []
    """Plugin ids (enabled ones) whose tools are all deferred."""
    clusters: list[str] = []
    """Clusters whose tools are all deferred."""
    prefer: list[str] = []
    """Tool names, plugin ids or clusters kept first when a budget defers the rest."""
    max_tools: int | None = Field(default=None, ge=1)
    """At most this many tools in the array (the search tool counts)."""
    max_tokens: int | None = Field(default=None, ge=1)
    """At most this many estimated tokens of tools array (compact JSON bytes / 4, rounded up)."""
    search_tool: str = Field(default="find_tools", pattern=r"^[a-zA-Z0-9_-]{1,64}$")
    """The search tool's name (change it when a plugin already has a tool of that name)."""


class RouterSurfaceConfig(ProfileSection):
    """``[surfaces.router]``."""

    exclude: list[str] = []
    defer: RouterDeferConfig = Field(default_factory=RouterDeferConfig)


class PhaseSurfaceConfig(ProfileSection):
    """``[surfaces.phase]``."""

    default_allowed_ops: list[str] = Field(default_factory=lambda: list(PHASE_DEFAULT_ALLOWED_OPS))
    """The ops of a phase that names none (names, clusters or globs); default
    ``PHASE_DEFAULT_ALLOWED_OPS``."""


class SurfacesConfig(ProfileSection):
    """``[surfaces]``."""

    router: RouterSurfaceConfig = Field(default_factory=RouterSurfaceConfig)
    phase: PhaseSurfaceConfig = Field(default_factory=PhaseSurfaceConfig)


class AgentConfig(ProfileSection):
    """``[agents.<name>]``: the operator's word on one agent (a caller's ``ToolContext.agent``)."""

    tools: list[str] | None = None
    """The only tools this agent may see and call, on every surface (gate layer ``call``); replaces
    a list a plugin declares for it (``reyn_agent_tools``). Unset: the plugin's list, if any."""


class LockConfig(ProfileSection):
    """``[lock]``: where ``reyn.lock`` lives (relative to the profile file) and whether to enforce it."""

    path: str = "reyn.lock"
    enforce: bool = False
    verify: Literal["cache", "full"] | None = None
    """Retired: every load hashes every plugin file (there is no digest cache). Still accepted with
    its old values, so an older profile loads; the load warns that it is ignored (``RL005``)."""


class ProvenanceConfig(ProfileSection):
    """``[provenance]``."""

    allow_editable: bool = True
    """False refuses editable and directory installs (their digest covers a source tree)."""


class AuditConfig(ProfileSection):
    """``[audit]``: ``log`` is an append-only JSONL file of every tool call (relative to the profile)."""

    log: str | None = None


class ObservabilityConfig(ProfileSection):
    """``[observability]``: OpenTelemetry spans (docs/observability.md; needs the reyn-otel distribution)."""

    tracing: bool | None = None
    """True turns spans on at load, false turns them off; unset leaves the host's choice alone."""
    capture_content: bool = False
    """Record tool arguments and results in spans (bounded, secret properties redacted)."""
    content_max_chars: int = Field(default=1024, ge=0, le=65536)
    """The most characters of each recorded argument or result text."""


class ApprovalPathsConfig(ProfileSection):
    """``unless_within`` of an approval rule: the call needs no approval when every path in
    ``arguments`` resolves (as the file pack resolves it) inside one of ``roots`` (workspace-relative)."""

    arguments: list[str] = Field(min_length=1)
    roots: list[str] = Field(min_length=1)


class ApprovalRuleConfig(ProfileSection):
    """``[[approvals.rules]]``: the calls that need approval. Every selector given must match (one of
    its values); a selector left out matches every call."""

    tools: list[str] | None = None
    """Tool names as registered (after any prefix)."""
    plugins: list[str] | None = None
    """Plugin ids."""
    clusters: list[str] | None = None
    purity: list[Literal["read_only", "side_effect", "external"]] | None = None
    unless_within: ApprovalPathsConfig | None = None
    approvers: list[Approver] = Field(default_factory=lambda: list(APPROVERS), min_length=1)
    """Who may decide: ``user`` (the surface's user: the host's prompt, MCP elicitation, the CLI's
    terminal) and/or ``operator`` (``reyn approvals approve``)."""


class ApprovalsConfig(ProfileSection):
    """``[approvals]``: which calls wait for a person (docs/approvals.md), where requests are kept,
    and how long a request or an approval lasts."""

    rules: list[ApprovalRuleConfig] = []
    backend: str = Field(default="sqlite", pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
    """The name of an installed store: an entry point of the group ``reyn.approval_stores``. The core
    ships none: ``sqlite`` (the default, one file) is reyn-approvals-sqlite, ``postgres``
    reyn-approvals-postgres."""
    settings: dict[str, Any] = {}
    """The backend's own settings (it validates them): for sqlite ``file``, relative to the profile
    file; never a secret: a DSN is named by the environment variable that holds it."""
    ttl_s: float = Field(default=3600.0, gt=0, le=30 * 24 * 3600)

    @model_validator(mode="before")
    @classmethod
    def _store_moved(cls, data: Any) -> Any:
        if isinstance(data, dict) and "store" in data:
            raise ValueError(
                "[approvals] store is now a setting of the sqlite store (reyn-approvals-sqlite): write "
                "[approvals.settings] file = ... instead (see CHANGELOG.md)"
            )
        return data
