"""A readable transcript of surface events, for ``reyn chat``, ``reyn-demo`` and ``reyn phase run``."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Mapping
from typing import Any, TextIO

from reyn_loops.events import SurfaceEvent


def short(value: Any, limit: int = 160) -> str:
    """Compact one-line JSON (or text) cut to ``limit`` characters."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def describe_envelope(envelope: Any, limit: int = 160) -> str:
    """``ok: <data>`` or ``error <kind>: <message>`` for a dispatcher envelope."""
    if not isinstance(envelope, dict):
        return short(envelope, limit)
    if envelope.get("status") == "ok":
        return "ok: " + short(envelope.get("data"), limit)
    error = envelope.get("error") or {}
    message = str(error.get("message", ""))
    layer = f" ({error['layer']} gate)" if error.get("layer") else ""
    if layer and layer.strip() in message:  # the message already names the gate layer: say it once
        layer = ""
    return f"error {error.get('kind')}{layer}: " + short(message, limit)


_INDENT = " " * len("  assistant> ")


def _reply_label(continues: Any) -> str:
    if continues is None:  # the reply was rejected
        return ""
    return " [ops run; the phase continues]" if continues else " [the phase ends]"


def _phase_end(d: Mapping[str, Any], width: int) -> str:
    tail = f" → {d['next_phase']}" if d.get("next_phase") else ""
    err = f" ({d['error']})" if d.get("error") else ""
    return f"  ■ phase ended: {d.get('status')}{tail}{err}"


def _progress(d: Mapping[str, Any], width: int) -> str:
    count = f"{d.get('done'):g}" + (f"/{d['total']:g}" if d.get("total") is not None else "")
    note = f" {short(d['message'], width)}" if d.get("message") else ""
    return f"    … {d.get('tool')}: {count}{note}"


# The events shown as one line each: the line, from the event's data and the width of long values.
_LINES: dict[str, Callable[[Mapping[str, Any], int], str]] = {
    "tool_call": lambda d, w: f"  → {d.get('name')}({short(d.get('arguments', ''), w)})",
    "tool_result": lambda d, w: f"  ← {d.get('name')}: {describe_envelope(d.get('envelope'), w)}",
    "pending": lambda d, w: f"  ⏸ deferred: {', '.join(d.get('calls', []))} (the host finishes these later)",
    "turn_limit": lambda d, w: f"  ⏹ turn limit reached ({d.get('turns')} turns)",
    "phase_reply": lambda d, w: (
        f"  model reply{_reply_label(d.get('continues'))}> {short(d.get('raw', ''), w)}"
    ),
    "contract_error": lambda d, w: (
        "  ✗ contract violation "
        f"({'sent back to the model' if d.get('retry') else 'second failure: the phase aborts'}): "
        f"{short(d.get('feedback', ''), w)}"
    ),
    "op": lambda d, w: f"  op → {d.get('op')}({short(d.get('args', {}), w)})",
    "op_result": lambda d, w: f"  op ← {d.get('op')}: {describe_envelope(d.get('envelope'), w)}",
    "suspended": lambda d, w: f"  ⏸ waiting for the user: {short(d.get('question'), w)}",
    "phase_end": _phase_end,
    "tool_progress": _progress,
    "tool_log": lambda d, w: f"    · {d.get('tool')} {d.get('level')}: {short(d.get('message', ''), w)}",
}


class Transcript:
    """An event callback that prints one readable line per event (streamed text as it arrives)."""

    def __init__(self, out: TextIO | None = None, *, show_model_calls: bool = True, width: int = 160) -> None:
        self.out = out or sys.stdout
        self.show_model_calls = show_model_calls
        self.width = width
        self._streaming = False
        self._streamed = False

    def line(self, text: str) -> None:
        """Print a line (closing a streamed text line first)."""
        if self._streaming:
            self.out.write("\n")
            self._streaming = False
        self.out.write(text + "\n")
        self.out.flush()

    def __call__(self, event: SurfaceEvent) -> None:
        d = event.data
        kind = event.kind
        if kind == "model_call":
            self._streamed = False
            if self.show_model_calls:
                where = f"turn {d['turn']}" if "turn" in d else f"step {d.get('step')}"
                extra = f", {d['tools']} tools offered" if "tools" in d else ""
                self.line(f"  … model {d.get('model')} ({where}{extra})")
        elif kind == "text_delta":
            if not self._streaming:
                self.out.write("  assistant> ")
                self._streaming = True
                self._streamed = True
            self.out.write(d.get("text", "").replace("\n", "\n" + _INDENT))
            self.out.flush()
        elif kind == "assistant":
            if d.get("text") and not self._streamed:
                self.line("  assistant> " + d["text"].replace("\n", "\n" + _INDENT))
            elif self._streaming:
                self.out.write("\n")
                self._streaming = False
        elif kind in _LINES:
            self.line(_LINES[kind](d, self.width))
