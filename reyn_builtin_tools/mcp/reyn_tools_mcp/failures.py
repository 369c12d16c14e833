"""What a model is told when an MCP server fails: Reyn's own words, never the server's.

A server's stderr, its JSON-RPC error messages and the text of a transport exception are written
by the server (or echo what it sent, or the expanded command line and URL) and can hold the host's
secrets in any encoding — URL-encoded, JSON-escaped, base64, split across lines. Replacing known
values cannot catch every form, so none of that text is put in a model-visible message. Each
message is built here from facts Reyn chose: the server's name and source as written (``${VAR}``
unexpanded), the step that failed, a protocol code, an HTTP status, an OS error's name; and the
raw text goes to the operator's log (``reyn_core.log_remote_failure``, logger ``reyn.remote.mcp``),
whose reference the message cites. Standard library only.
"""

from __future__ import annotations

import errno
import os
import traceback
from typing import Any

from reyn_core import log_remote_failure

LOG_SOURCE = "mcp"


class McpServerError(Exception):
    """The server answered a request with a JSON-RPC error (the connection is kept)."""


class McpConnectionError(Exception):
    """The server could not be reached, or the connection broke (it is reopened on the next call)."""


class McpCallTimeout(Exception):
    """The call's one deadline ended: the server did not answer in time (the connection is let go of
    and reopened next call), or a step before the request — the old server's stop — was still
    waiting (its words name it)."""


# JSON-RPC 2.0's own names for its reserved codes (anything else is the server's own code)
_JSON_RPC_CODES = {
    -32700: "parse error",
    -32600: "invalid request",
    -32601: "method not found",
    -32602: "invalid params",
    -32603: "internal error",
    # the SDK also reports a closed connection (a stdio server's process ended) with -32000
    -32000: "a server error, or the connection closed",
}


def leaf(exc: BaseException) -> BaseException:
    """The first leaf of an (Base)ExceptionGroup (task groups wrap the real failure)."""
    while getattr(exc, "exceptions", None):
        exc = exc.exceptions[0]  # type: ignore[attr-defined]
    return exc


def json_rpc_code(code: int) -> str:
    """``JSON-RPC error -32602 (invalid params)``; the meaning only for the reserved codes."""
    meaning = _JSON_RPC_CODES.get(code) or ("a server-defined error" if -32099 <= code <= -32000 else None)
    return f"JSON-RPC error {code}" + (f" ({meaning})" if meaning else "")


def reason(exc: BaseException) -> str:
    """Why a connection failed, from the exception's *kind* only: an OS error's name, an HTTP status,
    a JSON-RPC code, else the exception's class — never its message (the server's or an echo)."""
    exc = leaf(exc)
    code = getattr(exc, "errno", None)
    if isinstance(exc, OSError) and isinstance(code, int) and code in errno.errorcode:
        return f"{type(exc).__name__} ({errno.errorcode[code]}: {os.strerror(code)})"
    status = getattr(getattr(exc, "response", None), "status_code", None)
    if isinstance(status, int):
        return f"the server answered HTTP {status}"
    rpc = getattr(exc, "code", None)
    if type(exc).__name__ == "MCPError" and isinstance(rpc, int):
        return json_rpc_code(rpc)
    return type(exc).__name__


class MessageTooLong(Exception):
    """A server sent a message over ``limit`` bytes (``max_message_bytes``); it was not kept."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"a message over {limit} bytes")
        self.limit = limit


class MessageTooManyValues(Exception):
    """A server sent a message of over ``limit`` JSON values (``max_message_values``), counted before
    parsing; it was not parsed."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"a message of over {limit} JSON values")
        self.limit = limit


class MessageNotUtf8(Exception):
    """A server sent a message that is not UTF-8 JSON (``what``: ``NotUtf8Json``'s words); it was not
    parsed."""

    def __init__(self, what: str) -> None:
        super().__init__(f"a message that is {what}")
        self.what = what


class OutputEndedMidMessage(Exception):
    """A server's output ended inside a line (it crashed or closed stdout mid-message): the
    connection is lost; the unfinished line is not a message, so it is not parsed."""

    def __init__(self) -> None:
        super().__init__("the output ended mid-message")


def over_bound(limit: int) -> str:
    """Reyn's words for a message over the bound (either transport)."""
    return f"the server sent a message over {limit} bytes (max_message_bytes)"


def over_value_bound(limit: int) -> str:
    """Reyn's words for a message over the value bound (either transport)."""
    return f"the server sent a message of over {limit} JSON values (max_message_values)"


