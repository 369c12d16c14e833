"""What a load produced: ``LoadResult`` (registry, report, profile) and the per-plugin ``PluginLoadInfo``."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from reyn_core.jsondata import fields_json
from reyn_core.loading.diagnostics import Diagnostic
from reyn_core.loading.plugin_state import PluginStatus

if TYPE_CHECKING:
    from reyn_core.deferral import DeferralPolicy
    from reyn_core.errors import ProfileError
    from reyn_core.loading.extension_origin import ExtensionOrigin
    from reyn_core.loading.step1_profile.profile import Profile
    from reyn_core.loading.step3_provenance.record import ProvenanceRecord
    from reyn_core.registry import ToolRegistry
    from reyn_core.tool import ToolDefinition


@dataclass(frozen=True, slots=True)
class PluginLoadInfo:
    """One plugin as the loader saw it.

    ``status``: ``discovered`` (installed, not enabled: never imported), ``loaded``, ``refused``
    (before import: discovery, provenance or lock), ``failed`` (import, API, settings or a hook),
    ``missing`` (enabled, not installed). ``tools`` are the names it registered (after ``prefix``).
    """

    plugin_id: str
    distribution: str | None
    version: str | None
    status: PluginStatus
    provenance: ProvenanceRecord | None = None
    tools: tuple[str, ...] = ()
    entry_point: str | None = None
    api_version: int | None = None
    diagnostics: tuple[Diagnostic, ...] = ()
    enabled: bool = False
    permissions: Mapping[str, Any] | None = None
    """What the plugin declares (``reyn_permissions.toml``), how it runs (``isolation``) and, isolated,
    what it was granted and what the kernel enforces (``reyn_core.loading.isolation_point``)."""

    @property
    def short_digest(self) -> str:
        """The first 12 hex digits of the tree digest (``ProvenanceRecord.short_digest``), or ``-``."""
        return self.provenance.short_digest if self.provenance is not None else "-"

    @property
    def source_kind(self) -> str | None:
        """index | wheel | directory | editable | vcs, when provenance was computed."""
        return self.provenance.source_kind if self.provenance is not None else None

    def to_json(self) -> dict[str, Any]:
        """A JSON-safe dict: identity, status, full origin, tools and diagnostics."""
        # Loaded whenever there is a record to describe; importing it here keeps this module light.
        from reyn_core.loading.step3_provenance.record import origin_fields

        prov = self.provenance
        origin = None
        if prov is not None:
            mismatches = list(prov.record_mismatches)
            origin = {**origin_fields(prov), "files": len(prov.files), "record_mismatches": mismatches}
        fields = fields_json(self, rename={"plugin_id": "id"}, omit=("provenance", "diagnostics"))
        return {**fields, "origin": origin, "diagnostics": [d.to_json() for d in self.diagnostics]}


@dataclass(frozen=True, slots=True)
class LoadReport:
    """Every plugin the loader saw, and every diagnostic (per plugin and global)."""

    plugins: tuple[PluginLoadInfo, ...]
    diagnostics: tuple[Diagnostic, ...]
    extensions: tuple[ExtensionOrigin, ...] = ()
    """The extensions (isolation backend, tracing add-on, approval store) this load imported, each
    from its verified files: distribution, version and tree digest (``reyn plugins audit`` shows them)."""

    def plugin(self, plugin_id: str) -> PluginLoadInfo | None:
        """The entry for ``plugin_id`` (the enabled one, when an id is listed several times)."""
        matches = [p for p in self.plugins if p.plugin_id == plugin_id]
        return next((p for p in matches if p.enabled), matches[0] if matches else None)

    @property
    def errors(self) -> tuple[Diagnostic, ...]:
        """Diagnostics of severity ``error``."""
        return tuple(d for d in self.diagnostics if d.is_error)


@dataclass(frozen=True, slots=True)
class PluginCommand:
    """A ``reyn <name> ...`` command a loaded plugin contributed: ``run(argv, loaded) -> exit code``."""

    name: str
    plugin_id: str
    run: Callable[[list[str], LoadResult], int]


@dataclass(frozen=True)
class LoadResult:
    """``registry`` (frozen), ``report`` (what happened to each plugin), the ``profile`` used, and the
    ``commands`` loaded plugins contribute (data: no plugin manager outlives the load).

    The profile's call policy was applied by ``load()``, once: the operator policy and the call hooks
    (audit log included) are in ``registry``, the router's deferral is ``deferral``. A surface reads
    them from here and never from the profile's tables."""

    registry: ToolRegistry
    report: LoadReport
    profile: Profile
    commands: Mapping[str, PluginCommand] = field(default_factory=dict)
    router_deferral: DeferralPolicy | ProfileError | None = field(default=None, repr=False)
    workspace: str = ""
    """The load's workspace (``load(workspace=)``, absolute, symlinks resolved): the folder whose
    files ``reyn_trusted_files`` protected and ``reyn_register_tools`` read; a host's
    ``ToolContext.workspace`` is this folder (empty only for a result built by hand)."""

    @property
    def deferral(self) -> DeferralPolicy:
        """``[surfaces.router.defer]`` as ``load()`` applied it, every name checked against what
        loaded (an inactive policy when the profile defers nothing). Raises the ``ProfileError``
        (``RC003``) naming the entry that names nothing loaded: only the router surface, which
        uses it, refuses to start; everything else keeps working."""
        from reyn_core.deferral import DeferralPolicy

        found = self.router_deferral
        if isinstance(found, Exception):
            raise found.with_traceback(None)
        return found if found is not None else DeferralPolicy()

    @property
    def host_files(self) -> Mapping[str, str]:
        """The host's own files this load found (absolute path → what it is: the profile, the lock,
        the audit log, the approval store and its siblings, the argument key, Reyn's caches; see
        ``reyn_core.loading.trusted_files``): ``registry.host_files``, which the dispatcher hands to
        every call's context and every confining pack checks its write roots against."""
        return self.registry.host_files

    def definitions(self, info: PluginLoadInfo) -> tuple[ToolDefinition, ...]:
        """The registered definitions of the tools ``info`` lists (for the lock and its audit)."""
        return tuple(self.registry.get(name) for name in info.tools)

    def plugin_settings(self, plugin_id: str) -> Any:
        """The validated settings of a loaded plugin (an instance of its settings model), or None."""
        return self.registry.plugin_settings.get(plugin_id)
