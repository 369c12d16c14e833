"""The load pipeline: profile → discover → select → provenance → import → settings → register → freeze.

``load(profile)`` returns a ``LoadResult``. Every step fails closed for just the plugin or tool
concerned: it records a ``Diagnostic`` (stable code, message, hint) and the rest loads normally.
Plugins that are installed but not enabled are reported as ``discovered`` and never imported.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import pluggy

from reyn_core.errors import ToolRegistrationError, describe_exception, exception_message
from reyn_core.hookspecs import API_VERSION, PROJECT, ReynHookSpecs
from reyn_core.loading.diagnostics import CODES, Diagnostic
from reyn_core.loading.discovery import DiscoveredPlugin, discover
from reyn_core.loading.registration import register_all
from reyn_core.loading.report import LoadReport, LoadResult, PluginLoadInfo, PluginStatus
from reyn_core.loading.schema_cache import SchemaCheckCache
from reyn_core.profile import Profile, load_profile
from reyn_core.registry import RegistryBuilder, ToolRegistry, collision_key
from reyn_core.tool import ToolDefinition, ToolOrigin, as_definition

if TYPE_CHECKING:
    from reyn_core.loading.provenance.record import ProvenanceRecord

__all__ = ["LoadReport", "LoadResult", "PluginLoadInfo", "load"]

_HOOK_NAMES = (
    "reyn_register_tools",
    "reyn_settings_model",
    "reyn_before_tool_call",
    "reyn_after_tool_call",
    "reyn_cli_commands",
    "reyn_diagnostics",
)
_PLUGIN_CODE = re.compile(r"^R[A-Z]{1,2}[0-9]{3}$")


@dataclass
class PluginState:
    """Working state of one enabled plugin while it goes through the pipeline."""

    plugin_id: str
    candidate: DiscoveredPlugin | None = None
    status: PluginStatus = "loaded"
    provenance: ProvenanceRecord | None = None
    api_version: int | None = None
    pm: pluggy.PluginManager | None = None
    settings: Any = None
    has_settings_model: bool = False
    tools: list[tuple[ToolDefinition, str]] = field(default_factory=list)  # (definition, original name)
    registered: list[str] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)

    def fail(self, status: PluginStatus, code: str, message: str, *, hint: str | None = None) -> None:
        self.status = status
        self.diagnostics.append(Diagnostic.make(code, message, hint=hint, plugin=self.plugin_id))

    @property
    def ok(self) -> bool:
        return self.status == "loaded"


class _Loader:
    def __init__(self, profile: Profile, schema_cache: SchemaCheckCache, *, rehash: bool) -> None:
        self.profile = profile
        self.rehash = rehash
        self.schema_cache = schema_cache
        self.global_diags: list[Diagnostic] = []
        self._lock: Any = None
        self._lock_error: str | None = None
        self._digest_cache: Any = None
        self._verified_specs: dict[str, Any] = {}

    # ------------------------------------------------------------------ steps 1-2: discover, select

    def select(self, candidates: Sequence[DiscoveredPlugin], p: PluginState, near: Iterable[str]) -> None:
        cfg = self.profile.plugin(p.plugin_id)
        if not candidates:
            import difflib

            close = difflib.get_close_matches(p.plugin_id, list(near), n=2)
            suggestion = f"; did you mean {' or '.join(map(repr, close))}?" if close else ""
            p.fail(
                "missing",
                "RD001",
                f"plugin {p.plugin_id!r} is enabled but no installed distribution provides it "
                f"(entry point group 'reyn.plugins'){suggestion}",
            )
            return
        chosen = list(candidates)
        if cfg.distribution is not None:
            chosen = [c for c in candidates if _norm(c.distribution) == _norm(cfg.distribution)]
            if not chosen:
                have = ", ".join(f"{c.distribution} {c.version}" for c in candidates)
                p.fail(
                    "refused",
                    "RD003",
                    f"the profile names distribution {cfg.distribution!r} for plugin "
                    f"{p.plugin_id!r}, but it is provided by: {have}",
                )
                return
        if len(chosen) > 1:
            have = ", ".join(f"{c.distribution} {c.version} ({c.entry_point})" for c in chosen)
            p.fail(
                "refused",
                "RD002",
                f"plugin id {p.plugin_id!r} is provided by {len(chosen)} distributions: {have}; "
                "none is loaded",
                hint=f"choose one in the profile: [plugins.{p.plugin_id}] "
                f'distribution = "{chosen[0].distribution}"',
            )
            return
        p.candidate = chosen[0]
        if not p.candidate.well_formed:
            p.fail(
                "refused",
                "RD004",
                f"entry point {p.plugin_id} = {p.candidate.entry_point!r} of "
                f"{p.candidate.distribution} is malformed",
            )

    # ------------------------------------------------------------------ step 3: provenance

    def check_provenance(self, p: PluginState) -> None:
        from reyn_core.loading.provenance.cache import DigestCache
        from reyn_core.loading.provenance.record import provenance_for

        cand = p.candidate
        assert cand is not None and cand.dist is not None
        if self._digest_cache is None and not self.rehash:
            self._digest_cache = DigestCache.default()
        try:
            rec = provenance_for(
                cand.dist, plugin_id=p.plugin_id, entry_point=cand.entry_point, cache=self._digest_cache
            )
        except Exception as exc:
            p.fail(
                "refused",
                "RP004",
                f"cannot compute the provenance of {cand.distribution} "
                f"{cand.version}: {describe_exception(exc)}",
            )
            return
        p.provenance = rec
        cfg = self.profile.plugin(p.plugin_id)
        if rec.record_mismatches:
            shown = ", ".join(rec.record_mismatches[:5]) + (" …" if len(rec.record_mismatches) > 5 else "")
            p.fail(
                "refused",
                "RP002",
                f"{len(rec.record_mismatches)} installed file(s) of {rec.distribution} "
                f"differ from its RECORD: {shown}",
            )
        if rec.source_kind in ("editable", "directory") and not self.profile.provenance.allow_editable:
            p.fail(
                "refused",
                "RP003",
                f"{rec.distribution} is a {rec.source_kind} install "
                f"({rec.source_url or 'local folder'}); the profile sets provenance.allow_editable = false",
            )
        if rec.problems:
            # The digest may not cover everything that will be imported: fatal when something
            # depends on the digest (a pin or an enforced lock), a warning otherwise.
            strict = cfg.digest is not None or self.profile.lock.enforce
            message = f"the digest of {rec.distribution} may be incomplete: " + "; ".join(rec.problems[:3])
            if strict:
                p.fail("refused", "RP005", message)
            else:
                p.diagnostics.append(
                    Diagnostic.make("RP005", message, plugin=p.plugin_id, severity="warning")
                )
        if cfg.digest is not None and cfg.digest != rec.tree_digest:
            p.fail(
                "refused",
                "RP001",
                f"digest of {rec.distribution} {rec.version} is {rec.tree_digest}, "
                f"but the profile pins plugins.{p.plugin_id}.digest = {cfg.digest}",
            )
        if self.profile.lock.enforce:
            self.check_lock_provenance(p, rec)

    def locked(self, p: PluginState) -> Any:
        """The plugin's lock entry, or None after recording why there is none."""
        if self._lock is None and self._lock_error is None:
            from reyn_core.loading.provenance.lock_file import read_lock

            path = self.profile.lock_path
            if not path.is_file():
                self._lock_error = f"[lock] enforce = true but {path} does not exist"
            else:
                try:
                    self._lock = read_lock(path)
                except Exception as exc:
                    self._lock_error = (
                        f"[lock] enforce = true but {path} cannot be read: {exception_message(exc)}"
                    )
        if self._lock_error is not None:
            p.fail("refused", "RL003", self._lock_error)
            return None
        entry = self._lock.plugin(p.plugin_id)
        if entry is None:
            p.fail(
                "refused",
                "RL002",
                f"plugin {p.plugin_id!r} is not in {self.profile.lock_path} and [lock] enforce = true",
            )
        return entry

    def check_lock_provenance(self, p: PluginState, rec: ProvenanceRecord) -> None:
        from reyn_core.loading.provenance.drift import compare_provenance

        entry = self.locked(p)
        if entry is not None:
            drifts = compare_provenance(entry, rec)
            if drifts:
                p.fail(
                    "refused",
                    "RL001",
                    f"{rec.distribution} drifted from {self.profile.lock_path}: " + _describe_drifts(drifts),
                )

    def inspect(
        self, found: Mapping[str, Sequence[DiscoveredPlugin]], enabled: set[str]
    ) -> dict[tuple[str, str], ProvenanceRecord]:
        """Provenance of every installed-but-not-enabled plugin (metadata and files only)."""
        from reyn_core.loading.provenance.cache import DigestCache
        from reyn_core.loading.provenance.record import provenance_for

        cache = None if self.rehash else (self._digest_cache or DigestCache.default())
        records = {}
        for pid, candidates in found.items():
            for c in candidates:
                if pid in enabled or c.dist is None or not c.well_formed:
                    continue
                try:
                    records[(pid, c.distribution)] = provenance_for(
                        c.dist, plugin_id=pid, entry_point=c.entry_point, cache=cache
                    )
                except Exception:  # listing only: the plugin is not being loaded
                    continue
        return records

    # ------------------------------------------------------------------ step 4: import

    def verify_import_origin(self, p: PluginState) -> None:
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
        problem, spec = _import_origin(cand.entry_point, p.provenance)
        if problem is not None:
            p.fail(
                "refused",
                "RI009",
                f"plugin {p.plugin_id!r} ({cand.distribution} {cand.version}) is not imported: {problem}",
            )
            return
        self._verified_specs[p.plugin_id] = spec

    def import_plugin(self, p: PluginState) -> None:
        cand = p.candidate
        assert cand is not None
        try:
            _import_verified_top(self._verified_specs.pop(p.plugin_id, None))
            module = cand.ep.load()
        except KeyboardInterrupt:
            raise
        except BaseException as exc:  # SystemExit from a plugin must not end the host either
            p.fail(
                "failed",
                "RI001",
                f"importing {cand.entry_point!r} from {cand.distribution} failed: {describe_exception(exc)}",
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
                f"{cand.entry_point!r} declares REYN_API = {api!r}; this reyn-core "
                f"supports API {API_VERSION}",
            )
            return
        p.api_version = api
        pm = pluggy.PluginManager(PROJECT)
        pm.add_hookspecs(ReynHookSpecs)
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

    # ------------------------------------------------------------------ step 5: settings

    def validate_settings(self, p: PluginState) -> None:
        from pydantic import BaseModel, ValidationError

        assert p.pm is not None
        given = self.profile.plugin(p.plugin_id).settings
        try:
            model = p.pm.hook.reyn_settings_model()
        except (Exception, SystemExit) as exc:
            p.fail("failed", "RI005", f"hook reyn_settings_model raised {describe_exception(exc)}")
            return
        if model is None:
            if given:
                p.fail(
                    "failed",
                    "RC002",
                    f"[plugins.{p.plugin_id}.settings] is set in {self.profile.describe_source()}"
                    f" but plugin {p.plugin_id!r} takes no settings",
                )
            return
        if not (isinstance(model, type) and issubclass(model, BaseModel)):
            p.fail(
                "failed", "RI006", f"reyn_settings_model returned {model!r:.80}, not a pydantic model class"
            )
            return
        p.has_settings_model = True
        try:
            p.settings = model.model_validate(dict(given or {}))
        except ValidationError as exc:
            p.fail("failed", "RC001", _settings_message(p.plugin_id, exc, self.profile))
        except (Exception, SystemExit) as exc:
            p.fail(
                "failed",
                "RC001",
                f"plugins.{p.plugin_id}.settings: validation raised {describe_exception(exc)}",
            )

    # ------------------------------------------------------------------ step 6: register (per plugin)

    def collect_tools(self, p: PluginState) -> None:
        assert p.pm is not None and p.provenance is not None
        collected: list[object] = []
        open_ = [True]

        def register(obj: object) -> object:
            if not open_[0]:
                raise RuntimeError("register() was called after reyn_register_tools returned")
            collected.append(obj)
            return obj

        try:
            results = p.pm.hook.reyn_register_tools(register=register, settings=p.settings)
        except (Exception, SystemExit) as exc:
            p.fail("failed", "RI005", f"hook reyn_register_tools raised {describe_exception(exc)}")
            return
        finally:
            open_[0] = False
        if any(inspect.isawaitable(r) for r in results):
            for r in results:
                if inspect.iscoroutine(r):
                    r.close()
            p.fail(
                "failed",
                "RI004",
                "reyn_register_tools is async; it must be a plain function that calls "
                "register() before returning",
            )
            return
        cfg = self.profile.plugin(p.plugin_id)
        origin = p.provenance.to_origin(p.api_version)
        include = set(cfg.tools.include) if cfg.tools.include is not None else None
        exclude = set(cfg.tools.exclude)
        defs: list[ToolDefinition] = []
        for obj in collected:
            try:
                defs.append(as_definition(obj))
            except TypeError as exc:
                p.diagnostics.append(
                    Diagnostic.make(
                        "RT001", f"plugin registered something that is not a tool: {exc}", plugin=p.plugin_id
                    )
                )
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
        groups: dict[str, list[str]] = {}
        for d in kept:
            groups.setdefault(collision_key(d.name), []).append(d.name)
        twice = {key for key, names in groups.items() if len(names) > 1}
        for key in sorted(twice):
            names = groups[key]
            distinct = list(dict.fromkeys(names))
            what = (
                f"tool {names[0]!r} {len(names)} times"
                if len(distinct) == 1
                else "tools whose names differ only in case or separators (models and providers "
                f"confuse them): {', '.join(map(repr, distinct))}"
            )
            p.diagnostics.append(
                Diagnostic.make(
                    "RT004",
                    f"plugin {p.plugin_id!r} registers {what}; none is registered",
                    plugin=p.plugin_id,
                    tool=names[0],
                    hint="register each tool once, under one spelling",
                )
            )
        scratch = RegistryBuilder(schema_check=self.schema_cache)
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
        if self.profile.lock.enforce:
            self.check_lock_tools(p)

    def collect_diagnostics(self, p: PluginState) -> None:
        """Ask the plugin's ``reyn_diagnostics`` hook for findings; a misbehaving hook only warns."""
        assert p.pm is not None
        if not p.pm.hook.reyn_diagnostics.get_hookimpls():
            return
        try:
            results = p.pm.hook.reyn_diagnostics(settings=p.settings)
        except (Exception, SystemExit) as exc:
            p.diagnostics.append(
                Diagnostic.make(
                    "RI008", f"reyn_diagnostics raised {describe_exception(exc)}", plugin=p.plugin_id
                )
            )
            return
        for result in results:
            items = result if isinstance(result, list | tuple) else [result]
            for item in items:
                p.diagnostics.append(_plugin_diagnostic(p.plugin_id, item))

    def check_lock_tools(self, p: PluginState) -> None:
        from reyn_core.loading.provenance.drift import compare_tools

        entry = self.locked(p)
        if entry is None:
            return
        drifts = compare_tools(entry, [d for d, _ in p.tools])
        if drifts:
            p.fail(
                "refused",
                "RL001",
                f"the tools of plugin {p.plugin_id!r} drifted from "
                f"{self.profile.lock_path}: " + _describe_drifts(drifts),
            )
            p.tools.clear()