def not_utf8(what: str) -> str:
    """Reyn's words for a message that is not UTF-8 JSON (either transport; ``NotUtf8Json``'s words)."""
    return f"the server sent a message that is {what}"


def fault(exc: BaseException) -> str:
    """A transport fault in Reyn's words: a message over the size or value limit, output that ended
    mid-message, or a message that cannot be parsed."""
    if isinstance(leaf(exc), OutputEndedMidMessage):
        return "its output ended mid-message"
    if isinstance(leaf(exc), MessageTooLong):
        return over_bound(leaf(exc).limit)  # type: ignore[attr-defined]
    if isinstance(leaf(exc), MessageTooManyValues):
        return over_value_bound(leaf(exc).limit)  # type: ignore[attr-defined]
    if isinstance(leaf(exc), MessageNotUtf8):
        return not_utf8(leaf(exc).what)  # type: ignore[attr-defined]
    return f"the server sent a message that cannot be parsed ({parse_fault(exc)})"


def parse_fault(exc: BaseException) -> str:
    """A message the SDK could not parse, described by the parser's error *types* (pydantic's
    ``json_invalid``, with its fixed wording, e.g. "recursion limit exceeded"), never the input."""
    exc = leaf(exc)
    errors: Any = getattr(exc, "errors", None)
    try:
        items = errors() if callable(errors) else []
    except Exception:
        items = []
    parts = []
    for item in items[:3]:
        kind = str(item.get("type", "?"))[:40]
        # json_invalid's message is the JSON parser's fixed text; other messages may quote a value
        message = str(item.get("msg", ""))[:120] if kind == "json_invalid" else ""
        parts.append(f"{kind}: {message}" if message else kind)
    return type(exc).__name__ + (f" ({'; '.join(parts)})" if parts else "")


def raw_text(exc: BaseException | None, stderr: str) -> str:
    """What the operator's log gets: the exception as Python prints it, then the server's stderr."""
    parts = []
    if exc is not None:
        parts.append("".join(traceback.format_exception_only(type(leaf(exc)), leaf(exc))).rstrip())
    if stderr.strip():
        parts.append("server stderr (last part):\n" + stderr.rstrip())
    return "\n".join(parts)


def report(server: str, what: str, raw: str) -> str:
    """``what`` (Reyn's words), and — when there is raw text — where the operator finds it."""
    if not raw.strip():
        return what
    return f"{what}; {log_remote_failure(LOG_SOURCE, what, raw)}"


def answered_error(server: str, what: str, code: int, message: str, data: Any) -> McpServerError:
    """A JSON-RPC error answer to ``what``: its code in Reyn's words; the server's ``message`` and
    ``data`` (its own text, which may echo its environment) go to the log."""
    raw = f"error {code}: {message}" + (f"\ndata: {data!r}" if data is not None else "")
    return McpServerError(
        report(server, f"MCP server {server!r} answered {what} with {json_rpc_code(code)}", raw)
    )


def unusable_answer(server: str, what: str, exc: BaseException) -> McpServerError:
    """An answer to ``what`` the SDK refused (e.g. a result not matching the tool's outputSchema)
    on a session that still answers."""
    words = f"the answer of MCP server {server!r} to {what} could not be used ({reason(exc)})"
    words += "; the connection is kept"
    return McpServerError(report(server, words, raw_text(exc, "")))


def not_answered(server: str, what: str, timeout_s: float) -> McpCallTimeout:
    """The request ``what`` got no answer by the end of its call's timeout (its connection let go of)."""
    return McpCallTimeout(
        f"MCP server {server!r} did not answer {what} within {timeout_s:g} s; "
        "the connection was closed and will be reopened on the next call"
    )


def not_sent(server: str, what: str, timeout_s: float, step: str) -> McpCallTimeout:
    """The call's timeout ended before ``what`` was sent, while ``step`` was waiting."""
    return McpCallTimeout(
        f"MCP server {server!r}: {what} could not be sent within the call's timeout of {timeout_s:g} s: "
        + step
    )


def handshake_late(server: str, connect_timeout_s: float, hint: str, stderr: str) -> McpConnectionError:
    """The server's handshake did not finish within ``connect_timeout_s`` (its owner let go of);
    ``hint`` ends the sentence (the sandbox grants), ``stderr`` goes to the log."""
    words = (
        f"MCP server {server!r} did not finish its handshake within connect_timeout_s={connect_timeout_s:g} s"
    )
    return McpConnectionError(report(server, f"{words}; it was stopped{hint}", raw_text(None, stderr)))
