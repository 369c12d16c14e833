"""Reyn web pack: ``web_fetch`` (SSRF-guarded, opt-in) and ``web_search`` (pluggable backends).

Importing this package never imports httpx; the handlers in ``fetch`` and ``search`` do, when a
tool runs.
"""

from __future__ import annotations

from .availability import diagnostics
from .settings import WebSettings

__all__ = ["WebSettings", "diagnostics"]
