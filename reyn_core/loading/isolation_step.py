"""Load steps around a plugin's permissions: read what it declares, then import it in process or hand
it to the isolation backend.

``read_permissions`` (every enabled plugin, after provenance) reads ``reyn_permissions.toml`` from the
digested bytes, so ``plugins show`` and the lock have it whether or not the plugin is isolated.
``import_or_isolate`` imports an in-process plugin as before; for ``isolation = "process"`` it calls
the backend of the extension point (``isolation_point``: reyn-isolation) and gives the plugin a
plugin manager over the hooks the backend answered with, so the in-process steps that follow
(``collect_tools``, ``collect_diagnostics``, ``collect_commands``) apply exactly the same rules to
the worker's definitions. Without a backend the plugin is refused (``RJ012``), never imported here.
"""

from __future__ import annotations

from typing import Any

from reyn_core.hookspecs import API_VERSION, plugin_manager
from reyn_core.loading.extension_origin import refusal_hint
from reyn_core.loading.isolation_point import IsolationRequest, find_backend
from reyn_core.loading.permissions import NOTHING, DeclarationError, read_declaration
from reyn_core.loading.plugin_state import LoadSession, PluginState
from reyn_core.loading.step4_import.importing import import_plugin, verify_import_origin
from reyn_core.loading.step5_hooks.settings_check import validate_settings
from reyn_core.loading.trusted_files import trusted_files


def read_permissions(session: LoadSession, p: PluginState) -> None:
    """``p.permissions`` from the plugin's declaration (``RJ001`` refuses a malformed one)."""
    rec = p.provenance
    assert rec is not None
    try:
        p.permissions = read_declaration(rec.entry_point, rec.module_locations, rec.files)
    except DeclarationError as exc:
        p.fail("refused", "RJ001", str(exc))


def permissions_report(p: PluginState, isolation: str) -> dict[str, Any] | None:
    """The load report's ``permissions`` of an enabled plugin (None before its declaration was read)."""
    declared = p.permissions
    if declared is None:
        return None
    data: dict[str, Any] = {
        "declared": declared.to_dict(),
        "declaration": declared.source,
        "isolation": isolation,
    }
    if p.isolation is not None:
        data.update(p.isolation.report)
    return data


def declared_of(record: Any) -> dict[str, Any] | None:
    """The ``permissions`` of an installed-but-not-enabled plugin, from its provenance record."""
    try:
        declared = read_declaration(record.entry_point, record.module_locations, record.files)
    except DeclarationError:
        return None
    return {"declared": declared.to_dict(), "declaration": declared.source, "isolation": None}


def import_or_isolate(session: LoadSession, p: PluginState) -> None:
    """After ``verify_import_origin`` (``RI009``: the entry point's module must be covered by the digest
    and nothing may shadow it on the host's path — one rule, whether the plugin runs in process or
    not), import the plugin in process, or hand it to the isolation backend (``isolation =
    "process"``), whose worker imports the plugin from the digested files only and refuses a record
    that does not cover it (``plugin_from_record``)."""
    cfg = session.profile.plugin(p.plugin_id)
    if cfg.isolation != "process" and cfg.grants is not None:
        p.warn(
            "RJ006",
            f"[plugins.{p.plugin_id}.grants] is set but the plugin runs in process, where grants are not "
            "enforced: it runs with the host's permissions",
        )
    verify_import_origin(session, p)
    if not p.ok:
        return
    if cfg.isolation != "process":
        import_plugin(session, p)
        return
    try:
        backend = find_backend(session.extensions)
    except LookupError as exc:  # fail closed: the plugin is not imported in process instead
        p.fail(
            "refused",
            "RJ012",
            f'plugin {p.plugin_id!r} asks for isolation = "process", which this installation cannot '
            f"provide, so it is not loaded: {exc}",
            hint=refusal_hint(exc, "RJ012"),
        )
        return
    assert p.provenance is not None
    request = IsolationRequest(
        p.plugin_id,
        p.provenance,
        p.permissions or NOTHING,
        session.profile,
        trusted_files(session),
        session.workspace,
    )
    isolated = backend.isolate(request)
    p.diagnostics.extend(isolated.diagnostics)
    if isolated.status != "loaded":
        p.status = isolated.status
        return
    if isolated.hooks is None:
        p.fail("failed", "RI005", "the isolation backend answered 'loaded' without any hooks")
        return
    p.api_version = API_VERSION
    p.isolation = isolated
    p.pm = plugin_manager()
    p.pm.register(isolated.hooks, name=p.plugin_id)


def settings_in_process(session: LoadSession, p: PluginState) -> None:
    """Validate settings in the host, unless the worker did (with the plugin's own model)."""
    if p.isolation is None:
        validate_settings(session, p)


__all__ = [
    "declared_of",
    "import_or_isolate",
    "permissions_report",
    "read_permissions",
    "settings_in_process",
]
