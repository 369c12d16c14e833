"""The tracing add-on a profile's ``[observability] tracing`` turns on, found by its entry point: the
core names no tracing library (its calls and loads reach an add-on only through
``reyn_core.observation``), and a profile that asks for spans it cannot have is told so (``RC012``).
"""

from __future__ import annotations

from typing import Any

TRACING_GROUP = "reyn.tracing"
"""The entry-point group of the tracing add-on a profile's ``[observability] tracing`` turns on."""
TRACING_ADDON = "otel"
"""Its name there (reyn-otel's)."""


def tracing_addon() -> tuple[Any | None, str | None]:
    """The installed tracing add-on (the module its ``reyn.tracing`` entry point ``otel`` names:
    reyn-otel's ``configure_tracing`` and ``export_spans``), or None and why there is none."""
    from reyn_core.errors import describe_exception
    from reyn_core.loading.step2_discovery.discovery import named_entry_point

    try:
        found = named_entry_point(TRACING_GROUP, TRACING_ADDON)
        if found is None:
            return None, (
                "[observability] tracing is on but no tracing add-on is installed: install the reyn-otel "
                "distribution (pip install --find-links DIST reyn-otel, DIST being the wheelhouse of "
                "`make dist`); until then no spans are made"
            )
        return found.load(), None
    except Exception as exc:  # several, or a broken one: said once, and the load goes on without spans
        return None, (
            "[observability] tracing is on but the tracing add-on cannot be used "
            f"({describe_exception(exc)}); until it is fixed no spans are made"
        )


__all__ = ["TRACING_ADDON", "TRACING_GROUP", "tracing_addon"]
