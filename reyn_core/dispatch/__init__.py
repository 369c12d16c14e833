"""The dispatcher: ``invoke_tool`` / ``dispatch_tool``, the call hooks they run, and the audit log."""

from __future__ import annotations

from ..calls import ToolCall, ToolCallHooks, ToolCallOutcome
from .audit import JsonlAuditLog, argument_hash
from .batch import BatchCall, dispatch_batch
from .dispatcher import dispatch_tool, invoke_tool
from .runner import HandlerThreads

__all__ = [
    "BatchCall",
    "HandlerThreads",
    "JsonlAuditLog",
    "ToolCall",
    "ToolCallHooks",
    "ToolCallOutcome",
    "argument_hash",
    "dispatch_batch",
    "dispatch_tool",
    "invoke_tool",
]
