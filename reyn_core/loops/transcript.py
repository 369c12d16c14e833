"""A readable transcript of surface events, for ``reyn chat``, ``reyn-demo`` and ``reyn phase run``."""

from __future__ import annotations

import json
import sys
from typing import Any, TextIO

from reyn_core.loops.events import SurfaceEvent


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
        elif kind == "tool_call":
            self.line(f"  → {d.get('name')}({short(d.get('arguments', ''), self.width)})")
        elif kind == "tool_result":
            self.line(f"  ← {d.get('name')}: {describe_envelope(d.get('envelope'), self.width)}")
        elif kind == "pending":
            self.line(f"  ⏸ deferred: {', '.join(d.get('calls', []))} (the host finishes these later)")
        elif kind == "turn_limit":
            self.line(f"  ⏹ turn limit reached ({d.get('turns')} turns)")
        elif kind == "phase_reply":
            continues = d.get("continues")
            label = (
                ""
                if continues is None
                else (" [ops run; the phase continues]" if continues else " [the phase ends]")
            )
            self.line(f"  model reply{label}> {short(d.get('raw', ''), self.width)}")
        elif kind == "contract_error":
            action = "sent back to the model" if d.get("retry") else "second failure: the phase aborts"
            self.line(f"  ✗ contract violation ({action}): {short(d.get('feedback', ''), self.width)}")
        elif kind == "op":
            self.line(f"  op → {d.get('op')}({short(d.get('args', {}), self.width)})")
        elif kind == "op_result":
            self.line(f"  op ← {d.get('op')}: {describe_envelope(d.get('envelope'), self.width)}")
        elif kind == "suspended":
            self.line(f"  ⏸ waiting for the user: {short(d.get('question'), self.width)}")
        elif kind == "phase_end":
            tail = f" → {d['next_phase']}" if d.get("next_phase") else ""
            err = f" ({d['error']})" if d.get("error") else ""
            self.line(f"  ■ phase ended: {d.get('status')}{tail}{err}")
