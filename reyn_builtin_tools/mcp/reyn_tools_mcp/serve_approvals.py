"""Approvals on ``reyn mcp serve``: a call the profile's ``[approvals]`` policy holds is put to the
MCP client's user through elicitation when the client declares it, and refused otherwise with a
message naming the policy and the operator's command.

The dispatcher decides everything (``reyn_core.approvals``): it refused the first call with
``approval_required`` before anything ran; the user's answer is recorded with the gate's ``decide``
(channel ``user``), and the same call is dispatched again with the request's id, so it runs only by
consuming that approval of exactly that call. A client that accepts elicitation automatically
approves whatever it is asked: that is a limit of the client (docs/approvals.md), not something the
server can see.
"""

from __future__ import annotations

import asyncio
import functools
import json
from collections.abc import Mapping
from typing import Any

from reyn_core.host import ApprovalDecisionError, ToolRegistry

APPROVE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "approve": {"type": "boolean", "description": "run exactly this call, once"},
        "for_session": {
            "type": "boolean",
            "description": "also allow exactly this call again for the rest of this session",
            "default": False,
        },
        "reason": {"type": "string", "description": "why not (the model reads it)"},
    },
    "required": ["approve"],
}


def approve_schema(record: Any) -> dict[str, Any]:
    """The question's schema: ``for_session`` is offered only when the call came from a session
    (stdio, or streamable HTTP with a session id; not stateless HTTP)."""
    if record.session is not None:
        return APPROVE_SCHEMA
    properties = {k: v for k, v in APPROVE_SCHEMA["properties"].items() if k != "for_session"}
    return {**APPROVE_SCHEMA, "properties": properties}


def approval_message(record: Any) -> str:
    """What the client's user is shown: the exact call, its code's origin, what it can touch."""
    req = record.request
    plugin = req.get("plugin") or "the host"
    version = f" ({req.get('distribution')} {req.get('version')})" if req.get("distribution") else ""
    arguments = json.dumps(req.get("arguments"), ensure_ascii=False, indent=2, sort_keys=True)[:4000]
    return (
        f"Approve this call? The model wants to run {req.get('tool')!r} ({req.get('purity')}) from "
        f"plugin {plugin}{version} in {req.get('workspace')}, with exactly these arguments:\n{arguments}\n"
        f"It can touch: {(req.get('can_touch') or {}).get('summary', 'not recorded')}.\n"
        f"Policy: {req.get('rule')}. Request {record.id}."
    )


def refusal_without_elicitation(
    envelope: Mapping[str, Any], *, operator_only: bool = False
) -> dict[str, Any]:
    """The envelope for a call this client's user cannot approve (no elicitation, or a rule that
    only operators may decide): the policy, the request, and the operator's way."""
    error = dict(envelope.get("error") or {})
    approval = error.get("approval")
    why = (
        "only an operator may approve it"
        if operator_only
        else "this MCP client does not declare elicitation, so its user cannot be asked"
    )
    error["message"] = (
        f"{error.get('message')}. The call is refused: {why}; an operator may approve it with "
        f"`reyn approvals approve {approval}`, after which the same call runs once."
    )
    return {"status": "error", "error": error}


async def record_answer(registry: ToolRegistry, approval: str, answer: Any, who: str) -> str | None:
    """Record the user's elicitation answer on ``approval``; None when recorded, else why not."""
    gate: Any = registry.approvals
    content = getattr(answer, "content", None) or {}
    approve = getattr(answer, "action", None) == "accept" and content.get("approve") is True
    reason = None if approve else str(content.get("reason") or f"not approved by {who}")[:500]
    for_session = approve and content.get("for_session") is True
    try:
        await asyncio.to_thread(
            functools.partial(
                gate.decide,
                approval,
                approve=approve,
                by=f"user:{who}",
                channel="user",
                reason=reason,
                for_session=for_session,
            )
        )
    except ApprovalDecisionError as exc:
        return str(exc)
    return None


async def user_may_decide(registry: ToolRegistry, approval: str) -> Any:
    """The pending request when the ``user`` channel may decide it (else None)."""
    gate: Any = registry.approvals
    record = await asyncio.to_thread(gate.get, approval) if gate is not None else None
    if record is None or record.status != "pending" or "user" not in record.approvers:
        return None
    return record
