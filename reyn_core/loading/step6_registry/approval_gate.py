"""The profile's ``[approvals]`` as the registry's ``ApprovalGate`` (load step 6, with the hooks).

The gate gets the rules, the store the profile selects, the installation's argument-hash key
(without it every call that needs approval is refused: fail closed), the digest of the lock the
load was checked against (when ``[lock] enforce`` is on; a changed lock voids earlier approvals),
what each plugin's calls can touch (its sandbox and grants), and the load's one audit log.

The store: the core ships none. ``backend`` (default ``sqlite``, the reyn-approvals-sqlite
distribution) is looked up as an entry point of the group ``reyn.approval_stores``, verified and
locked like every extension. A backend that is not installed, is installed twice, or refuses its
settings is ``RC011`` and the gate gets a store that refuses every operation, so every call needing
approval is refused.
"""

from __future__ import annotations

import hashlib
import inspect
from collections.abc import Mapping
from os import PathLike
from pathlib import Path
from typing import TYPE_CHECKING, Any

STORE_GROUP = "reyn.approval_stores"
"""The entry-point group of approval stores: ``name = "module:factory"`` (an ``ApprovalStoreFactory``)."""
STORE_DISTRIBUTIONS = {"sqlite": "reyn-approvals-sqlite", "postgres": "reyn-approvals-postgres"}
"""The distribution each documented approval store must come from; a store of another name may come
from any one distribution that is not a Reyn plugin (``extension_origin``)."""

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from reyn_core.approvals import ApprovalGate, ApprovalRule, ApprovalStore
    from reyn_core.dispatch import JsonlAuditLog
    from reyn_core.loading.diagnostics import Diagnostic
    from reyn_core.loading.extension_origin import ExtensionSession
    from reyn_core.loading.plugin_state import PluginState
    from reyn_core.loading.step1_profile.profile import Profile
    from reyn_core.loading.step1_profile.profile_sections import ApprovalRuleConfig
    from reyn_core.registry import ToolRegistry


def lock_digest(profile: Profile) -> str | None:
    """``sha256:`` of the enforced lock file's bytes (None when the lock is not enforced or absent)."""
    if not profile.lock.enforce:
        return None
    try:
        data = profile.lock_path.read_bytes()
    except OSError:
        return None
    return "sha256:" + hashlib.sha256(data).hexdigest()


def _rule(config: ApprovalRuleConfig) -> ApprovalRule:
    from reyn_core.approvals import ApprovalRule, PathCondition

    def names(values: list[str] | list[Any] | None) -> frozenset[str] | None:
        return None if values is None else frozenset(values)

    within = config.unless_within
    return ApprovalRule(
        tools=names(config.tools),
        plugins=names(config.plugins),
        clusters=names(config.clusters),
        purity=names(config.purity),
        unless_within=PathCondition(tuple(within.arguments), tuple(within.roots)) if within else None,
        approvers=tuple(config.approvers),
    )


class UnusableStore:
    """The store of a backend that could not be set up: every operation raises why, so the gate
    refuses every call that needs approval (fail closed) and ``reyn approvals`` says why."""

    def __init__(self, backend: str, problem: str) -> None:
        self.location = f"{backend} (unusable)"
        self.problem = problem

    def _fail(self, *_: Any, **__: Any) -> Any:
        raise OSError(self.problem)

    open_request = get = decide = consume = close = expire = list = end_session = _fail


def open_store(
    backend: str, settings: Mapping[str, Any], base: Path, extensions: ExtensionSession
) -> ApprovalStore:
    """The store of the ``backend`` entry point, looked up through the load's ``extensions``
    (``OSError`` / ``ValueError`` saying why not; ``ExtensionError`` when it is installed but refused:
    its files, or the enforced lock)."""
    from reyn_core.approvals import ApprovalStore
    from reyn_core.loading.extension_origin import ExtensionError

    try:  # the documented store's own distribution, or (another store) one that is not a plugin
        factory = extensions.load(STORE_GROUP, backend, distribution=STORE_DISTRIBUTIONS.get(backend))
    except ExtensionError as exc:
        if exc.missing:
            raise OSError(
                f"no installed distribution provides the approval store {backend!r} ({exc}); "
                + _how_to_install(backend)
            ) from None
        raise  # refused: its hint follows why (RC011)
    store = factory(settings, base)
    if not isinstance(store, ApprovalStore):
        raise OSError(f"approval store {backend!r} returned a {type(store).__name__}, not an ApprovalStore")
    try:  # the protocol's methods are checked by name only; decide's shape changed (CHANGELOG)
        inspect.signature(store.decide).bind(None)
    except (TypeError, ValueError):
        raise OSError(
            f"approval store {backend!r} has decide() of another shape: the store protocol's "
            "decide(decided) takes the decided record (see CHANGELOG.md); update the store"
        ) from None
    return store


def _how_to_install(backend: str) -> str:
    """How to get the store ``backend``: its documented distribution from the wheelhouse, or any."""
    distribution = STORE_DISTRIBUTIONS.get(backend)
    if distribution is None:
        return "install the distribution that provides it, or set another [approvals] backend"
    return f"install it: pip install --find-links DIST {distribution} (DIST: the wheelhouse of `make dist`)"


DEFAULT_STORE_FILES = {"sqlite": ("reyn-approvals.sqlite",)}
"""Where each documented store keeps its files when ``[approvals.settings]`` names none (relative to
the profile's folder): protected even when the store cannot say so itself (``store_files``)."""
SIBLINGS = ("", "-wal", "-shm", "-journal")
"""A store file and what SQLite (and others) read beside it: a planted ``-wal`` rewrites the file."""