# --------------------------------------------------------------------------- the pipeline


def load(
    profile: Profile | None = None,
    *,
    host_tools: Iterable[ToolDefinition | Callable[..., Any]] = (),
    schema_cache: SchemaCheckCache | None = None,
    rehash: bool = False,
    inspect_discovered: bool = False,
) -> LoadResult:
    """Load the plugins ``profile`` enables (default: ``load_profile()``) into a frozen registry.

    ``host_tools`` are the host application's own tools; they take part in collision checks like
    any plugin's. ``schema_cache`` defaults to the persistent cache in the user cache dir.
    ``rehash=True`` re-hashes every plugin file instead of trusting the (path, size, mtime_ns)
    digest cache (``reyn plugins lock`` and ``audit`` do this). ``inspect_discovered=True`` also
    computes the origin and digest of installed-but-not-enabled plugins (still never importing
    them), so a digest can be reviewed and pinned before the plugin is enabled.
    Never raises for a bad plugin: see ``result.report`` for what happened and why.
    """
    profile = profile if profile is not None else load_profile()
    cache = schema_cache if schema_cache is not None else SchemaCheckCache.default()
    loader = _Loader(profile, cache, rehash=rehash)
    found = discover().by_id()
    enabled = profile.enabled
    plugins = [PluginState(pid) for pid in enabled]

    for pid in sorted(set(profile.plugins.configs) - set(enabled)):
        loader.global_diags.append(
            Diagnostic.make(
                "RC004",
                f"[plugins.{pid}] is configured in {profile.describe_source()} but {pid!r} is not in "
                "plugins.enable",
                plugin=pid,
            )
        )

    for p in plugins:
        steps = (
            lambda p: loader.select(found.get(p.plugin_id, ()), p, found),
            loader.check_provenance,
            loader.verify_import_origin,
            loader.import_plugin,
            loader.validate_settings,
            loader.collect_tools,
            loader.collect_diagnostics,
        )
        for step in steps:
            try:
                step(p)
            except (Exception, SystemExit) as exc:  # a bug in one plugin's path must not stop the others
                p.fail("failed", "RI005", f"loading stopped unexpectedly: {describe_exception(exc)}")
            if not p.ok:
                break

    registry, host_diags = register_all(profile, plugins, host_tools, cache, discovered_ids=found)
    cache.save()
    loader.global_diags.extend(_profile_name_checks(profile, registry))
    records = loader.inspect(found, set(enabled)) if inspect_discovered else {}
    return LoadResult(
        registry,
        _report(found, plugins, loader.global_diags + host_diags, records),
        profile,
        {p.plugin_id: p.pm for p in plugins if p.ok and p.pm is not None},
    )


