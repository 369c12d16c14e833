"""An MCP client's answer to approval requests (its elicitation callback), recording what it was asked."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import mcp_types as types


class Approver:
    """Answers every elicitation with ``content`` (by default: approve, this call only), keeping each
    request's message and schema; ``check`` runs first on each request (e.g. that nothing ran yet)."""

    def __init__(
        self, content: dict[str, Any] | None = None, *, check: Callable[[Any], None] | None = None
    ) -> None:
        self.content = {"approve": True} if content is None else content
        self.check = check
        self.asked: list[str] = []
        self.schemas: list[dict[str, Any]] = []

    @classmethod
    def for_session(cls, *, offered: bool = True) -> Approver:
        """Approves for the rest of the session; with ``offered``, asserts each request offers that
        choice (a stateless server's request does not: pass False to answer it anyway)."""
        return cls({"approve": True, "for_session": True}, check=_offers_session if offered else None)

    async def __call__(self, ctx: Any, params: Any) -> types.ElicitResult:
        self.asked.append(params.message)
        self.schemas.append(params.requested_schema)
        if self.check is not None:
            self.check(params)
        return types.ElicitResult(action="accept", content=self.content)


def _offers_session(params: Any) -> None:
    assert "for_session" in params.requested_schema["properties"]
