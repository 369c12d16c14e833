"""The LLM loops: ``RouterLoop`` (native tool calling) and ``PhaseRunner`` (phase JSON contract),
on litellm (extra ``reyn-core[llm]``), offline LLM replay and the readable transcript.

Importing this package never imports litellm; it is imported when a model is first called.
"""

from __future__ import annotations

from reyn_core.loops.events import EVENT_KINDS, SurfaceEvent
from reyn_core.loops.llm import (
    LiteLLMClient,
    LLMCallError,
    LLMClient,
    LLMReply,
    LLMRequest,
    ToolCallRequest,
    import_litellm,
)
from reyn_core.loops.phase_runner import PhaseResult, PhaseRunner, PhaseState
from reyn_core.loops.replay import RECORD_ENV, ReplayClient, ReplayFixtureError, ReplayMissing
from reyn_core.loops.router import PendingToolCall, RouterLoop, RouterResult, ToolCallRecord, tool_message
from reyn_core.loops.transcript import Transcript, describe_envelope, short

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
