"""The profile's policy, applied once per load: ``ProfilePolicy.apply(profile)`` is the only reader.

What a profile says about calls rather than plugins — the operator policy (gate layer 2), spans
(``[observability]``), the audit log (``[audit] log``) and tool deferral (``[surfaces.router.defer]``,
``deferral_policy``: the loading stage's side of it, every name checked against what loaded; the
policy itself lives in ``reyn_core.deferral``) — is turned into objects here, once, by ``load()``;
the registry and the ``LoadResult`` carry them to every surface, so no surface reads those tables
again. The installation's argument-hash key is read once too (the audit log and spans use it), and
the audit log is opened once.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from reyn_core.deferral import DeferralPolicy, missing_search_tool
from reyn_core.errors import ProfileError
from reyn_core.loading.diagnostics import Diagnostic
from reyn_core.operator_policy import OperatorPolicy, PluginPolicy

if TYPE_CHECKING:
    from reyn_core.dispatch import JsonlAuditLog
    from reyn_core.loading.step1_profile.profile import Profile
    from reyn_core.registry import ToolRegistry


@dataclass(frozen=True)
class ProfilePolicy:
    """The profile's call policy as one load applies it.

    ``audit_log`` is the one ``JsonlAuditLog`` of this load (None without ``[audit] log``);
    ``audit_problem`` says why no call may run while it stands (the log cannot be written, or the
    argument-hash key cannot be read): the call hooks then refuse every call, fail closed."""

    operator: OperatorPolicy
    hash_key: bytes | None
    key_problem: str | None
    audit_log: JsonlAuditLog | None
    audit_problem: str | None
    tracing_problem: Diagnostic | None = None
    """``RC012``: the profile turns tracing on and no tracing add-on can make spans."""

    @classmethod
    def apply(
        cls, profile: Profile, *, tracing_addon: Callable[[], tuple[Any, Diagnostic | None]]
    ) -> ProfilePolicy:
        """Read the profile's call policy once, open its audit log once and turn spans on or off
        (through ``tracing_addon()``: the installed add-on, or why there is none)."""
        needs_key = bool(profile.audit.log) or bool(profile.observability.tracing)
        key, key_problem = _hash_key() if needs_key else (None, None)
        tracing_problem = _apply_observability(profile, key, tracing_addon)
        log = None
        audit_problem = None
        if profile.audit.log:
            from reyn_core.dispatch import JsonlAuditLog  # only with an audit log: loading need not import it

            log = JsonlAuditLog(profile.resolve_path(profile.audit.log), hash_key=key)
            audit_problem = log.unwritable_reason() or key_problem
        return cls(_operator_policy(profile), key, key_problem, log, audit_problem, tracing_problem)

    def diagnostics(self) -> list[Diagnostic]:
        """``RC006`` when the audit log (or its key) stops every call; ``RC012`` when the profile turns
        tracing on and no tracing add-on can make spans."""
        found = []
        if self.audit_problem is not None:
            found.append(
                Diagnostic.make(
                    "RC006", f"{self.audit_problem}; every tool call will be refused until it is fixed"
                )
            )
        if self.tracing_problem is not None:
            found.append(self.tracing_problem)
        return found


def router_deferral(profile: Profile, registry: ToolRegistry) -> DeferralPolicy | ProfileError:
    """``[surfaces.router.defer]`` over what loaded, or the ``ProfileError`` (RC003) naming the entry
    that names nothing loaded (raised by ``LoadResult.deferral`` to the surface that uses it)."""
    try:
        return deferral_policy(profile, registry)
    except ProfileError as exc:
        return exc


_KEY = "surfaces.router.defer"


def deferral_policy(profile: Profile, registry: ToolRegistry | None = None) -> DeferralPolicy:
    """The profile's ``[surfaces.router.defer]``. With ``registry``, every name is checked:
    ``ProfileError`` (RC003) names the key, the unknown entry and what exists; and a policy that
    defers anything needs its search tool loaded (``missing_search_tool``: fail closed, the router
    surface refuses to start rather than hide tools nothing can find)."""
    cfg = profile.surfaces.router.defer
    policy = DeferralPolicy(
        tools=frozenset(cfg.tools),
        plugins=frozenset(cfg.plugins),
        clusters=frozenset(cfg.clusters),
        prefer=tuple(cfg.prefer),
        plugin_order=profile.enabled,
        max_tools=cfg.max_tools,
        max_tokens=cfg.max_tokens,
        search_tool=cfg.search_tool,
    )
    if registry is not None:
        check_policy_names(profile, registry)
        problem = missing_search_tool(registry, policy.search_tool) if policy.active else None
        if problem is not None:
            raise ProfileError(
                f"{profile.describe_source()}: {_KEY}.search_tool: {problem}",
                key=f"{_KEY}.search_tool",
                file=profile.source,
            )
    return policy


def check_policy_names(profile: Profile, registry: ToolRegistry) -> None:
    """Refuse ``[surfaces.router.defer]`` entries that name nothing loaded: a typo would silently
    defer nothing (or prefer nothing), so it is an error naming the key and the near names."""
    cfg = profile.surfaces.router.defer
    tools = {t.name for t in registry.tools()}
    clusters = {t.cluster for t in registry.tools()}
    plugins = set(profile.enabled)
    kinds: dict[str, tuple[set[str], str]] = {
        "tools": (tools, "no loaded tool is called"),
        "plugins": (plugins, "no enabled plugin (plugins.enable) is called"),
        "clusters": (clusters, "no loaded tool is in a cluster called"),
        "prefer": (tools | plugins | clusters, "no loaded tool, enabled plugin or cluster is called"),
    }
    for key, (known, what) in kinds.items():
        for i, entry in enumerate(getattr(cfg, key)):
            if entry in known:
                continue
            import difflib  # only to word an error

            near = difflib.get_close_matches(entry, sorted(known), n=3)
            hint = f"; did you mean {', '.join(map(repr, near))}?" if near else ""
            raise ProfileError(
                f"{profile.describe_source()}: {_KEY}.{key}[{i}]: {what} {entry!r}{hint}",
                key=f"{_KEY}.{key}[{i}]",
                file=profile.source,
            )


def _operator_policy(profile: Profile) -> OperatorPolicy:
    # Only the surfaces: the profile's tools.include / tools.exclude were applied once, in
    # tool_collection (an excluded tool is not registered), so the gates have nothing left to narrow.
    policies = {}
    for pid in profile.enabled:
        cfg = profile.plugin(pid)
        policies[pid] = PluginPolicy(surfaces=frozenset(cfg.surfaces) if cfg.surfaces is not None else None)
    return OperatorPolicy(
        plugins_enabled=profile.features.plugins,
        plugins=policies,
        default_allowed_ops=tuple(profile.surfaces.phase.default_allowed_ops),
        router_exclude=frozenset(profile.surfaces.router.exclude),
    )


def _hash_key() -> tuple[bytes | None, str | None]:
    """The installation's argument-hash key, or why it cannot be used."""
    from reyn_core.loading.argument_key import ArgumentKeyError, installation_key

    try:
        return installation_key(), None
    except ArgumentKeyError as exc:
        return None, str(exc)