def _report(
    found: Mapping[str, Sequence[DiscoveredPlugin]],
    plugins: list[PluginState],
    global_diags: list[Diagnostic],
    records: Mapping[tuple[str, str], ProvenanceRecord],
) -> LoadReport:
    infos: list[PluginLoadInfo] = []
    enabled = {p.plugin_id for p in plugins}
    for p in plugins:
        cand = p.candidate
        candidates = found.get(p.plugin_id, ())
        dist = cand.distribution if cand else (", ".join(c.distribution for c in candidates) or None)
        infos.append(
            PluginLoadInfo(
                plugin_id=p.plugin_id,
                distribution=dist,
                version=cand.version if cand else None,
                status=p.status,
                provenance=p.provenance,
                tools=tuple(sorted(p.registered)),
                entry_point=cand.entry_point if cand else None,
                api_version=p.api_version,
                diagnostics=tuple(p.diagnostics),
                enabled=True,
            )
        )
    for pid, candidates in found.items():
        if pid in enabled:
            continue
        for c in candidates:
            infos.append(
                PluginLoadInfo(
                    plugin_id=pid,
                    distribution=c.distribution,
                    version=c.version,
                    status="discovered",
                    entry_point=c.entry_point,
                    provenance=records.get((pid, c.distribution)),
                )
            )
    infos.sort(key=lambda i: (i.plugin_id, not i.enabled, (i.distribution or "").lower()))
    all_diags = [*global_diags, *(d for p in plugins for d in p.diagnostics)]
    return LoadReport(tuple(infos), tuple(all_diags))


