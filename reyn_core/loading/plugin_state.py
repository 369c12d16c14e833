"""The working state of a load: ``PluginState`` per enabled plugin and the ``LoadSession`` all steps share."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal

from reyn_core.errors import describe_exception
from reyn_core.loading.diagnostics import Diagnostic

if TYPE_CHECKING:
    import pluggy

    from reyn_core.loading.extension_origin import ExtensionSession
    from reyn_core.loading.isolation_point import IsolatedPlugin
    from reyn_core.loading.permissions import DeclaredPermissions
    from reyn_core.loading.step1_profile.profile import Profile
    from reyn_core.loading.step2_discovery.discovery import DiscoveredPlugin
    from reyn_core.loading.step3_provenance.lock import LockFile
    from reyn_core.loading.step3_provenance.record import ProvenanceRecord
    from reyn_core.registry.builder import CheckedDefinitions
    from reyn_core.tool import ToolDefinition

PluginStatus = Literal["discovered", "loaded", "refused", "failed", "missing"]


class PluginState:
    """Working state of one enabled plugin while it goes through the pipeline.

    A plain class (not a dataclass): it is mutable working state that is never compared, hashed or
    printed, and a dataclass's generated methods cost a load more to create than they would ever do."""

    __slots__ = (
        "agent_tools",
        "api_version",
        "candidate",
        "commands",
        "diagnostics",
        "isolation",
        "permissions",
        "plugin_id",
        "pm",
        "provenance",
        "registered",
        "settings",
        "status",
        "tools",
    )

    def __init__(
        self,
        plugin_id: str,
        candidate: DiscoveredPlugin | None = None,
        status: PluginStatus = "loaded",
        provenance: ProvenanceRecord | None = None,
        api_version: int | None = None,
        pm: pluggy.PluginManager | None = None,
        settings: Any = None,
    ) -> None:
        self.plugin_id = plugin_id
        self.candidate = candidate
        self.status: PluginStatus = status
        self.provenance = provenance
        self.api_version = api_version
        self.pm = pm
        self.settings = settings
        self.tools: list[tuple[ToolDefinition, str]] = []  # (definition, original name)
        self.registered: list[str] = []
        self.diagnostics: list[Diagnostic] = []
        self.commands: dict[str, Callable[..., int]] = {}
        self.agent_tools: dict[str, tuple[str, ...]] = {}  # from reyn_agent_tools
        self.permissions: DeclaredPermissions | None = None  # reyn_permissions.toml, read after provenance
        self.isolation: IsolatedPlugin | None = None  # set when it runs out of process (isolation_point)

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


class LoadSession:
    """What every step of one load shares: the profile and the lock (read once), the extensions it
    looked up (``extensions``: verified once, reported, pinned by the lock), the definitions its
    registry builders have checked (``checked``: the real registry adopts what a scratch builder of
    this load checked; it lives and dies with the load, never stored), plus diagnostics that belong
    to no single plugin. A plain class, like ``PluginState``; the loader's ``load_session`` makes one."""

    __slots__ = (
        "checked",
        "extensions",
        "global_diags",
        "host_files",
        "lock",
        "lock_error",
        "lock_gate",
        "lock_outdated",
        "profile",
        "workspace",
    )

    def __init__(
        self, profile: Profile, extensions: ExtensionSession, checked: CheckedDefinitions, workspace: str = ""
    ) -> None:
        self.profile = profile
        # the workspace the host's tools work in (``load(workspace=)``, default the working directory)
        self.workspace = os.path.realpath(workspace or os.getcwd())
        self.extensions = extensions
        self.checked = checked
        self.global_diags: list[Diagnostic] = []
        self.lock: LockFile | None = None
        self.lock_error: str | None = None
        self.lock_outdated = False  # the lock predates LOCK_VERSION: one RL004, every plugin refused
        # an audit of a profile that enforces its lock: the plugins are checked against it before
        # import as the enforced load checks them (``load_session``); their tools are not
        self.lock_gate = False
        self.host_files: dict[str, str] | None = None  # the host's own files (``trusted_files``)


__all__ = ["LoadSession", "PluginState"]
