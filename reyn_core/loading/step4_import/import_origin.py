"""Where a module would be imported from, checked against the digested files before anything runs,
the verified finder that then serves those files' hashed bytes only, and the import itself
(``import_verified``): for plugins (``importing``) and for the extensions the core loads by entry point
(``extension_origin``)."""

from __future__ import annotations

from typing import Any

from reyn_core.errors import PluginLoadError, describe_exception, exception_message
from reyn_core.loading.step3_provenance.record import ProvenanceRecord, coverage_problem


def import_origin_problem(entry_point: str, rec: ProvenanceRecord) -> str | None:
    """Why the entry point's module would not be imported from the files the digest covers, or None
    when it would."""
    import importlib.util
    import os
    import sys

    problem = coverage_problem(entry_point, rec)
    if problem is not None:
        return problem
    top = entry_point.partition(":")[0].strip().split(".")[0]
    expected = dict(rec.module_locations)[top]
    want = os.path.realpath(expected)
    loaded = sys.modules.get(top)
    spec: Any = None
    if loaded is not None:
        origin = getattr(loaded, "__file__", None)
        locations = list(getattr(loaded, "__path__", None) or ())
    else:
        try:
            spec = importlib.util.find_spec(top)
        except (ImportError, ValueError) as exc:
            return f"looking up module {top!r} failed: {exception_message(exc)}"
        if spec is None:
            return f"module {top!r} cannot be found on sys.path although {expected} exists"
        origin = spec.origin if spec.has_location else None
        locations = list(spec.submodule_search_locations or ())
    found: list[str] = []
    if locations:  # a package: every folder its submodules may come from must be the digested one
        found += [loc for loc in locations if os.path.realpath(loc) != want]
        if origin and os.path.realpath(os.path.dirname(origin)) != want:
            found.append(origin)
    elif not origin or os.path.realpath(origin) != want:
        found.append(origin or f"<{type(loaded).__name__ if loaded is not None else 'no file'}>")
    if not found:
        return None
    shown = ", ".join(f"{path}{_path_entry(path)}" for path in found)
    return (
        f"module {top!r} would be imported from {shown}, not from the files that were digested "
        f"({expected}); the shadowing module was not run"
    )


def _path_entry(path: str) -> str:
    """`` (sys.path entry ..., the working directory)`` for the entry a shadowing path sits in."""
    import os
    import sys

    parent = os.path.realpath(os.path.dirname(path.rstrip(os.sep)))
    cwd = os.path.realpath(os.getcwd())
    for entry in sys.path:
        if os.path.realpath(entry or os.curdir) == parent:
            what = " = the working directory" if parent == cwd else ""
            return f" (sys.path entry {entry!r}{what})"
    return ""


def serve_from_digested_files(rec: ProvenanceRecord | None) -> None:
    """From now on, every module under the plugin's top-level names — the entry point and any module
    imported later, such as a lazy ``"module:attr"`` handler — is compiled from the bytes of its
    digested file, read once and hash-checked at import (``verified_import``)."""
    from reyn_core.loading.step4_import.verified_import import trees_of, verified_finder

    assert rec is not None
    verified_finder().register(trees_of(rec))


def import_verified(rec: ProvenanceRecord, *, group: str = "reyn.plugins") -> Any:
    """The object ``rec.entry_point`` names, imported only from the digested files (every module
    under the plugin's import names, now and later); ``PluginLoadError`` (``RI001``) when importing
    it fails, naming the innermost line of the plugin's own files that raised. A plugin's and an
    extension's entry point (``group``) are imported alike."""
    from importlib.metadata import EntryPoint

    try:
        serve_from_digested_files(rec)
        return EntryPoint(name=rec.plugin_id, value=rec.entry_point, group=group).load()
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # SystemExit from a plugin must not end the host either
        import traceback

        where = _failing_location(exc, rec)
        raise PluginLoadError(
            "RI001",
            f"importing {rec.entry_point!r} from {rec.distribution} failed"
            + (f" at {where}" if where else "")
            + f": {describe_exception(exc)}",
            traceback="".join(traceback.format_exception(exc)),
        ) from None


def _failing_location(exc: BaseException, rec: ProvenanceRecord | None) -> str | None:
    """``/path/pkg/mod.py:12 (in func)``: the innermost traceback frame in the plugin's own files
    (the folders or modules its digest covers), or where a syntax error in one of them is. None when
    no frame is the plugin's (e.g. the failure is inside a dependency it imports and nothing of its
    own is on the stack)."""
    import os
    import traceback

    if rec is None or not rec.module_locations:
        return None
    roots = [os.path.realpath(path) for _, path in rec.module_locations]

    def own(filename: str | None) -> bool:
        if not filename:
            return False
        real = os.path.realpath(filename)
        return any(real == root or real.startswith(root + os.sep) for root in roots)

    if isinstance(exc, SyntaxError) and own(exc.filename) and exc.lineno:
        return f"{exc.filename}:{exc.lineno}"
    for frame in reversed(traceback.extract_tb(exc.__traceback__)):
        if own(frame.filename):
            return f"{frame.filename}:{frame.lineno} (in {frame.name})"
    return None


__all__ = ["import_origin_problem", "import_verified", "serve_from_digested_files"]
