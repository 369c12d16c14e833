"""``ApprovalGate``: the dispatcher's approval check, between argument binding and the policy hooks.

``admit`` runs for a call the policy selects, after its arguments were validated and bound and
before any ``before`` hook or the handler. It either lets the call run — by consuming exactly one
approval whose key is this call's (``CallKey``) — or raises: ``ToolApprovalRequired`` (a pending
request, durable in the store, waits for a decision) or ``ApprovalRefused`` (the approval named
does not cover this call: other arguments, used, expired, denied, the plugin or lock changed; a
drifted approval is voided). Nothing of the call has run when either is raised. ``decide`` is how
every surface records a person's decision. Each step writes one audit line (``requested``,
``approved``, ``denied``, ``expired``, ``voided``, ``executed``) through the audit log of the load.

A decision may be scoped to the session that asked (``for_session``): the same exact call (same
key) then runs again in that session, never in another, until the request expires or the host
ends the session (``end_session``). The session is kept only as a keyed digest.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from typing import Any

from ..context import ToolContext
from ..errors import ApprovalDecisionError, ApprovalRefused, ToolApprovalRequired, ToolError
from ..tool import ToolDefinition
from .key import CallArguments, CallKey, Hasher, request_view
from .policy import ApprovalPolicy, ApprovalRule
from .store import ApprovalRecord, ApprovalStore, Status

AuditSink = Callable[[Mapping[str, Any]], None]
"""Writes one approval line to the audit log (blocking; raises ``OSError`` when it cannot)."""


@dataclass(frozen=True, slots=True)
class Admission:
    """A call let through by an approval: which request, and the key it was consumed under."""

    approval: str
    key: str
    components: Mapping[str, Any]


def when(ts: float | None) -> str:
    """A timestamp as ISO 8601 UTC, ``-`` for none."""
    return "-" if ts is None else datetime.fromtimestamp(ts, timezone.utc).isoformat(timespec="seconds")


def unavailable(tool: str, exc: BaseException) -> str:
    """The model-visible words of a call refused because the store, the key or the audit log cannot
    be used: fixed, with the codes ``reyn doctor`` explains; ``exc``'s text (a host path, a store's
    own words) goes to the operator's log only (``log_failure``), the message cites its reference."""
    from ..remote_log import log_failure

    what = f"the approval check of a call to {tool!r} could not use the approval store, key or audit log"
    return (
        f"call to {tool!r} may need approval, and the approval store (RC011), its argument-hash key or "
        f"the audit log (RC006) cannot be used; nothing ran; {log_failure('approvals', what, exc)}"
    )


def _describe_rule(index: int, rule: ApprovalRule) -> str:
    parts = [
        f"{name} {', '.join(sorted(values))}"
        for name, values in (
            ("tools", rule.tools),
            ("plugins", rule.plugins),
            ("clusters", rule.clusters),
            ("purity", rule.purity),
        )
        if values is not None
    ]
    if rule.unless_within is not None:
        parts.append(f"paths outside {', '.join(rule.unless_within.roots)}")
    return f"[[approvals.rules]] #{index + 1} ({'; '.join(parts) or 'every call'})"


