"""The tracing add-on a profile's ``[observability] tracing`` turns on, found by its entry point: the
core names no tracing library (its calls and loads reach an add-on only through
``reyn_core.observation``), and a profile that asks for spans it cannot have is told so (``RC012``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from reyn_core.loading.diagnostics import Diagnostic
    from reyn_core.loading.extension_origin import ExtensionSession

TRACING_GROUP = "reyn.tracing"
"""The entry-point group of the tracing add-on a profile's ``[observability] tracing`` turns on."""
TRACING_ADDON = "otel"
"""Its name there (reyn-otel's)."""


TRACING_DISTRIBUTION = "reyn-otel"
"""The only distribution that may provide it; an ``otel`` entry point of any other is never imported."""


def tracing_addon(extensions: ExtensionSession) -> tuple[Any | None, Diagnostic | None]:
    """The installed tracing add-on (the module reyn-otel's ``reyn.tracing`` entry point ``otel``
    names: ``configure_tracing`` and ``export_spans``), imported through the load's ``extensions``
    only from reyn-otel's verified files (``extension_origin``), or None and the ``RC012`` saying why
    there is none, its hint following the cause (not installed, refused by the lock, its files).
    Called only when tracing is on."""
    from reyn_core.loading.diagnostics import Diagnostic
    from reyn_core.loading.extension_origin import ExtensionError, refusal_hint

    try:
        return extensions.load(TRACING_GROUP, TRACING_ADDON, distribution=TRACING_DISTRIBUTION), None
    except ExtensionError as exc:
        hint = refusal_hint(exc, "RC012")  # not installed: the code's own hint, how to install it
        if exc.missing:
            why = f"[observability] tracing is on but no tracing add-on is installed ({exc}): {hint}"
        else:
            why = (
                f"[observability] tracing is on but the tracing add-on cannot be used ({exc}); until it is "
                "fixed no spans are made"
            )
        return None, Diagnostic.make("RC012", why, hint=hint, traceback=exc.traceback)


__all__ = ["TRACING_ADDON", "TRACING_DISTRIBUTION", "TRACING_GROUP", "tracing_addon"]
