"""What ``reyn tools call`` shows while a tool works: a progress line on a terminal, log lines.

Progress is drawn only when stderr is a terminal (one line rewritten in place, cleared before the
result is printed); a tool's log entries at ``info`` and above go to stderr as lines either way.
Stdout stays the call's JSON envelope.
"""

from __future__ import annotations

import sys
from typing import TextIO

from ..tool_reports import LOG_LEVELS, Progress, QueuedReporter, ToolLog, ToolReport

BAR_WIDTH = 24
SHOWN_LOG_LEVELS = frozenset(LOG_LEVELS[LOG_LEVELS.index("info") :])


def progress_line(event: Progress, width: int = 80) -> str:
    """``[######------]  3/10  message`` (a spinner-free count when the total is unknown)."""
    count = f"{event.done:g}" if event.total is None else f"{event.done:g}/{event.total:g}"
    if event.total:
        filled = round(BAR_WIDTH * min(event.done / event.total, 1.0))
        count = f"[{'#' * filled}{'-' * (BAR_WIDTH - filled)}] {count}"
    line = f"{event.tool or 'tool'}: {count}" + (f"  {event.message}" if event.message else "")
    line = "".join(ch if ch.isprintable() else " " for ch in line)
    return line[: max(width - 1, 10)]


class TerminalReports:
    """The sink of ``reyn tools call``'s reporter, writing to ``stream`` (stderr)."""

    def __init__(self, stream: TextIO, *, terminal: bool) -> None:
        self._stream = stream
        self._terminal = terminal
        self._drawn = False

    async def __call__(self, event: ToolReport) -> None:
        if isinstance(event, Progress):
            if self._terminal:
                self._stream.write("\r\x1b[2K" + progress_line(event))
                self._stream.flush()
                self._drawn = True
        elif isinstance(event, ToolLog) and event.level in SHOWN_LOG_LEVELS:
            self.clear()
            text = "".join(ch if ch.isprintable() else " " for ch in event.message)
            self._stream.write(f"reyn: {event.tool or 'tool'}: {event.level}: {text}\n")
            self._stream.flush()

    def clear(self) -> None:
        """Remove the progress line (before the result or a log line is written)."""
        if self._drawn:
            self._stream.write("\r\x1b[2K")
            self._stream.flush()
            self._drawn = False


def call_reporter(tool: str) -> tuple[QueuedReporter, TerminalReports]:
    """The reporter of one ``reyn tools call`` (call from inside the running loop)."""
    sink = TerminalReports(sys.stderr, terminal=sys.stderr.isatty())
    return QueuedReporter(sink, tool=tool), sink
