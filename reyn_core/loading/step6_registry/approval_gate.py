"""The profile's ``[approvals]`` as the registry's ``ApprovalGate`` (load step 6, with the hooks).

The gate gets the rules, the SQLite store named by the profile, the installation's argument-hash
key (without it every call that needs approval is refused: fail closed), the digest of the lock the
load was checked against (when ``[lock] enforce`` is on; a changed lock voids earlier approvals),
and the load's one audit log.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from reyn_core.approvals import ApprovalGate, ApprovalRule
    from reyn_core.dispatch import JsonlAuditLog
    from reyn_core.loading.diagnostics import Diagnostic
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


def approval_gate(profile: Profile, audit: JsonlAuditLog | None) -> ApprovalGate | None:
    """The gate of ``profile`` (None when it has no approval rules)."""
    config = profile.approvals
    if not config.rules:
        return None
    from reyn_core.approvals import ApprovalGate, ApprovalPolicy, SqliteApprovalStore
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

    store_path = profile.resolve_path(config.store)
    policy = ApprovalPolicy(
        rules=tuple(_rule(c) for c in config.rules), ttl_s=config.ttl_s, store=str(store_path)
    )
    return ApprovalGate(
        policy,
        SqliteApprovalStore(store_path),
        hasher=hasher,
        lock=lock_digest(profile),
        audit=audit.event if audit is not None else None,
    )


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
