"""``reyn approvals list / show / approve / deny``: the operator's view of pending calls, and the
terminal prompt ``reyn tools call`` uses. Every decision goes through the registry's
``ApprovalGate`` (the audit log gets its line); an operator decides on the ``operator`` channel."""

from __future__ import annotations

import argparse
import getpass
import json
import sys
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from ..errors import ApprovalDecisionError, ProfileError
from . import EXIT_FAILED, EXIT_OK
from .loading import emit_json, load_from_args, table

if TYPE_CHECKING:
    from ..approvals import ApprovalGate, ApprovalRecord


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("approvals", parents=[common], help="list and decide calls waiting for approval")
    asub = p.add_subparsers(dest="approvals_command", metavar="SUBCOMMAND")
    asub.required = True
    ls = asub.add_parser("list", parents=[common], help="requests (pending only, unless --all)")
    ls.add_argument("--all", action="store_true", help="every request, decided and closed ones too")
    ls.set_defaults(func=run_list)
    show = asub.add_parser("show", parents=[common], help="one request: the exact call and its key")
    show.add_argument("id")
    show.set_defaults(func=run_show)
    for name, approve in (("approve", True), ("deny", False)):
        d = asub.add_parser(name, parents=[common], help=f"{name} one pending request (as the operator)")
        d.add_argument("id")
        d.add_argument("--by", default=None, help="who decides (default: the login name)")
        d.add_argument("--reason", default=None, help="why (a denial's reason is what the model reads)")
        if approve:
            d.add_argument(
                "--standing",
                action="store_true",
                help="let this exact call run any number of times until the request expires",
            )
        d.set_defaults(func=run_decide, approve=approve)


def _login() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):  # no login name in this environment (a container's bare uid)
        return "unknown"


def _gate(args: argparse.Namespace) -> ApprovalGate:
    result = load_from_args(args)
    gate = result.registry.approvals
    if gate is None:
        raise ProfileError(
            f"{result.profile.describe_source()} has no [[approvals.rules]]: no call waits for approval"
        )
    return gate  # type: ignore[return-value]


def _when(ts: float | None) -> str:
    return "-" if ts is None else datetime.fromtimestamp(ts, timezone.utc).isoformat(timespec="seconds")


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
        f"  agent      {req.get('agent')}   entry {req.get('entry')}   surface {req.get('surface')}",
        f"  rule       {req.get('rule')}",
        f"  approvers  {', '.join(record.approvers)}",
        f"  expires    {_when(record.expires_at)}",
        f"  key        {record.key}",
    ]
    if record.decided_by:
        lines.append(f"  decided    by {record.decided_by} at {_when(record.decided_at)}")
    if record.reason:
        lines.append(f"  reason     {record.reason}")
    return "\n".join(lines)


def run_list(args: argparse.Namespace) -> int:
    gate = _gate(args)
    records = gate.list(None if args.all else ("pending",))
    if args.json:
        emit_json([r.as_json() for r in records])
        return EXIT_OK
    if not records:
        print("no pending approval requests" if not args.all else "no approval requests")
        return EXIT_OK
    rows = [
        [r.id, r.status, str(r.request.get("tool")), str(r.request.get("agent")), _when(r.expires_at)]
        for r in records
    ]
    print(table(rows, ["ID", "STATUS", "TOOL", "AGENT", "EXPIRES"]))
    return EXIT_OK


def run_show(args: argparse.Namespace) -> int:
    record = _gate(args).get(args.id)
    if record is None:
        print(f"reyn: error: there is no approval request {args.id!r}", file=sys.stderr)
        return EXIT_FAILED
    if args.json:
        emit_json(record.as_json())
    else:
        print(describe(record))
    return EXIT_OK


def run_decide(args: argparse.Namespace) -> int:
    gate = _gate(args)
    by = f"operator:{args.by or _login()}"
    try:
        record = gate.decide(
            args.id,
            approve=args.approve,
            by=by,
            channel="operator",
            reason=args.reason,
            standing=getattr(args, "standing", False),
        )
    except ApprovalDecisionError as exc:
        print(f"reyn: error: {exc}", file=sys.stderr)
        return EXIT_FAILED
    if args.json:
        emit_json(record.as_json())
    else:
        print(f"{record.id}: {record.status} by {by}")
    return EXIT_OK


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
    sys.stderr.write("approve this exact call? [y/N] ")
    sys.stderr.flush()
    answer = sys.stdin.readline().strip().lower()
    approve = answer in ("y", "yes")
    gate.decide(
        approval,
        approve=approve,
        by=f"user:{_login()} (terminal)",
        channel="user",
        reason=None if approve else "declined at the terminal",
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
