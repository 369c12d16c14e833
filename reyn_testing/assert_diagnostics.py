"""Assertions on loader diagnostics, by stable code."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any


def _diagnostics_of(source: Any) -> tuple[Any, ...]:
    """Diagnostics of a ``LoadResult``, a load report, a ``PluginLoadInfo`` or an iterable of them."""
    if hasattr(source, "report") and hasattr(source.report, "diagnostics"):
        source = source.report
    if hasattr(source, "diagnostics"):
        found = list(source.diagnostics)
        # A report also carries per-plugin diagnostics; include those it does not repeat.
        for info in getattr(source, "plugins", ()) or ():
            found.extend(d for d in getattr(info, "diagnostics", ()) if d not in found)
        return tuple(found)
    if isinstance(source, Iterable):
        return tuple(source)
    raise TypeError(f"expected a LoadResult, a report or diagnostics, got {type(source).__name__}")


def not_installed_hint() -> str:
    """What to do when the plugin under test is not installed where the tests run (RD001)."""
    import sys

    return (
        "install this project (`pip install -e .`): the kit loads the plugin through the entry points "
        f"installed for this Python ({sys.executable})"
    )


def origin_line(info: Any) -> str:
    """Which distribution a plugin came from: ``reyn-x 0.1.0, editable (/src/x)``."""
    if info is None or not getattr(info, "distribution", None):
        return "not installed"
    text = f"{info.distribution} {info.version or '?'}"
    prov = getattr(info, "provenance", None)
    if prov is not None:
        places = [path for _, path in getattr(prov, "module_locations", ()) or ()]
        where = places[0] if places else prov.source_url
        text += f", {prov.source_kind}" + (f" ({where})" if where else "")
    return text


def _describe(diagnostics: Iterable[Any]) -> str:
    lines = []
    for d in diagnostics:
        lines.append(f"  {d.render()}" if hasattr(d, "render") else f"  {d!r}")
        if getattr(d, "code", None) == "RD001":
            lines.append(f"    -> {not_installed_hint()}")
    return "\n".join(lines) if lines else "  (none)"


def _unknown_code_note(code: str) -> str:
    from reyn_core.host import DIAGNOSTIC_CODES

    if code in DIAGNOSTIC_CODES:
        return ""
    return f" ({code!r} is not a known diagnostic code; see docs/diagnostics.md)"


def assert_diagnostic(
    source: Any,
    code: str,
    *,
    plugin: str | None = None,
    tool: str | None = None,
    severity: str | None = None,
    message_contains: str | None = None,
) -> Any:
    """Assert that ``source`` carries a diagnostic ``code`` (optionally for ``plugin`` / ``tool``, of
    ``severity``, whose message contains ``message_contains``) and return the first match.

    On failure the ``AssertionError`` lists every diagnostic that is there.
    """
    diagnostics = _diagnostics_of(source)
    for d in diagnostics:
        if d.code != code:
            continue
        if plugin is not None and getattr(d, "plugin", None) != plugin:
            continue
        if tool is not None and getattr(d, "tool", None) != tool:
            continue
        if severity is not None and getattr(d, "severity", None) != severity:
            continue
        if message_contains is not None and message_contains not in getattr(d, "message", ""):
            continue
        return d
    wanted = code + "".join(
        f" {k}={v!r}"
        for k, v in (
            ("plugin", plugin),
            ("tool", tool),
            ("severity", severity),
            ("message_contains", message_contains),
        )
        if v is not None
    )
    raise AssertionError(
        f"expected diagnostic {wanted}{_unknown_code_note(code)}; found:\n{_describe(diagnostics)}"
    )


def assert_no_diagnostics(source: Any, *, severity: str | None = "error") -> None:
    """Assert that ``source`` has no diagnostic of ``severity`` (None: of any severity)."""
    diagnostics = _diagnostics_of(source)
    bad = [d for d in diagnostics if severity is None or getattr(d, "severity", None) == severity]
    if bad:
        what = "diagnostics" if severity is None else f"{severity} diagnostics"
        raise AssertionError(f"expected no {what}; found:\n{_describe(bad)}")