def store_files(profile: Profile, extensions: ExtensionSession) -> dict[str, str]:
    """The host's files the profile's approval store trusts as decisions, which no confined process
    may be granted to write: absolute path → what it is, each with its ``-wal``, ``-shm`` and
    ``-journal`` siblings. The store's factory says (its optional ``host_files``: ``Path`` s or
    strings, one or many, relative ones and ``~`` resolved as the profile resolves paths; a factory
    without it keeps no local file, as the postgres store). When it
    cannot say — it raises (anything), is refused, is not installed or not imported, or refuses its
    settings — more is protected, never less: every string in ``[approvals.settings]`` (nested
    too) and the backend's default files (``DEFAULT_STORE_FILES``). Empty when the profile holds no
    call for approval."""
    config = profile.approvals
    if not config.rules:
        return {}
    answer: list[Path] | None
    try:
        factory = extensions.load(
            STORE_GROUP, config.backend, distribution=STORE_DISTRIBUTIONS.get(config.backend)
        )
        files = getattr(factory, "host_files", None)
        said = files(config.settings, profile.base_dir) if files is not None else ()  # none: no local file
        if isinstance(said, (str, PathLike)):
            said = [said]
        answer = [profile.resolve_path(p) for p in said]
    except Exception:  # the store cannot say: every path its settings may name, and its defaults
        answer = None
    if answer is None:
        answer = [profile.resolve_path(p) for p in _strings(config.settings)]
        answer += [profile.resolve_path(p) for p in DEFAULT_STORE_FILES.get(config.backend, ())]
    named = {str(path) for path in answer}
    found: dict[str, str] = {}
    for path in answer:  # a sibling the store named itself gets no siblings of its own
        sibling = any(str(path).endswith(s) and str(path)[: -len(s)] in named for s in SIBLINGS[1:])
        for suffix in ("",) if sibling else SIBLINGS:
            found.setdefault(f"{path}{suffix}", f"the host's approval store ({path.name}{suffix})")
    return found


def _strings(value: object) -> list[str]:
    """Every non-empty string in ``value`` (mappings and lists walked)."""
    if isinstance(value, str):
        return [value] if value and "\x00" not in value else []
    if isinstance(value, Mapping):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, (list, tuple)):
        return [s for v in value for s in _strings(v)]
    return []


def plugin_reach(plugins: Iterable[PluginState]) -> dict[str | None, dict[str, Any]]:
    """What each isolated plugin's calls can touch, as its isolation backend describes it (its
    worker's grants: names and paths; the values of granted environment variables are never shown)."""
    return {p.plugin_id: dict(p.isolation.reach) for p in plugins if p.isolation is not None}


def approval_gate(
    profile: Profile,
    audit: JsonlAuditLog | None,
    extensions: ExtensionSession,
    plugins: Sequence[PluginState] = (),
) -> tuple[ApprovalGate | None, list[Diagnostic]]:
    """The gate of ``profile`` (None when it has no approval rules), and ``RC011`` when its store
    cannot be set up (its extension looked up through the load's ``extensions``)."""
    config = profile.approvals
    if not config.rules:
        return None, []
    from reyn_core.approvals import ApprovalGate, ApprovalPolicy
    from reyn_core.dispatch import argument_hash
    from reyn_core.loading.argument_key import ArgumentKeyError, installation_key

    try:
        key: bytes | None = installation_key()
        problem = ""
    except ArgumentKeyError as exc:
        key, problem = None, str(exc)

    def hasher(value: Any) -> str:
        if key is None:
            raise OSError(f"no installation key to hash calls with ({problem})")
        return argument_hash(value, key=key)

    from reyn_core.loading.diagnostics import Diagnostic
    from reyn_core.loading.extension_origin import refusal_hint

    diags: list[Diagnostic] = []
    store: ApprovalStore
    try:
        store = open_store(config.backend, config.settings, profile.base_dir, extensions)
    except Exception as exc:  # fail closed: a store that refuses everything, and an error
        problem = f"[approvals] backend {config.backend!r} cannot be used: {exc}"
        store = UnusableStore(config.backend, problem)
        hint, where = refusal_hint(exc, "RC011"), getattr(exc, "traceback", None)  # where: the operator's
        diags.append(Diagnostic.make("RC011", problem, severity="error", hint=hint, traceback=where))
    policy = ApprovalPolicy(
        rules=tuple(_rule(c) for c in config.rules), ttl_s=config.ttl_s, store=store.location
    )
    gate = ApprovalGate(
        policy,
        store,
        hasher=hasher,
        lock=lock_digest(profile),
        audit=audit.event if audit is not None else None,
        reach=plugin_reach(plugins),
    )
    return gate, diags


def approval_name_checks(profile: Profile, registry: ToolRegistry) -> list[Diagnostic]:
    """RC009 for each name in ``[[approvals.rules]]`` that matches nothing loaded: a typo there lets
    the calls it meant to hold run without approval, so it is an error."""
    from reyn_core.loading.diagnostics import Diagnostic

    tools = registry.tools()
    known = {
        "tools": {t.name for t in tools},
        "plugins": set(profile.enabled),
        "clusters": {t.cluster for t in tools},
    }
    what = {
        "tools": "no loaded tool is called",
        "plugins": "is not an enabled plugin",
        "clusters": "no loaded tool has",
    }
    diags = []
    for index, rule in enumerate(profile.approvals.rules):
        for field in ("tools", "plugins", "clusters"):
            for name in getattr(rule, field) or ():
                if name not in known[field]:
                    diags.append(
                        Diagnostic.make(
                            "RC009",
                            f"[[approvals.rules]] #{index + 1} {field} names {name!r}, which "
                            f"{what[field]}, so it holds no call for approval",
                            severity="error",
                            tool=name if field == "tools" else None,
                        )
                    )
    return diags
