"""Scripted model replies: the ``ScriptedReply`` record, script files of them, their Chat
Completions wire format (a whole body or streamed chunks), and readers of request bodies for
responders. ``scripted_server`` serves them over HTTP."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reyn_core.host import parse_json

ToolCallSpec = tuple[str, "Mapping[str, Any] | str"]


@dataclass(frozen=True)
class ScriptedReply:
    """One scripted answer: assistant text, tool calls, or an HTTP error.

    ``tool_calls`` are ``(name, arguments)`` pairs; arguments given as a string are sent verbatim
    (so a test can send malformed JSON). ``status`` other than 200 sends an OpenAI-style error body
    with ``error_message``; ``sticky`` errors are repeated for every later request (retries included).
    """

    content: str | None = None
    tool_calls: tuple[ToolCallSpec, ...] = ()
    status: int = 200
    error_message: str = ""
    sticky: bool = False
    headers: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def text(cls, content: str) -> ScriptedReply:
        """A plain assistant answer."""
        return cls(content=content)

    @classmethod
    def calls(cls, *calls: ToolCallSpec, content: str | None = None) -> ScriptedReply:
        """An assistant turn with one or more tool calls (several = parallel tool calls)."""
        return cls(content=content, tool_calls=tuple(calls))

    @classmethod
    def error(cls, status: int, message: str, *, sticky: bool = True) -> ScriptedReply:
        """An HTTP error; by default repeated for every later request, as a failing provider would."""
        # A tiny retry-after keeps the client's retries fast without changing their number.
        return cls(status=status, error_message=message, sticky=sticky, headers={"retry-after-ms": "5"})


Responder = Callable[[dict[str, Any]], ScriptedReply]


# --------------------------------------------------------------------------- wire format


def _tool_call_payload(n: int, i: int, spec: ToolCallSpec) -> dict[str, Any]:
    name, args = spec
    text = args if isinstance(args, str) else json.dumps(dict(args), ensure_ascii=False)
    return {"id": f"call_{n}_{i}", "type": "function", "function": {"name": name, "arguments": text}}


def completion_body(reply: ScriptedReply, n: int, model: str) -> dict[str, Any]:
    """The non-streaming Chat Completions body for ``reply`` (request number ``n``)."""
    message: dict[str, Any] = {"role": "assistant", "content": reply.content}
    calls = [_tool_call_payload(n, i, c) for i, c in enumerate(reply.tool_calls)]
    if calls:
        message["tool_calls"] = calls
    return {
        "id": f"chatcmpl-scripted-{n}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if calls else "stop"}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }


def stream_chunks(reply: ScriptedReply, n: int, model: str, chunk_size: int) -> list[dict[str, Any]]:
    """The streaming chunks for ``reply``: text in pieces, tool-call arguments split across chunks."""
    base = {
        "id": f"chatcmpl-scripted-{n}",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
    }

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    out = [chunk({"role": "assistant", "content": ""})]
    text = reply.content or ""
    out += [chunk({"content": text[i : i + chunk_size]}) for i in range(0, len(text), chunk_size)]
    for i, spec in enumerate(reply.tool_calls):
        call = _tool_call_payload(n, i, spec)
        args = call["function"]["arguments"]
        out.append(
            chunk(
                {
                    "tool_calls": [
                        {
                            "index": i,
                            "id": call["id"],
                            "type": "function",
                            "function": {"name": call["function"]["name"], "arguments": ""},
                        }
                    ]
                }
            )
        )
        out += [
            chunk({"tool_calls": [{"index": i, "function": {"arguments": args[j : j + chunk_size]}}]})
            for j in range(0, len(args), chunk_size)
        ]
    out.append(chunk({}, "tool_calls" if reply.tool_calls else "stop"))
    return out


def tool_results(body: Mapping[str, Any]) -> dict[str, Any]:
    """Tool-call id → parsed tool message content, from a request body (for scripted responders)."""
    out: dict[str, Any] = {}
    for m in body.get("messages", []):
        if m.get("role") == "tool":
            try:
                out[m.get("tool_call_id", "")] = parse_json(m.get("content") or "null")
            except (TypeError, ValueError):
                out[m.get("tool_call_id", "")] = m.get("content")
    return out


def tool_names(body: Mapping[str, Any]) -> Sequence[str]:
    """The tool names offered in a request body."""
    return [t.get("function", {}).get("name", "") for t in body.get("tools") or []]


# --------------------------------------------------------------------------- script files


def load_script(path: str | Path) -> list[ScriptedReply]:
    """Read a script file: a JSON array whose entries are ``{"text": "..."}``,
    ``{"calls": [{"name": "...", "arguments": {...}}], "content": "..."}`` or
    ``{"error": 503, "message": "..."}``. Raises ``ValueError`` naming the entry that is wrong."""
    try:
        entries = parse_json(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ValueError(f"cannot read the script {path}: {exc}") from None
    if not isinstance(entries, list):
        raise ValueError(f"the script {path} must be a JSON array of replies, not {type(entries).__name__}")
    return [_script_entry(entry, f"{path}[{i}]") for i, entry in enumerate(entries)]


def _script_entry(entry: Any, where: str) -> ScriptedReply:
    allowed = "one of the keys 'text', 'calls' (with optional 'content') or 'error' (with 'message')"
    if not isinstance(entry, dict) or len({"text", "calls", "error"} & set(entry)) != 1:
        raise ValueError(f"{where}: a reply is an object with {allowed}")
    extra = set(entry) - {"text", "calls", "content", "error", "message"}
    if extra:
        raise ValueError(f"{where}: unknown key(s) {sorted(extra)}; a reply has {allowed}")
    if "text" in entry:
        if not isinstance(entry["text"], str):
            raise ValueError(f"{where}.text: expected a string")
        return ScriptedReply.text(entry["text"])
    if "error" in entry:
        status = entry["error"]
        if not isinstance(status, int) or isinstance(status, bool) or not 400 <= status <= 599:
            raise ValueError(f"{where}.error: expected an HTTP error status from 400 to 599")
        return ScriptedReply.error(status, str(entry.get("message", "scripted error")))
    calls = entry["calls"]
    if not isinstance(calls, list) or not calls:
        raise ValueError(f"{where}.calls: expected a non-empty array of {{'name', 'arguments'}} objects")
    specs: list[ToolCallSpec] = []
    for j, call in enumerate(calls):
        if (
            not isinstance(call, dict)
            or not isinstance(call.get("name"), str)
            or not isinstance(call.get("arguments", {}), (dict, str))
        ):
            raise ValueError(
                f"{where}.calls[{j}]: expected {{'name': str, 'arguments': object or JSON string}}"
            )
        specs.append((call["name"], call.get("arguments", {})))
    content = entry.get("content")
    if content is not None and not isinstance(content, str):
        raise ValueError(f"{where}.content: expected a string")
    return ScriptedReply.calls(*specs, content=content)
