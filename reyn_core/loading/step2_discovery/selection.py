"""Load step 2: choose the one installed distribution that provides an enabled plugin id."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from reyn_core.loading.plugin_state import LoadSession, PluginState
from reyn_core.loading.step2_discovery.discovery import DiscoveredPlugin, name_key


def select_distribution(
    session: LoadSession, candidates: Sequence[DiscoveredPlugin], p: PluginState, near: Iterable[str]
) -> None:
    cfg = session.profile.plugin(p.plugin_id)
    if not candidates:
        import difflib

        close = difflib.get_close_matches(p.plugin_id, list(near), n=2)
        suggestion = f"; did you mean {' or '.join(map(repr, close))}?" if close else ""
        p.fail(
            "missing",
            "RD001",
            f"plugin {p.plugin_id!r} is enabled but no installed distribution provides it "
            f"(entry point group 'reyn.plugins'){suggestion}",
        )
        return
    chosen = list(candidates)
    if cfg.distribution is not None:
        chosen = [c for c in candidates if name_key(c.distribution) == name_key(cfg.distribution)]
        if not chosen:
            have = ", ".join(f"{c.distribution} {c.version}" for c in candidates)
            p.fail(
                "refused",
                "RD003",
                f"the profile names distribution {cfg.distribution!r} for plugin "
                f"{p.plugin_id!r}, but it is provided by: {have}",
            )
            return
    if len(chosen) > 1:
        have = ", ".join(f"{c.distribution} {c.version} ({c.entry_point})" for c in chosen)
        p.fail(
            "refused",
            "RD002",
            f"plugin id {p.plugin_id!r} is provided by {len(chosen)} distributions: {have}; none is loaded",
            hint=f"choose one in the profile: [plugins.{p.plugin_id}] "
            f'distribution = "{chosen[0].distribution}"',
        )
        return
    p.candidate = chosen[0]
    if not p.candidate.well_formed:
        p.fail(
            "refused",
            "RD004",
            f"entry point {p.plugin_id} = {p.candidate.entry_point!r} of "
            f"{p.candidate.distribution} is malformed",
        )


__all__ = ["select_distribution"]
