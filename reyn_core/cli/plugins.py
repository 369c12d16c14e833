"""``reyn plugins list | show | lock | audit | new``: what is installed, enabled, loaded, and locked."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import ReynError
from . import EXIT_FAILED, EXIT_OK
from .completion import completes, plugin_ids
from .loading import emit, emit_json, load_from_args, profile_from_args, table
from .parser import add_command, add_group
from .reporting import json_mode, report_error
from .text_fields import shown, shown_data

if TYPE_CHECKING:
    from reyn_core.loading.step1_profile.profile import Profile


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    psub = add_group(sub, common, "plugins", "installed and enabled plugins, lock and audit")
    add_command(psub, common, "list", run_list, "discovered vs enabled plugins with their status", loads=True)
    show = add_command(
        psub, common, "show", run_show, "one plugin: full origin, tools, diagnostics", loads=True
    )
    completes(show.add_argument("plugin_id", metavar="ID"), plugin_ids)
    for verb, what in (("enable", "add plugins to"), ("disable", "remove plugins from")):
        help = f"{what} [plugins] enable in the profile file, keeping its comments"
        edit = add_command(psub, common, verb, run_edit, help)
        edit.set_defaults(enable=verb == "enable")
        completes(edit.add_argument("plugin_ids", nargs="+", metavar="ID"), plugin_ids)
    lock = add_command(psub, common, "lock", run_lock, "write reyn.lock for the enabled plugins", loads=True)
    lock.add_argument("--lock-file", help="where to write (default: [lock] path of the profile)")
    audit = add_command(
        psub, common, "audit", run_audit, "compare the installed plugins with reyn.lock", loads=True
    )
    audit.add_argument("--lock-file", help="the lock to compare with (default: [lock] path of the profile)")
    new = add_command(psub, common, "new", run_new, "create a new plugin project")
    new.add_argument("name")
    new.add_argument("--dest", default=".", help="parent directory of the new project (default: .)")


# --------------------------------------------------------------------------- list / show


def run_list(args: argparse.Namespace) -> int:
    result = load_from_args(args, inspect_discovered=True)
    infos = result.report.plugins
    data = {"profile": result.profile.source, "plugins": [i.to_json() for i in infos]}
    if not infos:
        return emit(args, data, "no Reyn plugins are installed (entry point group 'reyn.plugins')")
    rows = [
        [
            i.plugin_id,
            i.status,
            "yes" if i.enabled else "no",
            i.distribution or "-",
            i.version or "-",
            i.source_kind or "-",
            i.short_digest,
            str(len(i.tools)) if i.status == "loaded" else "-",
        ]
        for i in infos
    ]
    text = table(rows, ["ID", "STATUS", "ENABLED", "DISTRIBUTION", "VERSION", "SOURCE", "DIGEST", "TOOLS"])
    problems = sum(1 for i in infos for d in i.diagnostics if d.is_error)
    if problems:
        text += f"\n\n{problems} error(s): run `reyn doctor` or `reyn plugins show ID` for details"
    return emit(args, data, text)


def run_show(args: argparse.Namespace) -> int:
    result = load_from_args(args, inspect_discovered=True)
    infos = [i for i in result.report.plugins if i.plugin_id == args.plugin_id]
    if not infos:
        known = ", ".join(sorted({i.plugin_id for i in result.report.plugins})) or "none"
        raise ReynError(f"no plugin {args.plugin_id!r} is installed or enabled (known: {known})")
    registry = result.registry
    commands: dict[str, Any] = {}
    if any(i.status == "loaded" for i in infos):
        from .plugin_commands import usable_commands

        found, _ = usable_commands(result)
        commands = {name: c for name, c in found.items() if c.plugin_id == args.plugin_id}
    out = []
    for info in infos:
        data = info.to_json()
        data["tools"] = [_tool_json(registry, name) for name in info.tools]
        data["commands"] = sorted(commands) if info.status == "loaded" else []
        out.append(data)
    if args.json:
        emit_json(out[0] if len(out) == 1 else out)
        return EXIT_OK
    for n, data in enumerate(out):
        if n:
            print()
        _print_show(shown_data(data))  # every field escaped, whatever line shows it
    return EXIT_OK


def _tool_json(registry: Any, name: str) -> dict[str, Any]:
    from reyn_core.definition_digest import definition_digest

    t = registry.get(name)
    return {
        "name": name,
        "original_name": registry.original_name(name),
        "cluster": t.cluster,
        "purity": t.purity,
        "router": t.gates.router,
        "phase": t.gates.phase,
        "definition_sha256": definition_digest(t),
        "description": t.summary,
    }


def _print_show(d: dict[str, Any]) -> None:
    origin = d["origin"] or {}
    print(f"plugin {d['id']}  ({d['status']}{', enabled' if d['enabled'] else ', not enabled'})")
    fields = [
        ("distribution", f"{d['distribution'] or '-'} {d['version'] or ''}".rstrip()),
        ("entry point", d["entry_point"] or "-"),
        ("api version", str(d["api_version"]) if d["api_version"] is not None else "-"),
        ("source", " ".join(x for x in (origin.get("source_kind"), origin.get("source_url")) if x) or "-"),
        ("commit", origin.get("commit") or "-"),
        ("artifact", origin.get("artifact_sha256") or "-"),
        (
            "digest",
            (
                f"{origin['tree_digest']} ({origin.get('digest_scope')}, {origin.get('files')} files)"
                if origin.get("tree_digest")
                else "-"
            ),
        ),
    ]
    for key, value in fields:
        print(f"  {key:<13} {value}")
    if d["tools"]:
        print(f"  tools ({len(d['tools'])}):")
        for t in d["tools"]:
            renamed = f" (plugin name {t['original_name']})" if t["original_name"] != t["name"] else ""
            print(f"    {t['name']}{renamed} [{t['cluster']}, {t['purity']}] {t['description']}")
    if d.get("commands"):
        print(f"  commands: {', '.join(d['commands'])}")
    _print_permissions(d.get("permissions"))
    if d["diagnostics"]:
        print("  diagnostics:")
        for diag in d["diagnostics"]:
            tool = f" [{diag['tool']}]" if diag["tool"] else ""
            print(f"    {diag['code']} {diag['severity']}{tool}: {diag['message']}")
            if diag["hint"]:
                print(f"      fix: {diag['hint']}")


def _print_permissions(perm: dict[str, Any] | None) -> None:
    """Declared and granted side by side (granted only for an isolated plugin)."""
    if perm is None:
        return
    where = perm.get("declaration") or "no reyn_permissions.toml: declares nothing"
    runs = {"process": "isolated (sandboxed worker)", "in-process": "in process: not enforced"}
    print(f"  permissions   {runs.get(perm.get('isolation') or '', 'not enabled')}; declared in {where}")
    granted = perm.get("granted")
    print(f"    {'':<17} {'declared':<10} granted")
    for key, value in perm["declared"].items():
        given = "-" if granted is None else granted.get(key, "-")
        shown = ", ".join(given) if isinstance(given, list) else str(given).lower()
        decl = ", ".join(value) if isinstance(value, list) else str(value).lower()
        print(f"    {key:<17} {decl or '-':<10} {shown or '-'}")
    if perm.get("enforced"):
        print(f"    enforced: {', '.join(perm['enforced'])} (Landlock ABI {perm.get('landlock_abi')})")


# --------------------------------------------------------------------------- enable / disable


def run_edit(args: argparse.Namespace) -> int:
    from .profile_file import edit_enabled

    return edit_enabled(args, args.plugin_ids, enable=args.enable)


# --------------------------------------------------------------------------- lock / audit


def _lock_path(args: argparse.Namespace, profile: Profile) -> Path:
    """``--lock-file``, else the profile's ``[lock] path``."""
    return Path(args.lock_file) if args.lock_file else profile.lock_path


