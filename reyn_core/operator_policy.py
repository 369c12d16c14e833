"""Gate layer 2's input: what the operator's profile allows, as final, frozen values (``gates.check``
reads them; a ``ToolRegistry`` decides the layer once per tool and surface from them)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, final

from .context import as_names, frozen_names
from .tool import refuse_subclassing


@final
@dataclass(frozen=True, slots=True)
class PluginPolicy:
    """Operator narrowing for one plugin (layer 2), from ``[plugins.<id>]`` in the profile.

    ``load`` fills only ``surfaces``: the profile's ``tools.include`` / ``tools.exclude`` are applied
    by the loader, which does not register an excluded tool. ``include`` / ``exclude`` here are for a
    host that assembles a registry itself (``RegistryBuilder(operator=...)``) from plugin tools the
    loader never saw."""

    surfaces: frozenset[str] | None = None
    include: frozenset[str] | None = None
    exclude: frozenset[str] = frozenset()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        refuse_subclassing(cls)

    def __post_init__(self) -> None:
        # Frozen sets, copied: the dispatcher decides layer 2 once per registry snapshot, so a set the
        # host keeps and changes later must not change this policy (and a bare string is refused).
        for name in ("surfaces", "include", "exclude"):
            object.__setattr__(self, name, frozen_names(getattr(self, name), name))


@final
@dataclass(frozen=True, slots=True)
class OperatorPolicy:
    """Gate layer 2 for a whole registry: what the operator's profile allows.

    ``plugins_enabled`` is ``[features] plugins``; ``plugins`` maps plugin id to its narrowing;
    ``default_allowed_ops`` is ``[surfaces.phase] default_allowed_ops`` (the ops of a phase that
    names none; empty here, so such a phase is offered nothing: the profile holds the default, the
    gates name no tool); ``router_exclude`` is ``[surfaces.router] exclude``; ``agent_tools`` maps
    an agent's name to the only tools it may use (``[agents.<name>] tools``, else the lists plugins
    declare through ``reyn_agent_tools``; layer 3, for a caller whose ``ctx.agent`` is that name).
    """

    plugins_enabled: bool = True
    plugins: Mapping[str, PluginPolicy] = field(default_factory=dict)
    default_allowed_ops: tuple[str, ...] = ()
    router_exclude: frozenset[str] = frozenset()
    agent_tools: Mapping[str, frozenset[str]] = field(default_factory=dict)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        refuse_subclassing(cls)

    def __post_init__(self) -> None:
        # A plain bool, read once: the master switch is decided once per registry snapshot.
        object.__setattr__(self, "plugins_enabled", bool(self.plugins_enabled))
        # A read-only copy: `policy.plugins.clear()` must not lift layer-2 narrowing afterwards.
        object.__setattr__(
            self, "plugins", MappingProxyType({k: _plugin_policy(k, p) for k, p in self.plugins.items()})
        )
        object.__setattr__(
            self, "default_allowed_ops", as_names(self.default_allowed_ops, "default_allowed_ops")
        )
        object.__setattr__(self, "router_exclude", frozenset(as_names(self.router_exclude, "router_exclude")))
        object.__setattr__(
            self,
            "agent_tools",
            MappingProxyType(
                {str(a): frozenset(as_names(n, f"agent_tools[{a!r}]")) for a, n in self.agent_tools.items()}
            ),
        )


def _plugin_policy(plugin: str, policy: PluginPolicy) -> PluginPolicy:
    """``policy``, which must be a ``PluginPolicy`` (final: nothing can compute layer 2 later)."""
    if type(policy) is not PluginPolicy:
        raise TypeError(
            f"the operator policy of plugin {plugin!r} must be a PluginPolicy, not {type(policy).__name__}"
        )
    return policy


NO_POLICY = OperatorPolicy()


__all__ = ["NO_POLICY", "OperatorPolicy", "PluginPolicy"]