def _apply_observability(
    profile: Profile, key: bytes | None, tracing_addon: Callable[[], tuple[Any, Diagnostic | None]]
) -> Diagnostic | None:
    """``[observability]``: turn spans on or off as the profile says (unset: leave them alone),
    through the tracing add-on (``reyn.tracing`` entry point); returns why tracing that is on cannot
    be (no add-on installed, a broken one, or one whose ``configure_tracing`` raised or answered
    something else than a bool), else None. Spans observe: whatever the add-on does, the load and
    every call go on, without spans. (``False`` is the add-on's answer for spans it keeps off on
    purpose, as under ``OTEL_SDK_DISABLED=true``; a broken install raises, saying what is missing.)"""
    config = profile.observability
    if config.tracing is None:
        return None
    from reyn_core.errors import describe_exception
    from reyn_core.observation import observe_with

    # looked up only when tracing is on: an add-on is never imported to be told to stay off
    addon, refusal = tracing_addon() if config.tracing else (None, None)
    if addon is None:
        observe_with(None)  # off, as asked, or as it must be without an add-on
        return refusal if config.tracing else None
    try:
        on = addon.configure_tracing(
            config.tracing,
            capture_content=config.capture_content,
            content_max_chars=config.content_max_chars,
            hash_key=key if config.tracing else None,
        )
    except Exception as exc:
        problem = f"its configure_tracing raised {describe_exception(exc)}"
    else:
        if type(on) is bool:
            return None
        problem = f"its configure_tracing answered {type(on).__name__}, not whether spans are on"
    observe_with(None)  # never half set up: off, which is what a profile turning tracing off asked
    if not config.tracing:
        return None
    return Diagnostic.make(
        "RC012",
        f"[observability] tracing is on but the tracing add-on cannot be used ({problem}); "
        "until it is fixed no spans are made",
        hint="the installed add-on is broken or incomplete (the message says how): reinstall reyn-otel "
        "with its dependencies (opentelemetry-api, opentelemetry-sdk)",
    )


__all__ = ["ProfilePolicy", "check_policy_names", "deferral_policy", "router_deferral"]