# --------------------------------------------------------------------------- small helpers


def _import_origin(entry_point: str, rec: ProvenanceRecord) -> tuple[str | None, Any]:
    """``(problem, spec)``: why the entry point's module would not be imported from the files the
    digest covers (None when it would), and the verified spec of its top-level module (None when
    that module is already imported)."""
    import importlib.util
    import os
    import sys

    module = entry_point.partition(":")[0].strip()
    top = module.split(".")[0]
    expected = dict(rec.module_locations).get(top)
    if expected is None:
        return (
            f"the digest of {rec.distribution} does not cover import package {top!r} (its files "
            "were not found), so where it would be imported from cannot be verified",
            None,
        )
    want = os.path.realpath(expected)
    loaded = sys.modules.get(top)
    spec: Any = None
    if loaded is not None:
        origin = getattr(loaded, "__file__", None)
        locations = list(getattr(loaded, "__path__", None) or ())
    else:
        try:
            spec = importlib.util.find_spec(top)
        except (ImportError, ValueError) as exc:
            return f"looking up module {top!r} failed: {exception_message(exc)}", None
        if spec is None:
            return f"module {top!r} cannot be found on sys.path although {expected} exists", None
        origin = spec.origin if spec.has_location else None
        locations = list(spec.submodule_search_locations or ())
    found: list[str] = []
    if locations:  # a package: every folder its submodules may come from must be the digested one
        found += [loc for loc in locations if os.path.realpath(loc) != want]
        if origin and os.path.realpath(os.path.dirname(origin)) != want:
            found.append(origin)
    elif not origin or os.path.realpath(origin) != want:
        found.append(origin or f"<{type(loaded).__name__ if loaded is not None else 'no file'}>")
    if not found:
        return None, spec
    shown = ", ".join(f"{path}{_path_entry(path)}" for path in found)
    return (
        f"module {top!r} would be imported from {shown}, not from the files that were digested "
        f"({expected}); the shadowing module was not run",
        None,
    )


