"""The errors of the LLM runtime (moved here from ``reyn_core.errors``; each is a ``ReynError``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from reyn_core import ReynError


class LLMCallError(ReynError):
    """A model call failed (provider error, rate limit, network) after the client's retries.

    ``kind`` is litellm's exception class name (``RateLimitError``, ``InternalServerError``…, or
    ``MissingAPIKey`` when no key is set and nothing was sent), ``status_code`` the HTTP status when
    the provider answered (None when no response came back: no key, connection refused, timeout).
    Nothing is half-written: the caller's messages are never mutated, and ``messages`` (set by the
    surface) is its conversation up to the failed call, every tool call already answered — a
    consistent point to retry from.
    """

    messages: list[dict[str, Any]] | None = None

    def __init__(self, message: str, *, model: str, kind: str = "", status_code: int | None = None) -> None:
        super().__init__(message)
        self.model = model
        self.kind = kind
        self.status_code = status_code


class ReplayMissing(ReynError):
    """No recorded reply for a request in replay mode; ``key`` and ``fixture`` say which."""

    def __init__(self, message: str, *, key: str, fixture: Path) -> None:
        super().__init__(message)
        self.key = key
        self.fixture = fixture


class ReplayFixtureError(ReynError):
    """A fixture file exists but a line of it is not a valid record."""


__all__ = ["LLMCallError", "ReplayFixtureError", "ReplayMissing"]
