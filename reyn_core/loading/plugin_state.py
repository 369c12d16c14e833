"""The working state of a load: ``PluginState`` per enabled plugin and the ``LoadSession`` all steps share."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from reyn_core.errors import describe_exception
from reyn_core.loading.diagnostics import Diagnostic

if TYPE_CHECKING:
    import pluggy

    from reyn_core.loading.isolation_point import IsolatedPlugin
    from reyn_core.loading.permissions import DeclaredPermissions
    from reyn_core.loading.schema_cache import SchemaCheckCache
    from reyn_core.loading.step1_profile.profile import Profile
    from reyn_core.loading.step2_discovery.discovery import DiscoveredPlugin
    from reyn_core.loading.step3_provenance.cache import DigestCache
    from reyn_core.loading.step3_provenance.lock import LockFile
    from reyn_core.loading.step3_provenance.record import ProvenanceRecord
    from reyn_core.tool import ToolDefinition

PluginStatus = Literal["discovered", "loaded", "refused", "failed", "missing"]
STATUSES: tuple[str, ...] = ("discovered", "loaded", "refused", "failed", "missing")


@dataclass
class PluginState:
    """Working state of one enabled plugin while it goes through the pipeline."""

    plugin_id: str
    candidate: DiscoveredPlugin | None = None
    status: PluginStatus = "loaded"
    provenance: ProvenanceRecord | None = None
    api_version: int | None = None
    pm: pluggy.PluginManager | None = None
    settings: Any = None
    tools: list[tuple[ToolDefinition, str]] = field(default_factory=list)  # (definition, original name)
    registered: list[str] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    commands: dict[str, Callable[..., int]] = field(default_factory=dict)
    agent_tools: dict[str, tuple[str, ...]] = field(default_factory=dict)  # from reyn_agent_tools
    permissions: DeclaredPermissions | None = None  # reyn_permissions.toml, read after provenance
    isolation: IsolatedPlugin | None = None  # set when the plugin runs out of process (isolation_point)

    def fail(
        self,
        status: PluginStatus,
        code: str,
        message: str,
        *,
        hint: str | None = None,
        traceback: str | None = None,
    ) -> None:
        self.status = status
        self.diagnostics.append(
            Diagnostic.make(code, message, hint=hint, plugin=self.plugin_id, traceback=traceback)
        )

    def warn(self, code: str, message: str) -> None:
        """Record a warning about this plugin; it keeps loading."""
        self.diagnostics.append(Diagnostic.make(code, message, plugin=self.plugin_id, severity="warning"))

    def call_hook(self, name: str, code: str, note: str = "", **kwargs: Any) -> list[Any] | None:
        """The results of this plugin's hook ``name`` called with ``kwargs``; None when the plugin
        implements no such hook, or when the hook raised: then a ``code`` warning names the exception
        (followed by ``note``) and the plugin keeps loading."""
        assert self.pm is not None
        caller = getattr(self.pm.hook, name)
        if not caller.get_hookimpls():
            return None
        try:
            return list(caller(**kwargs))
        except (Exception, SystemExit) as exc:
            self.warn(code, f"{name} raised {describe_exception(exc)}{note}")
            return None

    @property
    def ok(self) -> bool:
        return self.status == "loaded"


@dataclass
class LoadSession:
    """What every step of one load shares: the profile, caches and the lock (read once), plus
    diagnostics that belong to no single plugin."""

    profile: Profile
    schema_cache: SchemaCheckCache
    rehash: bool = False
    global_diags: list[Diagnostic] = field(default_factory=list)
    lock: LockFile | None = None
    lock_error: str | None = None
    lock_outdated: bool = False  # the lock predates LOCK_VERSION: one RL004, every plugin refused
    digest_cache: DigestCache | None = None


__all__ = ["LoadSession", "PluginState"]
