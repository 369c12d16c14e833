"""Plugin machinery: hookspecs, discovery, provenance, loading and diagnostics."""

from .hookspecs import API_VERSION, ReynHookSpecs, hookimpl, hookspec

__all__ = ["API_VERSION", "ReynHookSpecs", "hookimpl", "hookspec"]
