"""``reyn approvals list / show / approve / deny``: the operator's view of pending calls, and the
terminal prompt ``reyn tools call`` uses. Every decision goes through the registry's
``ApprovalGate`` (the audit log gets its line); an operator decides on the ``operator`` channel."""

from __future__ import annotations

import argparse
import functools
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..approvals.terminal import describe, login_name, when
from ..errors import ApprovalDecisionError, ProfileError, ReynError
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
            scope = d.add_mutually_exclusive_group()  # one scope: never both, one silently winning
            scope.add_argument(
                "--standing",
                action="store_true",
                help="let this exact call run any number of times until the request expires",
            )
            scope.add_argument(
                "--for-session",
                action="store_true",
                help="let this exact call run again in the session that asked, until it ends or expires",
            )
        d.set_defaults(func=run_decide, approve=approve)


def _store_errors(run: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    """A store that cannot be used (not installed, unreachable) is a clear error, not a crash."""

    @functools.wraps(run)
    def wrapped(args: argparse.Namespace) -> int:
        try:
            return run(args)
        except OSError as exc:
            raise ReynError(f"the approval store cannot be used: {exc}") from None

    return wrapped


def _gate(args: argparse.Namespace) -> ApprovalGate:
    result = load_from_args(args)
    gate = result.registry.approvals
    if gate is None:
        raise ProfileError(
            f"{result.profile.describe_source()} has no [[approvals.rules]]: no call waits for approval"
        )
    return gate  # type: ignore[return-value]


@_store_errors
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
        [r.id, r.status, str(r.request.get("tool")), str(r.request.get("agent")), when(r.expires_at)]
        for r in records
    ]
    print(table(rows, ["ID", "STATUS", "TOOL", "AGENT", "EXPIRES"]))
    return EXIT_OK


@_store_errors
def run_show(args: argparse.Namespace) -> int:
    record = _gate(args).get(args.id)
    if record is None:
        print(f"reyn: error: there is no approval request {args.id!r}", file=sys.stderr)
        return EXIT_FAILED
    return _shown(args, record, describe(record))


@_store_errors
def run_decide(args: argparse.Namespace) -> int:
    gate = _gate(args)
    by = f"operator:{args.by or login_name()}"
    try:
        record = gate.decide(
            args.id,
            approve=args.approve,
            by=by,
            channel="operator",
            reason=args.reason,
            standing=getattr(args, "standing", False),
            for_session=getattr(args, "for_session", False),
        )
    except ApprovalDecisionError as exc:
        print(f"reyn: error: {exc}", file=sys.stderr)
        return EXIT_FAILED
    return _shown(args, record, f"{record.id}: {record.status} by {by}")


def _shown(args: argparse.Namespace, record: ApprovalRecord, text: str) -> int:
    """The record as JSON with ``--json``, else ``text``; the command succeeded."""
    if args.json:
        emit_json(record.as_json())
    else:
        print(text)
    return EXIT_OK