def _path_entry(path: str) -> str:
    """`` (sys.path entry ..., the working directory)`` for the entry a shadowing path sits in."""
    import os
    import sys

    parent = os.path.realpath(os.path.dirname(path.rstrip(os.sep)))
    cwd = os.path.realpath(os.getcwd())
    for entry in sys.path:
        if os.path.realpath(entry or os.curdir) == parent:
            what = " = the working directory" if parent == cwd else ""
            return f" (sys.path entry {entry!r}{what})"
    return ""


def _import_verified_top(spec: Any) -> None:
    """Import a top-level module from the spec that was verified, so the import cannot be resolved
    again to somewhere else; submodules then come from its verified ``__path__``."""
    import importlib.util
    import sys

    if spec is None or spec.name in sys.modules:
        return
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    try:
        if spec.loader is not None:
            spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(spec.name, None)
        raise


def _handler_module_exists(ref: str) -> bool:
    """Whether the module of a lazy ``"module:attr"`` handler can be found, without importing it
    (its parent package, the plugin's own, is already imported)."""
    import importlib.util

    try:
        return importlib.util.find_spec(ref.partition(":")[0]) is not None
    except (ImportError, ValueError):
        return False


def _profile_name_checks(profile: Profile, registry: ToolRegistry) -> list[Diagnostic]:
    """Names in the profile's surface lists that match no loaded tool, and an unwritable audit log.

    A typo in ``[surfaces.router] exclude`` silently excludes nothing, which widens what the model
    sees, so it is an error; a typo in ``default_allowed_ops`` narrows the phase, so it warns.
    """
    from reyn_core.gates import DEFAULT_ALLOWED_OPS, op_matches

    diags: list[Diagnostic] = []
    tools = registry.tools()
    for name in profile.surfaces.router.exclude:
        if name not in registry:
            diags.append(
                Diagnostic.make(
                    "RC007",
                    f"[surfaces.router] exclude names {name!r}, which no loaded tool is called, so it "
                    "excludes nothing",
                    severity="error",
                    tool=name,
                )
            )
    ops = list(profile.surfaces.phase.default_allowed_ops)
    if tuple(ops) != DEFAULT_ALLOWED_OPS:  # the built-in default may name packs that are not enabled
        for entry in ops:
            if not any(op_matches(entry, t) for t in tools):
                diags.append(
                    Diagnostic.make(
                        "RC007",
                        f"[surfaces.phase] default_allowed_ops entry {entry!r} matches no loaded tool "
                        "name, cluster or glob",
                        tool=entry,
                    )
                )
    if profile.audit.log:
        from reyn_core.dispatch import (
            JsonlAuditLog,  # only with an audit log: loading need not import the dispatcher
        )

        reason = JsonlAuditLog(profile.resolve_path(profile.audit.log)).unwritable_reason()
        if reason:
            diags.append(
                Diagnostic.make("RC006", f"{reason}; every tool call will be refused until it is fixed")
            )
    return diags


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


