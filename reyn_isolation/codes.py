"""The ``RJ…`` diagnostic codes this backend reports, as data, documented in docs/diagnostics.md
(the core words the ones it reports itself: ``RJ001`` declaration, ``RJ006`` grants in process,
``RJ012`` no backend).

Each entry is ``(severity, title, hint)``; ``Finding`` is what the checks report, turned into a
``Diagnostic`` by ``step``.
"""

from __future__ import annotations

from dataclasses import dataclass

ISOLATION_CODES: dict[str, tuple[str, str, str]] = {
    "RJ002": (
        "error",
        "a grant is wider than the plugin's declaration",
        "grant only what the plugin declares in reyn_permissions.toml; the plugin is refused until then",
    ),
    "RJ003": (
        "warning",
        "declared but not granted",
        "grant it in [plugins.<id>.grants] if the plugin should have it; its attempts fail meanwhile",
    ),
    "RJ004": (
        "error",
        "the plugin cannot run isolated",
        'run it in process (remove isolation = "process") after reviewing it, or use another plugin',
    ),
    "RJ005": (
        "error",
        "the isolated worker could not start or load the plugin",
        "see the message (the worker's last stderr lines); run `reyn doctor` for the sandbox status",
    ),
    "RJ007": (
        "error",
        "a tool's purity contradicts the plugin's grants",
        "grant network to a plugin whose tools are external, or fix the tool's purity",
    ),
    "RJ008": (
        "info",
        "the plugin runs isolated",
        "none: this reports the worker's grants and what the kernel enforces",
    ),
    "RJ009": (
        "error",
        "a tool part cannot cross the process boundary",
        "the tool is not registered; run the plugin in process, or drop the schema enricher",
    ),
    "RJ010": (
        "warning",
        "an isolated plugin's CLI commands are not offered",
        "run the plugin in process to use its commands (after reviewing it)",
    ),
    "RJ011": (
        "error",
        "a write root overlaps the host's code or records, or another granted root",
        "grant a folder that holds none of the host's import path, Python installation, Reyn's or the "
        "plugin's code, profile, lock, logs or Reyn's user cache and configuration folders, and lies "
        "inside none of them; grant roots side by side",
    ),
}


@dataclass(frozen=True, slots=True)
class Finding:
    """One thing this package found about an isolated plugin (a ``Diagnostic`` to be)."""

    code: str
    message: str
    tool: str | None = None
    severity: str | None = None


__all__ = ["ISOLATION_CODES", "Finding"]
