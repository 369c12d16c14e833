"""Per-agent tool lists: what plugins declare through ``reyn_agent_tools``, the profile's
``[agents.<name>] tools`` over them, and the names in them that match no loaded tool.

The lists become ``OperatorPolicy.agent_tools``, which ``gates.check`` applies (layer ``call``, rule
``agent_tools``) on every surface; this module only gathers and checks them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from reyn_core.loading.diagnostics import Diagnostic
from reyn_core.loading.plugin_state import LoadSession, PluginState
from reyn_core.loading.step1_profile.profile import Profile
from reyn_core.registry import ToolRegistry

MAX_AGENTS = 10_000
MAX_NAMES = 10_000


def collect_agent_tools(session: LoadSession, p: PluginState) -> None:
    """Ask a loaded plugin's ``reyn_agent_tools`` hook for ``{agent: [tool names]}``.

    A hook that raises or returns something that is not such a mapping gives an ``RI012`` warning
    and declares nothing; a bad entry is skipped with ``RI012`` and the others are kept."""
    note = "; no agent tool list is used"
    for result in p.call_hook("reyn_agent_tools", "RI012", note, settings=p.settings) or ():
        if result is None:
            continue
        if not isinstance(result, Mapping) or len(result) > MAX_AGENTS:
            p.warn("RI012", f"reyn_agent_tools returned a {type(result).__name__}, not a mapping of lists")
            continue
        for agent, names in result.items():
            if not _is_name_list(agent, names):
                p.warn(
                    "RI012",
                    f"reyn_agent_tools: the entry {str(agent)[:80]!r} is not a name with a list of names",
                )
                continue
            # one plugin's several hooks: every list applies, so the names are the common ones
            known = p.agent_tools.get(agent)
            p.agent_tools[agent] = tuple(names) if known is None else tuple(n for n in known if n in names)


def _is_name_list(agent: object, names: object) -> bool:
    if not isinstance(agent, str) or not agent or isinstance(names, str | bytes):
        return False
    if not isinstance(names, Sequence | frozenset | set) or len(names) > MAX_NAMES:
        return False
    return all(isinstance(n, str) for n in names)


def agent_tool_lists(profile: Profile, plugins: Sequence[PluginState]) -> dict[str, frozenset[str]]:
    """Each agent's allowlist: ``[agents.<name>] tools`` when the profile sets it, else the names
    every loaded plugin declaring the agent admits (each plugin's list narrows)."""
    lists: dict[str, frozenset[str]] = {}
    for p in plugins:
        if not p.ok:
            continue
        for agent, names in p.agent_tools.items():
            known = lists.get(agent)
            lists[agent] = frozenset(names) if known is None else known & frozenset(names)
    for agent, config in profile.agents.items():
        if config.tools is not None:
            lists[agent] = frozenset(config.tools)
    return dict(sorted(lists.items()))


def agent_tool_checks(
    profile: Profile, plugins: Sequence[PluginState], registry: ToolRegistry
) -> list[Diagnostic]:
    """``RC010`` for every name in an agent's tool list that no loaded tool is called (a typo, or a
    tool of a plugin this profile does not enable): the agent cannot use it. A warning, because the
    list only narrows what the agent sees."""
    diags: list[Diagnostic] = []
    for agent, config in sorted(profile.agents.items()):
        for name in config.tools or ():
            if name not in registry:
                diags.append(_unknown(agent, name, f"[agents.{agent}] tools in the profile", None))
    for p in plugins:
        if not p.ok:
            continue
        for agent, names in sorted(p.agent_tools.items()):
            if profile.agents.get(agent) is not None and profile.agents[agent].tools is not None:
                continue  # replaced by the profile's list: its names are not used
            for name in names:
                if name not in registry:
                    diags.append(
                        _unknown(agent, name, f"the tool list plugin {p.plugin_id!r} declares", p.plugin_id)
                    )
    return diags


def _unknown(agent: str, name: str, where: str, plugin: str | None) -> Diagnostic:
    return Diagnostic.make(
        "RC010",
        f"agent {agent!r} lists tool {name!r} ({where}), which no loaded tool is called, so the agent "
        "cannot use it",
        plugin=plugin,
        tool=name,
        severity="warning",
    )


__all__ = ["agent_tool_checks", "agent_tool_lists", "collect_agent_tools"]