class ApprovalGate:
    """The approval check of one loaded registry: its policy, store, hasher, lock and audit log."""

    def __init__(
        self,
        policy: ApprovalPolicy,
        store: ApprovalStore,
        *,
        hasher: Hasher,
        lock: str | None = None,
        audit: AuditSink | None = None,
        reach: Mapping[str | None, Mapping[str, Any]] | None = None,
    ) -> None:
        self.policy = policy
        self.store = store
        self.hasher = hasher
        self.lock = lock
        self._audit = audit
        self._reach = dict(reach or {})

    def reach(self, tool: ToolDefinition) -> Mapping[str, Any]:
        """What a call of ``tool`` can touch, as the approver is shown it: the sandbox its plugin
        runs in and the grants the profile gives it, or that it runs unconfined in the host
        process (``reach`` by plugin id, from the load; None is the host's own tools)."""
        plugin = tool.origin.plugin_id if tool.origin is not None else None
        found = self._reach.get(plugin)
        if found is not None:
            return dict(found)
        return {
            "sandbox": None,
            "summary": "no sandbox: it runs in the host process and can reach whatever that process "
            "can (files, network, programs)",
        }

    def session_digest(self, session: str | None) -> str | None:
        """The keyed digest a session is kept as (None for no session)."""
        return None if session is None else self.hasher({"session": session})

    def selects(self, tool: ToolDefinition) -> bool:
        """Whether any rule names ``tool`` (other tools' calls skip the check entirely)."""
        return self.policy.may_apply(tool)

    # ------------------------------------------------------------------ the check

    async def admit(
        self,
        tool: ToolDefinition,
        arguments: CallArguments,
        ctx: ToolContext,
        surface: str,
        approval: str | None,
    ) -> Admission | None:
        """None when no rule applies to this call; an ``Admission`` when an approval was consumed for
        it; else raises ``ToolApprovalRequired`` / ``ApprovalRefused`` (see the module docstring).
        ``arguments``: the bound form and the validated arguments (``handler_arguments``).
        Store and file-system work runs in a worker thread."""
        import asyncio

        return await asyncio.to_thread(self._admit, tool, arguments, ctx, surface, approval)

    def _admit(
        self, tool: ToolDefinition, call: CallArguments, ctx: ToolContext, surface: str, approval: str | None
    ) -> Admission | None:
        args = call.bound if isinstance(call.bound, Mapping) else {}
        try:
            rule = self.policy.rule_for(tool, args, ctx.workspace)
            if rule is None:
                return None
            words = _describe_rule(self.policy.rules.index(rule), rule)
            # the key is derived from what the approver is shown: every field of it is bound
            view = request_view(tool, call, ctx, surface, rule=words, reach=self.reach(tool))
            key = CallKey.of(tool, call, view, lock=self.lock, hasher=self.hasher)
            return self._decide_call(tool, ctx, surface, approval, rule, key, view)
        except ToolError:
            raise
        except Exception as exc:  # fail closed: no store, key or audit line, no call
            raise ApprovalRefused(unavailable(tool.name, exc), tool=tool.name, reason="unavailable") from None

    def _decide_call(
        self,
        tool: ToolDefinition,
        ctx: ToolContext,
        surface: str,
        approval: str | None,
        rule: ApprovalRule,
        key: CallKey,
        view: Mapping[str, Any],
    ) -> Admission:
        now = time.time()
        self._expire(now)
        digest = key.digest(self.hasher)
        session = self.session_digest(ctx.session)
        if approval is not None:
            return self._with_approval(tool, approval, key, digest, now, session)
        candidate = ApprovalRecord(
            id="apr-" + secrets.token_hex(8),
            key=digest,
            components=key.components(),
            status="pending",
            created_at=now,
            expires_at=now + self.policy.ttl_s,
            approvers=rule.approvers,
            request=view,
            session=session,
        )
        record = self.store.open_request(candidate)
        if record.status == "approved":
            return self._consume(tool, record, digest, now, session)
        if record is candidate:
            self._line("requested", record, surface=surface)
        raise ToolApprovalRequired(
            f"call to {tool.name!r} needs approval under {record.request.get('rule')}; request "
            f"{record.id} waits for a decision by {' or '.join(record.approvers)} (it expires "
            f"{when(record.expires_at)}); nothing ran",
            tool=tool.name,
            approval=record.id,
            approvers=record.approvers,
        )

    def _with_approval(
        self, tool: ToolDefinition, approval: str, key: CallKey, digest: str, now: float, session: str | None
    ) -> Admission:
        record = self.store.get(approval)
        if record is None:
            raise ApprovalRefused(
                f"there is no approval {approval[:40]!r}; nothing ran", tool=tool.name, reason="unknown"
            )
        if not record.covers(session):
            raise ApprovalRefused(
                f"approval {record.id} for {tool.name!r} holds only for the session that asked for it, "
                "not for this one; nothing ran",
                tool=tool.name,
                reason="session_differs",
                approval=record.id,
            )
        drift = key.drift(record.components)
        if drift is not None:
            # a drift that does not void (the session) leaves the approval to the caller it was given to
            if drift.voids and self.store.close(record.id, "voided", drift.code, now):
                self._line("voided", record, reason=drift.code)
            raise ApprovalRefused(
                f"approval {record.id} does not cover this call: {drift.words}; "
                + ("it is void and nothing ran" if drift.voids else "nothing ran"),
                tool=tool.name,
                reason=drift.code,
                approval=record.id,
            )
        if record.status == "pending":
            raise ToolApprovalRequired(
                f"request {record.id} for {tool.name!r} still waits for a decision; nothing ran",
                tool=tool.name,
                approval=record.id,
                approvers=record.approvers,
            )
        if record.status != "approved":
            raise self._closed(tool, record)
        return self._consume(tool, record, digest, now, session)

    def _consume(
        self, tool: ToolDefinition, record: ApprovalRecord, digest: str, now: float, session: str | None
    ) -> Admission:
        if not self.store.consume(record.id, digest, now, session):
            latest = self.store.get(record.id) or record
            raise self._closed(tool, latest if latest.status != "approved" else record, raced=True)
        return Admission(record.id, digest, record.components)

    def _closed(
        self, tool: ToolDefinition, record: ApprovalRecord, *, raced: bool = False
    ) -> ApprovalRefused:
        status: Status = record.status
        words = {
            "denied": f"was denied by {record.decided_by}" + (f": {record.reason}" if record.reason else ""),
            "expired": f"expired at {when(record.expires_at)}",
            "consumed": "was already used" + (" (another caller took it)" if raced else ""),
            "voided": f"was voided ({record.reason})",
        }.get(status, "was already used (another caller took it)")
        reason = {"denied": "denied", "expired": "expired", "voided": "voided"}.get(status, "used")
        return ApprovalRefused(
            f"approval {record.id} for {tool.name!r} {words}; nothing ran",
            tool=tool.name,
            reason=reason,
            approval=record.id,
        )

    def _expire(self, now: float) -> None:
        for record in self.store.expire(now):
            self._line("expired", record)

    # ------------------------------------------------------------------ after the call

    def executed(self, admission: Admission, status: str) -> None:
        """The ``executed`` line of a call an approval let through, with how it ended."""
        line = {"approval": admission.approval, "key": admission.key, "status": status}
        self._write("executed", line, admission.components)

    # ------------------------------------------------------------------ deciding

    def decide(
        self,
        approval: str,
        *,
        approve: bool,
        by: str,
        channel: str,
        reason: str | None = None,
        standing: bool = False,
        for_session: bool = False,
    ) -> ApprovalRecord:
        """Record a person's decision on a pending request. ``channel`` is ``user`` (the surface's
        user) or ``operator`` (``reyn approvals``) and must be among the request's approvers;
        ``standing`` lets the approved exact call run any number of times until it expires;
        ``for_session`` lets it run any number of times in the session that asked, until the
        request expires or the session ends (a request from no session cannot be scoped so)."""
        now = time.time()
        self._expire(now)
        record = self.store.get(approval)
        if record is None:
            raise ApprovalDecisionError(f"there is no approval request {approval[:40]!r}")
        if channel not in record.approvers:
            raise ApprovalDecisionError(
                f"request {record.id} may be decided by {' or '.join(record.approvers)}, not by the {channel}"
            )
        scoped = approve and for_session
        if scoped and record.session is None:
            raise ApprovalDecisionError(
                f"request {record.id} came from no session, so it cannot be approved for its session; "
                "approve it once (or standing, until it expires)"
            )
        standing = approve and (standing or for_session)
        decided = self.store.decide(
            replace(
                record,
                status="approved" if approve else "denied",
                decided_by=by,
                decided_at=now,
                reason=reason,
                uses=-1 if standing else 1,
                scoped=scoped,
            )
        )
        if decided is None:
            latest = self.store.get(record.id) or record
            raise ApprovalDecisionError(
                f"request {record.id} is {latest.status}, not pending: it cannot be decided"
            )
        extra = {"scope": decided.scope, "session": decided.session} if approve else {}
        self._line("approved" if approve else "denied", decided, by=by, reason=reason, **extra)
        return decided

    def end_session(self, session: str) -> Sequence[ApprovalRecord]:
        """The session ``session`` ended: the approvals scoped to it end too (``expired``, reason
        ``session_ended``, one audit line each). Hosts call this when a client disconnects."""
        records = self.store.end_session(self.session_digest(session) or "", time.time())
        for record in records:
            self._line("expired", record, reason="session_ended", session=record.session)
        return records

    def get(self, approval: str) -> ApprovalRecord | None:
        """One request (expired ones marked so first)."""
        self._expire(time.time())
        return self.store.get(approval)

    def list(self, statuses: Sequence[Status] | None = None) -> Sequence[ApprovalRecord]:
        """Requests, newest first (expired ones marked so first)."""
        self._expire(time.time())
        return self.store.list(statuses)

    # ------------------------------------------------------------------ audit

    def _line(self, event: str, record: ApprovalRecord, **extra: Any) -> None:
        self._write(event, {"approval": record.id, "key": record.key, **extra}, record.components)

    def _write(self, event: str, fields: Mapping[str, Any], components: Mapping[str, Any]) -> None:
        if self._audit is None:
            return
        self._audit(
            {
                "event": f"approval.{event}",
                **fields,
                "tool": components.get("tool"),
                "agent": components.get("agent"),
                "entry": components.get("entry"),
                "definition_sha256": components.get("definition"),
                "digest": components.get("plugin"),
                "lock": components.get("lock"),
                "bound_args_sha256": components.get("arguments"),
            }
        )
