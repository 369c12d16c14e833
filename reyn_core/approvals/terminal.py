"""The terminal side of approvals: what a person reads of a request (``describe``) and the
``[y/N]`` prompt of ``reyn tools call`` and ``reyn chat`` (the ``user`` channel)."""

from __future__ import annotations

import getpass
import json
import sys
from typing import Any

from .gate import ApprovalGate, when
from .store import ApprovalRecord


def login_name() -> str:
    """The login name of this process's user (``unknown`` when the environment has none)."""
    try:
        return getpass.getuser()
    except (KeyError, OSError):  # no login name in this environment (a container's bare uid)
        return "unknown"


def describe(record: ApprovalRecord) -> str:
    """What an approver reads: the exact call, where its code comes from, what it can touch."""
    req = record.request
    plugin = req.get("plugin") or "the host"
    version = f" {req.get('distribution')} {req.get('version')}" if req.get("distribution") else ""
    lines = [
        f"request {record.id}: {record.status}",
        f"  tool       {req.get('tool')} ({req.get('purity')}) from plugin {plugin}{version}",
        f"  arguments  {json.dumps(req.get('arguments'), ensure_ascii=False, sort_keys=True)[:2000]}",
        f"  workspace  {req.get('workspace')}",
        f"  can touch  {(req.get('can_touch') or {}).get('summary', 'not recorded')}",
        f"  agent      {req.get('agent')}   entry {req.get('entry')}   surface {req.get('surface')}",
        f"  rule       {req.get('rule')}",
        f"  approvers  {', '.join(record.approvers)}",
        f"  expires    {when(record.expires_at)}",
        f"  key        {record.key}",
    ]
    if record.decided_by:
        lines.append(f"  decided    by {record.decided_by} at {when(record.decided_at)}")
    if record.reason:
        lines.append(f"  reason     {record.reason}")
    return "\n".join(lines)


def _discard_typeahead() -> None:
    """Drop what was typed (or pasted, or written to the terminal) before the question was shown, as
    sudo does: only an answer given after the prompt decides. A terminal that cannot be flushed is
    left as it is (the answer is still read from it)."""
    try:
        import termios
    except ImportError:  # no termios (Windows)
        return
    try:
        termios.tcflush(sys.stdin.fileno(), termios.TCIFLUSH)
    except (termios.error, OSError, ValueError):
        pass


def prompt_on_terminal(gate: ApprovalGate, approval: str) -> bool | None:
    """Ask the terminal's user to decide ``approval`` (the ``user`` channel): True approved, False
    denied, None when there is no terminal to ask (stdin and stderr must both be one). A request
    decided elsewhere meanwhile is not asked again: True, and the dispatcher says what it allows."""
    record = gate.get(approval)
    if record is None or record.status != "pending":
        return True
    if not (sys.stdin.isatty() and sys.stderr.isatty()):
        return None
    print(describe(record), file=sys.stderr)
    if record.session is not None:  # a session may keep allowing exactly this call
        print("  y: run it once; s: also allow exactly this call again in this session", file=sys.stderr)
    _discard_typeahead()
    sys.stderr.write(
        "approve this exact call? [y/s/N] " if record.session else "approve this exact call? [y/N] "
    )
    sys.stderr.flush()
    answer = sys.stdin.readline().strip().lower()
    for_session = record.session is not None and answer in ("s", "session")
    approve = for_session or answer in ("y", "yes")
    gate.decide(
        approval,
        approve=approve,
        by=f"user:{login_name()} (terminal)",
        channel="user",
        reason=None if approve else "declined at the terminal",
        for_session=for_session,
    )
    return approve


async def decide_pending_on_terminal(registry: Any, pending: Any) -> bool:
    """``reyn chat``: put each call of a run that waits for approval to the terminal's user. False
    when one cannot be asked (no terminal): it stays pending for ``reyn approvals approve``."""
    import asyncio

    for call in pending:
        if getattr(call, "waits", None) != "approval":
            continue
        decided = await asyncio.to_thread(prompt_on_terminal, registry.approvals, call.approval)
        if decided is None:
            print(
                f"  (call {call.name!r} waits for approval {call.approval}: decide it with "
                f"`reyn approvals approve {call.approval}`)",
                flush=True,
            )
            return False
    return True


def approve_on_terminal(registry: Any, envelope: dict[str, Any], call: Any) -> dict[str, Any]:
    """``reyn tools call``'s call waiting for approval: asked on the terminal (then run, or refused as
    denied), or, when not interactive, left waiting with the command that decides it."""
    approval = envelope["error"]["approval"]
    decided = prompt_on_terminal(registry.approvals, approval)
    if decided is None:
        print(
            f"reyn: this call needs approval (request {approval}) and there is no terminal to ask; "
            f"an operator decides with `reyn approvals approve {approval}`, then run the same call "
            f"with --approval {approval}",
            file=sys.stderr,
        )
        return envelope
    return call(approval)  # approved: runs once; denied: refused with the reason
