"""Why a tool name the registry does not have is unavailable: the host-side hint for ``not_found``.

The dispatcher answers ``not_found`` from the registry alone, and that envelope is what a model
reads: it must not learn plugin ids, statuses or diagnostic codes. A host (``reyn tools call``, an
application) asks ``explain_unavailable_tool(result, name)`` (``reyn_core.host``) for the plugin
that would have provided the name and what happened to it, and shows that to its operator as
``host_hint``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from reyn_core.jsondata import fields_json

if TYPE_CHECKING:
    from reyn_core.loading.report import LoadResult, PluginLoadInfo
    from reyn_core.loading.step3_provenance.lock import LockFile

# A plugin in one of these states provides no tools this session.
_DOWN = ("refused", "failed", "missing")


@dataclass(frozen=True, slots=True)
class UnavailablePlugin:
    """A plugin that did (per ``reyn.lock``) or may provide a tool, and why it provides none now.

    ``status`` is the load status, or ``disabled`` for an installed plugin not in ``plugins.enable``;
    ``code`` / ``message`` are its first error diagnostic (None when it has none, e.g. disabled)."""

    plugin_id: str
    status: str
    code: str | None
    message: str | None

    def to_json(self) -> dict[str, Any]:
        return fields_json(self, rename={"plugin_id": "plugin"})


@dataclass(frozen=True, slots=True)
class UnavailableTool:
    """The host-side explanation of a ``not_found`` tool name.

    ``collision`` is the fix when the name was not registered because it collided with another
    tool's (``RT004``). ``known`` is True when ``reyn.lock`` records that these plugins registered
    the name (or they collided on it); False when it is only a suspicion (the name matches nothing
    and these enabled plugins loaded no tools)."""

    tool: str
    plugins: tuple[UnavailablePlugin, ...]
    known: bool
    lock_path: str | None = None
    collision: str | None = None

    @property
    def message(self) -> str:
        """One line for an operator: the tool, each plugin with its status and first code, the fix."""
        if self.collision is not None:
            claimed = ", ".join(f"{p.plugin_id!r} ({p.message})" for p in self.plugins)
            return (
                f"tool {self.tool!r} is not registered because its name collided (RT004): claimed by "
                f"{claimed} — {self.collision}"
            )
        parts = []
        for p in self.plugins:
            why = f"{p.status}" + (f" ({p.code}: {p.message})" if p.code else "")
            parts.append(f"plugin {p.plugin_id!r} is {why}")
        if self.known:
            head = f"tool {self.tool!r} is provided by a plugin that is not loaded (per {self.lock_path}): "
        else:
            head = f"no loaded tool is called {self.tool!r}; it may come from a plugin that did not load: "
        first = self.plugins[0].plugin_id
        action = (
            f"add {first!r} to plugins.enable"
            if self.plugins[0].status == "disabled"
            else f"run `reyn plugins show {first}` or `reyn doctor`"
        )
        return head + "; ".join(parts) + f" — {action}"

    def to_json(self) -> dict[str, Any]:
        plugins = [p.to_json() for p in self.plugins]
        fields = fields_json(self, rename={"lock_path": "lock"}, omit=("plugins",))
        return {**fields, "plugins": plugins, "message": self.message}


def explain_unavailable_tool(result: LoadResult, name: str) -> UnavailableTool | None:
    """Why ``name`` is not in ``result.registry``, when a plugin explains it; None otherwise.

    First a collision: tools claiming that name (or one differing only in case or separators) were
    all left unregistered (``RT004``). Then the lock (``[lock] path``, read when it exists, whether
    or not it is enforced): the plugins it records as registering ``name`` that are now not
    loaded — failed, refused, missing or not enabled. Failing that, every enabled plugin that was
    refused, failed or is missing, because a plugin that never imported cannot say which tools it
    has.
    """
    if name in result.registry:
        return None
    report = result.report
    collided = _collision(result, name)
    if collided is not None:
        return collided
    lock = _read_lock(result)
    if lock is not None:
        owners = [lp.plugin_id for lp in lock.plugins if lp.tool(name) is not None]
        down = [_describe(report.plugin(pid), pid) for pid in owners]
        found = tuple(d for d in down if d is not None)
        if found:
            return UnavailableTool(name, found, True, str(result.profile.lock_path))
    suspects = tuple(
        _describe(info, info.plugin_id) for info in report.plugins if info.enabled and info.status in _DOWN
    )
    plugins = tuple(s for s in suspects if s is not None)
    return UnavailableTool(name, plugins, False) if plugins else None


def _collision(result: LoadResult, name: str) -> UnavailableTool | None:
    """The tools whose names collided (``RT004``) on ``name``'s collision key, when there are any:
    the load registered none of them, and the fix is in the profile."""
    from reyn_core.tool import collision_key

    key = collision_key(name)
    found = [
        d
        for d in result.report.diagnostics
        if d.code == "RT004" and d.tool is not None and collision_key(d.tool) == key
    ]
    if not found:
        return None
    claims = tuple(
        UnavailablePlugin(d.plugin or "(host)", "collided", "RT004", f"as {d.tool!r}") for d in found
    )
    return UnavailableTool(name, claims, True, collision=found[0].hint or "")


def _describe(info: PluginLoadInfo | None, plugin_id: str) -> UnavailablePlugin | None:
    """The plugin's state, or None when it is loaded (it would have the tool if it still had it)."""
    if info is None:
        return UnavailablePlugin(plugin_id, "missing", None, "not installed")
    if info.status == "loaded":
        return None
    status = info.status if info.enabled else "disabled"
    first = next((d for d in info.diagnostics if d.is_error), None)
    return UnavailablePlugin(
        plugin_id,
        status,
        first.code if first else None,
        first.message if first else ("not in plugins.enable" if not info.enabled else None),
    )


def _read_lock(result: LoadResult) -> LockFile | None:
    """The profile's lock when it exists and reads; None otherwise (a hint never fails)."""
    from reyn_core.loading.step3_provenance.lock_file import read_lock

    path = result.profile.lock_path
    try:
        return read_lock(path) if path.is_file() else None
    except Exception:
        return None


__all__ = ["UnavailablePlugin", "UnavailableTool", "explain_unavailable_tool"]
