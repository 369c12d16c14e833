"""reyn-loops, the LLM runtime on top of reyn-core: ``RouterLoop`` (native tool calling) and
``PhaseRunner`` (phase JSON contract) on litellm, offline LLM replay, the readable transcript, and
``reyn chat`` / ``reyn phase`` (plugin ``loops``, ``reyn_loops.plugin``).

It is built only on reyn-core's public API (``reyn_core`` and ``reyn_core.host``), exactly as a
pack is; a ``lint-imports`` contract checks it. Importing this package never imports litellm; it is
imported when a model is first called.
"""

from __future__ import annotations

from reyn_loops.errors import LLMCallError, ReplayFixtureError, ReplayMissing
from reyn_loops.events import EVENT_KINDS, SurfaceEvent
from reyn_loops.llm import (
    LiteLLMClient,
    LLMClient,
    LLMReply,
    LLMRequest,
    ToolCallRequest,
    import_litellm,
)
from reyn_loops.phase_result import PhaseResult, PhaseState
from reyn_loops.phase_runner import PhaseRunner
from reyn_loops.replay import RECORD_ENV, ReplayClient
from reyn_loops.router import PendingToolCall, RouterLoop, RouterResult, ToolCallRecord, tool_message
from reyn_loops.transcript import Transcript, describe_envelope, short

__all__ = [
    "EVENT_KINDS",
    "LLMCallError",
    "LLMClient",
    "LLMReply",
    "LLMRequest",
    "LiteLLMClient",
    "PendingToolCall",
    "PhaseResult",
    "PhaseRunner",
    "PhaseState",
    "RECORD_ENV",
    "ReplayClient",
    "ReplayFixtureError",
    "ReplayMissing",
    "RouterLoop",
    "RouterResult",
    "SurfaceEvent",
    "ToolCallRecord",
    "ToolCallRequest",
    "Transcript",
    "describe_envelope",
    "import_litellm",
    "short",
    "tool_message",
]
