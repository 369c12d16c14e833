"""``reyn approvals list / show / approve / deny``: the operator's view of pending calls, and the
terminal prompt ``reyn tools call`` uses. Every decision goes through the registry's
``ApprovalGate`` (the audit log gets its line); an operator decides on the ``operator`` channel."""

from __future__ import annotations

import argparse
import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..approvals.gate import when
from ..approvals.terminal import describe, login_name
from ..errors import ApprovalDecisionError, ProfileError, ReynError
from . import EXIT_FAILED
from .loading import emit, load_from_args, table
from .parser import add_command, add_group
from .reporting import report_error

if TYPE_CHECKING:
    from ..approvals import ApprovalGate


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    asub = add_group(sub, common, "approvals", "list and decide calls waiting for approval")
    ls = add_command(asub, common, "list", run_list, "requests (pending only, unless --all)", loads=True)
    ls.add_argument("--all", action="store_true", help="every request, decided and closed ones too")
    add_command(
        asub, common, "show", run_show, "one request: the exact call and its key", loads=True
    ).add_argument("id")
    for name, approve in (("approve", True), ("deny", False)):
        d = add_command(
            asub, common, name, run_decide, f"{name} one pending request (as the operator)", loads=True
        )
        d.set_defaults(approve=approve)
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
    data = [r.as_json() for r in records]
    if not records:
        return emit(args, data, "no pending approval requests" if not args.all else "no approval requests")
    rows = [
        [r.id, r.status, str(r.request.get("tool")), str(r.request.get("agent")), when(r.expires_at)]
        for r in records
    ]
    return emit(args, data, table(rows, ["ID", "STATUS", "TOOL", "AGENT", "EXPIRES"]))


@_store_errors
def run_show(args: argparse.Namespace) -> int:
    record = _gate(args).get(args.id)
    if record is None:
        return report_error(f"there is no approval request {args.id!r}", code="failed", exit_code=EXIT_FAILED)
    return emit(args, record.as_json(), describe(record))


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
        return report_error(str(exc), code="failed", exit_code=EXIT_FAILED)
    return emit(args, record.as_json(), f"{record.id}: {record.status} by {by}")
