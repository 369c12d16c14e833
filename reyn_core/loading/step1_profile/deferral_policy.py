"""The profile's ``[surfaces.router.defer]`` as a ``DeferralPolicy``, every name checked against what
loaded (the loading stage's side of tool deferral; the policy itself lives in ``reyn_core.deferral``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from reyn_core.deferral import DeferralPolicy, missing_search_tool
from reyn_core.errors import ProfileError

if TYPE_CHECKING:
    from reyn_core.loading.step1_profile.profile import Profile
    from reyn_core.registry import ToolRegistry

_KEY = "surfaces.router.defer"


def deferral_policy(profile: Profile, registry: ToolRegistry | None = None) -> DeferralPolicy:
    """The profile's ``[surfaces.router.defer]``. With ``registry``, every name is checked:
    ``ProfileError`` (RC003) names the key, the unknown entry and what exists; and a policy that
    defers anything needs its search tool loaded (``missing_search_tool``: fail closed, the router
    surface refuses to start rather than hide tools nothing can find)."""
    cfg = profile.surfaces.router.defer
    policy = DeferralPolicy(
        tools=frozenset(cfg.tools),
        plugins=frozenset(cfg.plugins),
        clusters=frozenset(cfg.clusters),
        prefer=tuple(cfg.prefer),
        plugin_order=profile.enabled,
        max_tools=cfg.max_tools,
        max_tokens=cfg.max_tokens,
        search_tool=cfg.search_tool,
    )
    if registry is not None:
        check_policy_names(profile, registry)
        problem = missing_search_tool(registry, policy.search_tool) if policy.active else None
        if problem is not None:
            raise ProfileError(
                f"{profile.describe_source()}: {_KEY}.search_tool: {problem}",
                key=f"{_KEY}.search_tool",
                file=profile.source,
            )
    return policy


def check_policy_names(profile: Profile, registry: ToolRegistry) -> None:
    """Refuse ``[surfaces.router.defer]`` entries that name nothing loaded: a typo would silently
    defer nothing (or prefer nothing), so it is an error naming the key and the near names."""
    cfg = profile.surfaces.router.defer
    tools = {t.name for t in registry.tools()}
    clusters = {t.cluster for t in registry.tools()}
    plugins = set(profile.enabled)
    kinds: dict[str, tuple[set[str], str]] = {
        "tools": (tools, "no loaded tool is called"),
        "plugins": (plugins, "no enabled plugin (plugins.enable) is called"),
        "clusters": (clusters, "no loaded tool is in a cluster called"),
        "prefer": (tools | plugins | clusters, "no loaded tool, enabled plugin or cluster is called"),
    }
    for key, (known, what) in kinds.items():
        for i, entry in enumerate(getattr(cfg, key)):
            if entry in known:
                continue
            import difflib  # only to word an error

            near = difflib.get_close_matches(entry, sorted(known), n=3)
            hint = f"; did you mean {', '.join(map(repr, near))}?" if near else ""
            raise ProfileError(
                f"{profile.describe_source()}: {_KEY}.{key}[{i}]: {what} {entry!r}{hint}",
                key=f"{_KEY}.{key}[{i}]",
                file=profile.source,
            )