def run_lock(args: argparse.Namespace) -> int:
    from reyn_core.loading.step3_provenance.lock_audit import lock_from_load
    from reyn_core.loading.step3_provenance.lock_file import write_lock

    result = load_from_args(args, review="lock")
    path = _lock_path(args, result.profile)
    if not result.profile.enabled and not result.report.extensions:
        return report_error(
            f"nothing to lock: {result.profile.source or 'no profile file was found, so it'}"
            f" enables no plugin and uses no extension (`reyn plugins enable ID` first); {path} was not "
            "written",
            code="failed",
            exit_code=EXIT_FAILED,
        )
    broken = [i for i in result.report.plugins if i.enabled and i.status != "loaded"]
    if broken:
        state = {"failed": "failed to load", "refused": "was refused", "missing": "is not installed"}
        why = []
        for info in broken:
            first = next((d for d in info.diagnostics if d.is_error), None)
            detail = f"{first.code}: {first.message}" if first else info.status
            why.append(f"plugin {info.plugin_id!r} {state.get(info.status, info.status)}: {detail}")
        if not json_mode():
            for line in why:
                print(f"reyn: error: {line}", file=sys.stderr)
        return report_error(
            f"not writing {path}: fix or disable the plugins above first",
            code="failed",
            exit_code=EXIT_FAILED,
            plugins=why,
        )
    lock = lock_from_load(result)
    write_lock(path, lock)
    loaded = [i for i in result.report.plugins if i.enabled]
    plugins = [
        {
            "id": i.plugin_id,
            "tree_digest": i.provenance.tree_digest if i.provenance else None,
            "tools": list(i.tools),
        }
        for i in loaded
    ]
    extensions = [e.to_dict() for e in result.report.extensions]
    tools = sum(len(i.tools) for i in loaded)
    text = f"wrote {path}: {len(loaded)} plugin(s), {tools} tool(s), {len(extensions)} extension(s)"
    return emit(args, {"lock": str(path), "plugins": plugins, "extensions": extensions}, text)


