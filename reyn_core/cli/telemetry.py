"""Where the ``reyn`` command's spans go: a library host sets up its own exporter; the ``reyn``
command is its own host, so when its profile turns tracing on (``[observability] tracing = true``)
the tracing add-on (reyn-otel, found by its ``reyn.tracing`` entry point) sets up its exporter from
the environment, before the load. Without the add-on the load says so (``RC012``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from reyn_core.loading.step1_profile.profile import Profile


def export_spans(profile: Profile) -> bool:
    """Have the tracing add-on export this process's spans if the profile turns tracing on; returns
    whether an exporter was set up."""
    if profile.observability.tracing is not True:
        return False
    from reyn_core.loading.loader import load_session
    from reyn_core.loading.schema_cache import SchemaCheckCache
    from reyn_core.loading.tracing_addon import tracing_addon

    # its own lookup (pinned by the enforced lock as the load's is); without one, the load's RC012 says
    # what to install
    addon, _ = tracing_addon(load_session(profile, SchemaCheckCache()).extensions)
    return False if addon is None else bool(addon.export_spans())


__all__ = ["export_spans"]