def _plugin_diagnostic(plugin_id: str, item: Any) -> Diagnostic:
    """One finding from a plugin's ``reyn_diagnostics`` hook, or RI008 saying what is wrong with it."""
    if hasattr(item, "as_dict") and callable(item.as_dict):
        item = item.as_dict()
    if not isinstance(item, Mapping):
        return Diagnostic.make(
            "RI008", f"reyn_diagnostics returned a {type(item).__name__}, not a mapping", plugin=plugin_id
        )
    code, severity, message = item.get("code"), item.get("severity"), item.get("message")
    if not isinstance(code, str) or not _PLUGIN_CODE.match(code) or code in CODES:
        return Diagnostic.make(
            "RI008",
            f"reyn_diagnostics returned code {code!r}: a plugin code is 'R', one or "
            "two capital letters and three digits, and not one of the core's",
            plugin=plugin_id,
        )
    if severity not in ("error", "warning", "info") or not isinstance(message, str) or not message:
        return Diagnostic.make(
            "RI008",
            f"reyn_diagnostics returned {code} with severity {severity!r} and message "
            f"{message!r:.60}; severity must be error, warning or info and message a text",
            plugin=plugin_id,
        )
    where = item.get("path")
    if where:
        line = item.get("line")
        message = f"{message} ({where}{f':{line}' if line else ''})"
    tool = item.get("tool")
    hint = item.get("hint")
    return Diagnostic(
        code=code,
        severity=severity,
        message=message,
        hint=hint if isinstance(hint, str) else "",
        plugin=plugin_id,
        tool=tool if isinstance(tool, str) and tool else None,
    )


def _norm(name: str) -> str:
    return name.lower().replace("-", "_").replace(".", "_")


def _settings_message(plugin_id: str, exc: Any, profile: Profile) -> str:
    errors = exc.errors(include_url=False)
    parts = []
    for err in errors[:3]:
        loc = ".".join(str(x) for x in err.get("loc", ()))
        key = f"plugins.{plugin_id}.settings" + (f".{loc}" if loc else "")
        if err.get("type") == "extra_forbidden":
            parts.append(f"{key}: unknown setting")
        else:
            parts.append(f"{key}: {err.get('msg', 'invalid')}")
    more = f" (and {len(errors) - 3} more)" if len(errors) > 3 else ""
    return f"{profile.describe_source()}: " + "; ".join(parts) + more


def _describe_drifts(drifts: Sequence[Any]) -> str:
    shown = [f"{d.kind}: {d.detail}" for d in drifts[:6]]
    more = f"; and {len(drifts) - 6} more" if len(drifts) > 6 else ""
    return "; ".join(shown) + more
