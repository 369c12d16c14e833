"""The extension point that runs a plugin out of process (``[plugins.<id>] isolation = "process"``).

The core does not start workers itself: a distribution does (reyn-isolation, docs/security.md), by
one entry point named ``process`` in the group ``reyn.isolation`` whose object is a
``PluginIsolation``. After provenance, for each plugin the profile isolates, the loader (load
``isolation_step``) calls ``isolate`` with an ``IsolationRequest`` — the plugin's verified provenance
record, what it declares, the profile and the host's own files — and takes the ``IsolatedPlugin`` it
answers: the hooks the later steps call instead of the plugin's (so the same rules — names, prefix,
schema checks, collisions, the lock — apply to what the worker sent), the diagnostics, and what the
load report and approval requests show. The core never imports the plugin in its place: with no
verified backend (reyn-isolation absent, or its files not matching its RECORD), the plugin is refused
with ``RJ012`` naming the distribution to install. Only reyn-isolation may provide the backend: a
``process`` entry point declared by any other distribution is reported (``RD006``) and never imported.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol

if TYPE_CHECKING:
    from reyn_core.loading.diagnostics import Diagnostic
    from reyn_core.loading.extension_origin import ExtensionSession
    from reyn_core.loading.permissions import DeclaredPermissions
    from reyn_core.loading.step1_profile.profile import Profile
    from reyn_core.loading.step3_provenance.record import ProvenanceRecord

ISOLATION_GROUP = "reyn.isolation"
"""The entry-point group of isolation backends; the loader looks up the name ``process``."""
ISOLATION_DISTRIBUTION = "reyn-isolation"
"""The distribution that provides the ``process`` backend (named in ``RJ012``)."""


@dataclass(frozen=True, slots=True)
class IsolationRequest:
    """What the loader hands a backend for one plugin (after its provenance was checked)."""

    plugin_id: str
    record: ProvenanceRecord
    """Where the plugin's code is and the digest of every file: the worker imports only those bytes."""
    declared: DeclaredPermissions
    """What the plugin declares (``reyn_permissions.toml``); grants wider than it are refused."""
    profile: Profile
    """The profile: this plugin's ``grants`` and settings, and every other isolated plugin's roots."""
    host_files: Mapping[str, str] = field(default_factory=dict)
    """The host's own files no write root may cover (absolute path → what it is): the load's one
    list, ``ToolRegistry.host_files`` (``host_files.py``)."""
    workspace: str = ""
    """The load's workspace (``load(workspace=)``): what the worker's ``reyn_trusted_files`` resolves
    relative paths against (empty: the host's working directory)."""


@dataclass(frozen=True, slots=True)
class IsolatedPlugin:
    """A backend's answer: a plugin running out of process, or why it does not (``status``)."""

    status: Literal["loaded", "refused", "failed"]
    diagnostics: tuple[Diagnostic, ...] = ()
    """Every finding, the one that refused or failed the plugin included."""
    hooks: object | None = None
    """The hook implementations the later load steps call (``reyn_register_tools``, …), answering
    from the worker; required when ``status`` is ``loaded``."""
    report: Mapping[str, Any] = field(default_factory=dict)
    """Added to the load report's ``permissions``: what was granted and what the kernel enforces."""
    reach: Mapping[str, Any] = field(default_factory=dict)
    """What the plugin's calls can touch, shown in its approval requests (``summary``: in words)."""


class PluginIsolation(Protocol):
    """What a ``reyn.isolation`` entry point names: runs one plugin out of process per call."""

    def isolate(self, request: IsolationRequest) -> IsolatedPlugin:
        """Start the plugin's worker under its grants, or say why not; never import it in process."""
        ...


def find_backend(extensions: ExtensionSession) -> PluginIsolation:
    """The ``process`` backend of the installed reyn-isolation, imported through the load's
    ``extensions`` only from its verified files (``extension_origin``); ``LookupError`` saying what to
    install when there is none, or why the installed one was refused (its files, or the enforced
    lock). A ``process`` entry point of any other distribution is never imported."""
    from reyn_core.loading.extension_origin import ExtensionError

    try:
        backend: PluginIsolation = extensions.load(
            ISOLATION_GROUP, "process", distribution=ISOLATION_DISTRIBUTION
        )
    except ExtensionError as exc:
        if exc.missing:
            raise LookupError(
                f"no isolation backend is installed: install the {ISOLATION_DISTRIBUTION} distribution "
                f"from the project's wheelhouse (pip install --find-links DIST {ISOLATION_DISTRIBUTION}, "
                f"DIST being the folder `make dist` fills), which provides the entry point 'process' of "
                f"the group {ISOLATION_GROUP!r}; {exc}"
            ) from None
        raise
    return backend


__all__ = [
    "ISOLATION_DISTRIBUTION",
    "ISOLATION_GROUP",
    "IsolatedPlugin",
    "IsolationRequest",
    "PluginIsolation",
    "find_backend",
]
