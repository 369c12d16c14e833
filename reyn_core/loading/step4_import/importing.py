"""Load step 4: import a plugin only from the files that were digested, then check its API and hooks."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from reyn_core.errors import PluginLoadError, exception_message
from reyn_core.hookspecs import API_VERSION, RETIRED_HOOKS, plugin_manager
from reyn_core.loading.diagnostics import Diagnostic
from reyn_core.loading.plugin_state import LoadSession, PluginState
from reyn_core.loading.step4_import.import_origin import (
    RESTART_HINT,
    import_origin_problem,
    import_verified,
    imported_under_other_bytes,
)

if TYPE_CHECKING:
    import pluggy

_HOOK_NAMES = (
    "reyn_register_tools",
    "reyn_settings_model",
    "reyn_before_tool_call",
    "reyn_after_tool_call",
    "reyn_cli_commands",
    "reyn_diagnostics",
    "reyn_trusted_files",
)


def verify_import_origin(session: LoadSession, p: PluginState) -> None:
    """Refuse (``RI009``) when the entry point's module would not come from the digested files.

    A folder or module of the same name earlier on ``sys.path`` (the working directory for
    ``python -m``, a script's folder, ``PYTHONPATH``) would otherwise be imported instead of
    the verified distribution. Nothing is executed: the top-level name is resolved with
    ``importlib.util.find_spec`` (which imports no parent for a top-level name) and its origin
    and package search path must be exactly the location the digest covers. Applies whether or
    not the plugin is pinned or locked: an unverifiable import is never attempted.
    """
    cand = p.candidate
    assert cand is not None and p.provenance is not None
    problem = import_origin_problem(cand.entry_point, p.provenance)
    if problem is not None:
        p.fail(
            "refused",
            "RI009",
            f"plugin {p.plugin_id!r} ({cand.distribution} {cand.version}) is not imported: {problem}",
        )


def import_plugin(session: LoadSession, p: PluginState) -> None:
    """Import the plugin from its digested files and register its hooks (``import_verified``); not
    when this process already imported its modules from other bytes (``RI009``: an upgrade since an
    earlier load, whose import would return the previous version's code). An isolated plugin's
    worker is a fresh process for each load, so this applies to the in-process import only."""
    assert p.provenance is not None
    stale = imported_under_other_bytes(p.provenance)
    if stale is not None:
        p.fail("refused", "RI009", f"plugin {p.plugin_id!r} is not imported: {stale}", hint=RESTART_HINT)
        return
    try:
        module = import_verified(p.provenance)
        where = repr(p.provenance.entry_point)
        p.pm, unused = plugin_hooks(module, p.plugin_id, where)
    except PluginLoadError as exc:
        p.fail("failed", exc.code, exc.message, hint=exc.hint or None, traceback=exc.traceback)
        return
    p.api_version = API_VERSION
    p.diagnostics.extend(hook_warning(code, name, where, p.plugin_id) for code, name in unused)


def plugin_hooks(
    module: Any, plugin_id: str, where: str
) -> tuple[pluggy.PluginManager, list[tuple[str, str]]]:
    """A plugin manager holding ``module``'s hooks, after its ``REYN_API`` check, and the functions it
    defines that are never called, as ``(code, hook name)``: ``RI004`` undecorated, ``RI011`` retired
    (``hook_warning`` words each). ``where`` names the module in messages.
    ``PluginLoadError``: ``RI002``/``RI003``/``RI004``."""
    api = getattr(module, "REYN_API", None)
    if api is None:
        raise PluginLoadError(
            "RI002",
            f"{where} does not declare REYN_API (this reyn-core speaks API {API_VERSION})",
            hint=f"add `REYN_API = {API_VERSION}` to the plugin module",
        )
    if type(api) is not int or api != API_VERSION:
        raise PluginLoadError(
            "RI003", f"{where} declares REYN_API = {api!r}; this reyn-core supports API {API_VERSION}"
        )
    pm = plugin_manager()
    try:
        pm.register(module, name=plugin_id)
        pm.check_pending()
    except (Exception, SystemExit) as exc:
        raise PluginLoadError(
            "RI004", f"invalid hook implementation in {where}: {exception_message(exc)}"
        ) from None
    unused = [
        ("RI004", name)
        for name in _HOOK_NAMES
        if callable(getattr(module, name, None)) and not getattr(pm.hook, name).get_hookimpls()
    ]
    # decorated or not: a retired hook is never called
    unused += [("RI011", name) for name in RETIRED_HOOKS if callable(getattr(module, name, None))]
    return pm, unused


def hook_warning(code: str, name: str, where: str, plugin_id: str) -> Diagnostic:
    """The loader's warning about hook function ``name`` of the module ``where`` names, which is never
    called: ``RI004`` (a hook defined without ``@hookimpl``) or ``RI011`` (a retired hook).
    ``ValueError`` for any other code, or a name that is not a hook (resp. retired hook) name."""
    if code == "RI004" and name in _HOOK_NAMES:
        return Diagnostic.make(
            "RI004",
            f"{where} defines {name}() without @reyn_core.hookimpl, so it is never called",
            plugin=plugin_id,
            severity="warning",  # its hint is the table's for RI004 at this severity
        )
    if code == "RI011" and name in RETIRED_HOOKS:
        return Diagnostic.make(
            "RI011",
            f"{where} defines {name}(), a retired hook that is no longer called ({RETIRED_HOOKS[name]}); "
            "the plugin loads and the function is ignored",
            plugin=plugin_id,
        )
    raise ValueError(f"{code} about {name!r:.80} is not a warning the loader gives about a hook")


__all__ = ["hook_warning", "import_plugin", "plugin_hooks", "verify_import_origin"]
