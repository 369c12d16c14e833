"""Load step 6: the call hooks of a registry — loaded plugins' ``reyn_before_tool_call`` /
``reyn_after_tool_call`` (one pluggy manager each) and the load's audit log."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import pluggy

from reyn_core.errors import exception_message

if TYPE_CHECKING:
    from reyn_core.dispatch import ToolCall, ToolCallHooks, ToolCallOutcome
    from reyn_core.loading.plugin_state import PluginState
    from reyn_core.loading.step1_profile.profile_policy import ProfilePolicy


def call_hooks(policy: ProfilePolicy, plugins: Sequence[PluginState]) -> ToolCallHooks | None:
    """``reyn_before_tool_call`` / ``reyn_after_tool_call`` of loaded plugins, plus the load's audit log."""
    wanted = policy.audit_log is not None or any(
        p.pm is not None
        and (
            p.pm.hook.reyn_before_tool_call.get_hookimpls() or p.pm.hook.reyn_after_tool_call.get_hookimpls()
        )
        for p in plugins
    )
    if not wanted:  # the common case: no hooks, so the dispatcher need not be imported to load
        return None
    from reyn_core.dispatch import ToolCallHooks

    hooks = ToolCallHooks()
    for p in plugins:
        assert p.pm is not None
        hooks = hooks + plugin_call_hooks(p.plugin_id, p.pm)
    if policy.audit_log is not None:
        if policy.key_problem is not None:  # fail closed: no call runs that its log could not hash privately
            refusal = f"{policy.key_problem}; every tool call is refused until it is fixed"
            hooks = hooks + ToolCallHooks(before=(lambda call: refusal,))
        hooks = hooks + policy.audit_log.hooks()
    return hooks if hooks.before or hooks.after else None


def plugin_call_hooks(plugin_id: str, pm: pluggy.PluginManager) -> ToolCallHooks:
    """One plugin's ``reyn_before_tool_call`` / ``reyn_after_tool_call`` as ``ToolCallHooks`` (empty
    when it implements neither): what the loader adds per loaded plugin, and what a test kit building
    a registry from a bare plugin module adds the same way."""
    from reyn_core.dispatch import ToolCallHooks

    hooks = ToolCallHooks()
    if pm.hook.reyn_before_tool_call.get_hookimpls():
        hooks = hooks + ToolCallHooks(before=(before_hook(plugin_id, pm),))
    if pm.hook.reyn_after_tool_call.get_hookimpls():
        hooks = hooks + ToolCallHooks(after=(after_hook(pm),))
    return hooks


def before_hook(plugin_id: str, pm: pluggy.PluginManager) -> Callable[[ToolCall], Any]:
    """A ``ToolCallHooks.before`` callable running one plugin's ``reyn_before_tool_call``; a reason
    it returns denies the call, and a hook that breaks denies it too (fail closed)."""
    from reyn_core.errors import ToolDenied, ToolError

    async def before(call: ToolCall) -> str | None:
        try:
            for result in pm.hook.reyn_before_tool_call(call=call):
                if inspect.isawaitable(result):
                    result = await result
                if result:
                    return f"{result} (plugin {plugin_id!r})"
        except ToolError:
            raise
        except (Exception, SystemExit) as exc:  # a broken policy hook denies: fail closed
            raise ToolDenied(
                f"policy hook of plugin {plugin_id!r} failed ({type(exc).__name__}: "
                f"{exception_message(exc)}); the call is denied",
                tool=call.tool.name,
            ) from None
        return None

    return before


def after_hook(pm: pluggy.PluginManager) -> Callable[[ToolCall, ToolCallOutcome], Any]:
    """A ``ToolCallHooks.after`` callable running one plugin's ``reyn_after_tool_call``."""

    async def after(call: ToolCall, outcome: ToolCallOutcome) -> None:
        for result in pm.hook.reyn_after_tool_call(call=call, outcome=outcome):
            if inspect.isawaitable(result):
                await result

    return after


__all__ = ["after_hook", "before_hook", "call_hooks", "plugin_call_hooks"]
