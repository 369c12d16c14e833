"""Load step 5 (per plugin): the tools a plugin registers, filtered, prefixed, checked and stamped."""

from __future__ import annotations

import inspect
import os
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from reyn_core.errors import PluginLoadError, ToolRegistrationError, describe_exception
from reyn_core.loading.diagnostics import Diagnostic
from reyn_core.loading.plugin_state import LoadSession, PluginState
from reyn_core.loading.step3_provenance.lock_check import check_lock_tools
from reyn_core.registry import RegistryBuilder, collision_key
from reyn_core.registry.collisions import Claim, find_collisions
from reyn_core.tool import ToolDefinition, ToolOrigin, as_definition

if TYPE_CHECKING:
    import pluggy


def collect_tools(session: LoadSession, p: PluginState) -> None:
    """Call the plugin's ``reyn_register_tools`` hook and turn what it registered into checked tools.

    ``register()`` only works while the hook runs (an async hook is refused, ``RI004``). Each object
    must be a tool (``RT001``); the profile's ``[plugins.<id>.tools]`` include/exclude then selects
    among them (a name the plugin does not register is ``RC005``), names registered twice under one
    collision key are dropped (``RT004``), the profile's ``prefix`` is applied, a lazy handler whose
    module is missing is kept inspectable but unrunnable (``RT008``), and each tool is checked in a
    scratch builder and stamped with the plugin's verified origin. Under ``[lock] enforce`` the
    tools are compared with the lock last. Results go to ``p.tools``; collisions across plugins are
    ``registration``'s job.
    """
    assert p.pm is not None and p.provenance is not None
    try:
        collected = registered_tools(p.pm, p.settings, session.workspace)
    except PluginLoadError as exc:
        p.fail("failed", exc.code, exc.message)
        return
    cfg = session.profile.plugin(p.plugin_id)
    origin = p.provenance.to_origin(p.api_version)
    include = set(cfg.tools.include) if cfg.tools.include is not None else None
    exclude = set(cfg.tools.exclude)
    defs = [d for d in collected if isinstance(d, ToolDefinition)]
    for problem in (d for d in collected if isinstance(d, str)):
        p.diagnostics.append(Diagnostic.make("RT001", problem, plugin=p.plugin_id))
    own_names = [d.name for d in defs]
    for unknown in sorted(((include or set()) | exclude) - set(own_names)):
        p.diagnostics.append(
            Diagnostic.make(
                "RC005",
                f"plugins.{p.plugin_id}.tools names {unknown!r}, which this plugin does not register "
                f"(it registers: {', '.join(sorted(own_names)) or 'nothing'})",
                plugin=p.plugin_id,
                tool=unknown,
            )
        )
    kept = [d for d in defs if d.name not in exclude and (include is None or d.name in include)]
    twice = find_collisions(Claim(d.name, origin) for d in kept)
    for collision in twice.values():
        p.diagnostics.append(
            Diagnostic.make(
                "RT004",
                collision.message(),
                plugin=p.plugin_id,
                tool=collision.names[0],
                hint=collision.hint(),
            )
        )
    scratch = RegistryBuilder(checked=session.checked)
    for d in kept:
        if collision_key(d.name) in twice:
            continue
        original = d.name
        final = d.renamed(cfg.prefix + d.name) if cfg.prefix else d
        if isinstance(final.handler, str) and not _handler_module_exists(final.handler):
            p.diagnostics.append(
                Diagnostic.make(
                    "RT008",
                    f"the handler {final.handler!r} of tool {final.name!r} cannot be found in this "
                    "installation; the tool stays inspectable but is hidden and answers runtime_missing",
                    plugin=p.plugin_id,
                    tool=final.name,
                )
            )
            final = replace(final, handler=None)
        try:
            registered = scratch.register(final, origin=_stamp(origin, d.origin), original_name=original)
        except ToolRegistrationError as exc:
            p.diagnostics.append(
                Diagnostic.make(
                    exc.code,
                    exc.message,
                    hint=exc.hint or None,
                    plugin=p.plugin_id,
                    tool=exc.tool or final.name,
                )
            )
            continue
        p.tools.append((registered, original))
    if session.profile.lock.enforce:
        check_lock_tools(session, p)


def registered_tools(
    pm: pluggy.PluginManager, settings: Any, workspace: str = ""
) -> list[ToolDefinition | str]:
    """What the plugin's ``reyn_register_tools`` hook registers, in order: each a ``ToolDefinition``
    (a plain typed function is wrapped with ``@tool``'s defaults), or the ``RT001`` message for an
    object that is not a tool. ``register()`` works only while the hook runs. ``PluginLoadError``:
    ``RI005`` (the hook raised), ``RI004`` (the hook is async). ``workspace``: the load's (default:
    the working directory), handed to the hook."""
    collected: list[object] = []
    open_ = [True]

    def register(obj: object) -> object:
        if not open_[0]:
            raise RuntimeError("register() was called after reyn_register_tools returned")
        collected.append(obj)
        return obj

    try:
        where = Path(os.path.realpath(workspace or os.getcwd()))
        results = pm.hook.reyn_register_tools(register=register, settings=settings, workspace=where)
    except (Exception, SystemExit) as exc:
        raise PluginLoadError("RI005", f"hook reyn_register_tools raised {describe_exception(exc)}") from None
    finally:
        open_[0] = False
    if any(inspect.isawaitable(r) for r in results):
        for r in results:
            if inspect.iscoroutine(r):
                r.close()
        raise PluginLoadError(
            "RI004",
            "reyn_register_tools is async; it must be a plain function that calls "
            "register() before returning",
        )
    out: list[ToolDefinition | str] = []
    for obj in collected:
        try:
            out.append(as_definition(obj))
        except TypeError as exc:
            out.append(f"plugin registered something that is not a tool: {exc}")
    return out


def _handler_module_exists(ref: str) -> bool:
    """Whether the module of a lazy ``"module:attr"`` handler can be found, without importing it
    (its parent package, the plugin's own, is already imported)."""
    import importlib.util

    try:
        return importlib.util.find_spec(ref.partition(":")[0]) is not None
    except (ImportError, ValueError):
        return False


def _stamp(verified: ToolOrigin, claimed: ToolOrigin | None) -> ToolOrigin:
    """The origin a plugin's tool gets: always the verified plugin record (id, distribution, digest).

    A tool a plugin imports from an MCP server may say so (kind ``mcp``, the server's command or URL
    as source, the sha256 of the server's tool definition); those descriptive fields are kept, but
    the identity and the digest always come from the plugin's verified provenance.
    """
    if claimed is None or claimed.kind != "mcp":
        return verified
    return replace(
        verified,
        kind="mcp",
        source_kind=claimed.source_kind,
        source_url=claimed.source_url,
        commit=None,
        artifact_sha256=claimed.artifact_sha256,
    )


__all__ = ["collect_tools", "registered_tools"]
