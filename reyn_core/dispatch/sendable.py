"""What ``dispatch_tool`` sends for a call's result: its JSON data, or the call's error.

``sendable`` is the one place that decides whether a result can be sent: it runs inside the call
(``invoke_tool``'s ``_finish``), before the outcome is recorded, so the audit log, the ``after``
hooks, an approval's ``executed`` line and the span record what the caller received. A refusal added
here is recorded like every other: nothing after it turns an ``ok`` into an error.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..errors import ToolExecutionError
from ..jsondata import to_jsonable
from ..unicode_text import describe_lone_surrogate, unsendable_at
from .runner import describe

Finish = Callable[[str, Any], Any]
"""How a call's result becomes what its caller receives (``tool``, ``result``) → the final result;
raises a ``ToolError`` for a result that cannot be sent."""


def sendable(tool: str, result: Any) -> Any:
    """``result`` as the JSON data ``dispatch_tool`` sends, or ``ToolExecutionError`` naming why it
    cannot be sent: not JSON data (e.g. a result holding itself), text UTF-8 cannot carry (every
    surface writes UTF-8), or a number JSON cannot carry (``NaN``, ``Infinity``: RFC 8259 has
    neither). One walk finds the first such leaf; the error names its JSON pointer."""
    try:
        data = to_jsonable(result)
    except Exception as exc:  # e.g. a self-referencing result: report it, never raise
        raise ToolExecutionError(
            f"tool {tool!r} returned a result that cannot be sent as JSON: {describe(exc)}", tool=tool
        ) from None
    found = unsendable_at(data)
    if found is None:
        return data
    what = (
        "a number that JSON cannot carry (NaN or Infinity)"
        if found[1] == "number"
        else "text that UTF-8 cannot carry (a lone surrogate)"
    )
    raise ToolExecutionError(
        f"tool {tool!r} returned {what} {describe_lone_surrogate(found)}; the result was not sent",
        tool=tool,
    )


__all__ = ["Finish", "sendable"]
