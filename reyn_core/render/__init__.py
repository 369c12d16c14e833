"""The two renderers: one registry, two views. See ``render_router`` and ``render_phase``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..lazy_exports import lazy_exports
from .router import StrictRenderError, render_router, render_router_json

if TYPE_CHECKING:
    from .phase_catalog import PhaseCatalog, render_phase

# The phase renderer is imported on first use: a router render (`reyn tools render --surface router`,
# every router turn) never needs its catalogue classes.
__getattr__, __dir__ = lazy_exports(
    __name__, {"reyn_core.render.phase_catalog": ("PhaseCatalog", "render_phase")}, globals()
)

__all__ = [
    "PhaseCatalog",
    "StrictRenderError",
    "render_router",
    "render_router_json",
    "render_phase",
]
