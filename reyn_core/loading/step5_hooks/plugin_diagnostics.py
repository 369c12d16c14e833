"""Load step 5: findings a plugin reports about its own configuration (``reyn_diagnostics``), checked."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from reyn_core.code_table import SEVERITIES
from reyn_core.loading.diagnostics import CODES, Diagnostic
from reyn_core.loading.plugin_state import LoadSession, PluginState

_PLUGIN_CODE = re.compile(r"^R[A-Z]{1,2}[0-9]{3}$")


def collect_diagnostics(session: LoadSession, p: PluginState) -> None:
    """Ask the plugin's ``reyn_diagnostics`` hook for findings; a misbehaving hook only warns."""
    for result in p.call_hook("reyn_diagnostics", "RI008", settings=p.settings) or ():
        items = result if isinstance(result, list | tuple) else [result]
        for item in items:
            p.diagnostics.append(_plugin_diagnostic(p.plugin_id, item))


def _plugin_diagnostic(plugin_id: str, item: Any) -> Diagnostic:
    """One finding from a plugin's ``reyn_diagnostics`` hook, or RI008 saying what is wrong with it."""
    if hasattr(item, "as_dict") and callable(item.as_dict):
        item = item.as_dict()
    if not isinstance(item, Mapping):
        return Diagnostic.make(
            "RI008", f"reyn_diagnostics returned a {type(item).__name__}, not a mapping", plugin=plugin_id
        )
    code, severity, message = item.get("code"), item.get("severity"), item.get("message")
    if not isinstance(code, str) or not _PLUGIN_CODE.match(code) or code in CODES:
        return Diagnostic.make(
            "RI008",
            f"reyn_diagnostics returned code {code!r}: a plugin code is 'R', one or "
            "two capital letters and three digits, and not one of the core's",
            plugin=plugin_id,
        )
    if severity not in SEVERITIES or not isinstance(message, str) or not message:
        return Diagnostic.make(
            "RI008",
            f"reyn_diagnostics returned {code} with severity {severity!r} and message "
            f"{message!r:.60}; severity must be error, warning or info and message a text",
            plugin=plugin_id,
        )
    where = item.get("path")
    if where:
        line = item.get("line")
        message = f"{message} ({where}{f':{line}' if line else ''})"
    tool = item.get("tool")
    hint = item.get("hint")
    return Diagnostic(
        code=code,
        severity=severity,
        message=message,
        hint=hint if isinstance(hint, str) else "",
        plugin=plugin_id,
        tool=tool if isinstance(tool, str) and tool else None,
    )


__all__ = ["collect_diagnostics"]
