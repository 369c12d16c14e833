"""Load step 4: import a plugin only from the files that were digested, then check its API and hooks."""

from __future__ import annotations

from reyn_core.errors import describe_exception, exception_message
from reyn_core.hookspecs import API_VERSION, RETIRED_HOOKS, plugin_manager
from reyn_core.loading.diagnostics import Diagnostic
from reyn_core.loading.plugin_state import LoadSession, PluginState
from reyn_core.loading.step3_provenance.record import ProvenanceRecord
from reyn_core.loading.step4_import.import_origin import import_origin_problem, serve_from_digested_files

_HOOK_NAMES = (
    "reyn_register_tools",
    "reyn_settings_model",
    "reyn_before_tool_call",
    "reyn_after_tool_call",
    "reyn_cli_commands",
    "reyn_diagnostics",
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
    cand = p.candidate
    assert cand is not None
    try:
        serve_from_digested_files(p.provenance)
        module = cand.ep.load()
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # SystemExit from a plugin must not end the host either
        import traceback

        where = _failing_location(exc, p.provenance)
        p.fail(
            "failed",
            "RI001",
            f"importing {cand.entry_point!r} from {cand.distribution} failed"
            + (f" at {where}" if where else "")
            + f": {describe_exception(exc)}",
            traceback="".join(traceback.format_exception(exc)),
        )
        return
    api = getattr(module, "REYN_API", None)
    if api is None:
        p.fail(
            "failed",
            "RI002",
            f"{cand.entry_point!r} does not declare REYN_API (this reyn-core speaks API {API_VERSION})",
        )
        return
    if type(api) is not int or api != API_VERSION:
        p.fail(
            "failed",
            "RI003",
            f"{cand.entry_point!r} declares REYN_API = {api!r}; this reyn-core supports API {API_VERSION}",
        )
        return
    p.api_version = api
    pm = plugin_manager()
    try:
        pm.register(module, name=p.plugin_id)
        pm.check_pending()
    except (Exception, SystemExit) as exc:
        p.fail(
            "failed",
            "RI004",
            f"invalid hook implementation in {cand.entry_point!r}: {exception_message(exc)}",
        )
        return
    p.pm = pm
    for name in _HOOK_NAMES:
        if callable(getattr(module, name, None)) and not getattr(pm.hook, name).get_hookimpls():
            p.diagnostics.append(
                Diagnostic.make(
                    "RI004",
                    f"{cand.entry_point!r} defines {name}() without @reyn_core.hookimpl, so it is "
                    "never called",
                    plugin=p.plugin_id,
                    severity="warning",
                    hint="decorate it with @reyn_core.hookimpl",
                )
            )
    for name, why in RETIRED_HOOKS.items():
        if callable(getattr(module, name, None)):  # decorated or not: it is never called
            p.diagnostics.append(
                Diagnostic.make(
                    "RI011",
                    f"{cand.entry_point!r} defines {name}(), a retired hook that is no longer "
                    f"called ({why}); the plugin loads and the function is ignored",
                    plugin=p.plugin_id,
                )
            )


def _failing_location(exc: BaseException, rec: ProvenanceRecord | None) -> str | None:
    """``/path/pkg/mod.py:12 (in func)``: the innermost traceback frame in the plugin's own files
    (the folders or modules its digest covers), or where a syntax error in one of them is. None when
    no frame is the plugin's (e.g. the failure is inside a dependency it imports and nothing of its
    own is on the stack)."""
    import os
    import traceback

    if rec is None or not rec.module_locations:
        return None
    roots = [os.path.realpath(path) for _, path in rec.module_locations]

    def own(filename: str | None) -> bool:
        if not filename:
            return False
        real = os.path.realpath(filename)
        return any(real == root or real.startswith(root + os.sep) for root in roots)

    if isinstance(exc, SyntaxError) and own(exc.filename) and exc.lineno:
        return f"{exc.filename}:{exc.lineno}"
    for frame in reversed(traceback.extract_tb(exc.__traceback__)):
        if own(frame.filename):
            return f"{frame.filename}:{frame.lineno} (in {frame.name})"
    return None


__all__ = ["import_plugin", "verify_import_origin"]