def run_audit(args: argparse.Namespace) -> int:
    from reyn_core.loading.step3_provenance.lock_audit import audit
    from reyn_core.loading.step3_provenance.lock_file import read_lock

    profile = profile_from_args(args)
    path = _lock_path(args, profile)
    if not path.is_file():
        return report_error(f"no lock file at {path}; run `reyn plugins lock` first")
    lock = read_lock(path)
    result = load_from_args(args, review="audit")
    drifts = audit(lock, result)
    inert = _never_executed(result)
    if args.json:
        emit_json(
            {
                "lock": str(path),
                "ok": not drifts,
                "drift": [d.to_dict() for d in drifts],
                "never_executed": [
                    {"plugin": f.plugin_id, "path": f.path, "kind": f.kind, "detail": f.detail} for f in inert
                ],
                "extensions": [e.to_dict() for e in result.report.extensions],
            }
        )
    elif drifts:
        print(shown(f"{len(drifts)} change(s) since {path}:"))
        for d in drifts:
            where = " ".join(
                x for x in (f"tool {d.tool}" if d.tool else "", f"file {d.path}" if d.path else "") if x
            )
            print(shown(f"  {d.plugin_id}: {d.kind}{' (' + where + ')' if where else ''}: {d.detail}"))
    else:
        print(shown(f"ok: the installed plugins match {path}"))
    if not args.json:  # pinned in the lock's [extensions] too (drift above): shown for review
        for e in result.report.extensions:
            print(
                shown(
                    f"extension {e.group}:{e.name}: {e.distribution} {e.version} ({e.source_kind}) "
                    f"{e.tree_digest}"
                )
            )
    if inert and not args.json:
        print(
            f"note: {len(inert)} file(s) in plugin and extension trees are never executed (Reyn "
            "compiles each module from its digested source); one no installer wrote is a sign of tampering:"
        )
        for f in inert[:_SHOWN]:
            print(shown(f"  {f.path}: {f.kind}, {f.detail} ({_owner(f.plugin_id)})"))
        if len(inert) > _SHOWN:
            print(f"  … and {len(inert) - _SHOWN} more (--json lists all)")
    return EXIT_FAILED if drifts else EXIT_OK


_SHOWN = 20


def _owner(key: str) -> str:
    """``plugin 'id'``, or ``extension 'group:name'`` (an extension's key has a colon)."""
    return f"{'extension' if ':' in key else 'plugin'} {key!r}"


def _never_executed(result: Any) -> list[Any]:
    """Bytecode, extension modules and ``.pth`` files in the trees of the enabled plugins and of the
    extensions the load verified (each shown by its ``<group>:<name>``)."""
    from reyn_core.loading.step3_provenance.inert import inert_files

    records = [i.provenance for i in result.report.plugins if i.enabled and i.provenance is not None]
    records += [e.provenance for e in result.report.extensions]
    return [f for record in records for f in inert_files(record)]


# --------------------------------------------------------------------------- new


def run_new(args: argparse.Namespace) -> int:
    try:
        from .scaffold import next_steps, scaffold_plugin
    except ModuleNotFoundError as exc:
        raise ReynError("`reyn plugins new` is not available in this installation") from exc
    path = scaffold_plugin(args.name, Path(args.dest))
    return emit(args, {"created": str(path)}, next_steps(path, args.name))
