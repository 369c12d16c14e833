"""Where a module would be imported from, checked against the digested files before anything runs,
the verified finder that then serves those files' hashed bytes only, and the import itself
(``import_verified``): for plugins (``importing``) and for the extensions the core loads by entry point
(``extension_origin``)."""

from __future__ import annotations

import os
from typing import Any

from reyn_core.errors import PluginLoadError, describe_exception, exception_message
from reyn_core.loading.step3_provenance.record import ProvenanceRecord, coverage_problem
from reyn_core.secret_files import path_within


def import_origin_problem(entry_point: str, rec: ProvenanceRecord) -> str | None:
    """Why a module of the plugin would not be imported from the files the digest covers, or None
    when every one would: the entry point's top-level module first, then each other top-level name
    the digest installs (``rec.module_locations``). A name another distribution provides earlier on
    ``sys.path``, or one this process already imported from elsewhere, collides with the plugin's:
    serving the plugin's bytes would take the name from the host, and leaving it to Python's import
    would run bytes nobody hashed. A name whose source file is not digested (only bytecode or an
    extension module of it is listed) is left to the verified finder, which refuses it at import."""
    problem = coverage_problem(entry_point, rec)
    if problem is not None:
        return problem
    top = entry_point.partition(":")[0].strip().split(".")[0]
    locations = dict(rec.module_locations)
    for name in [top, *sorted(n for n in locations if n != top)]:
        expected = locations[name]
        if name == top or os.path.exists(expected):
            problem = _origin_problem(name, expected)
            if problem is not None:
                return problem
    return None


def _origin_problem(top: str, expected: str) -> str | None:
    """Why top-level module ``top`` would not be imported from ``expected`` (its digested folder or
    file), or None."""
    import importlib.util
    import sys

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


RESTART_HINT = (
    "restart the process (the host, `reyn chat`, the MCP server): a module is imported once per process, "
    "so the version it imported first keeps running until then"
)


def imported_under_other_bytes(rec: ProvenanceRecord) -> str | None:
    """Why this process, which already imported modules of the plugin, cannot serve the digested
    bytes, or None. A process serves one version of a plugin (``RI009``, ``RESTART_HINT``).

    A module is imported once per process: a later ``load()`` after an upgrade digests the new files
    while ``sys.modules`` still holds the code compiled from the old ones, which the import would
    return. Each module the verified finder served keeps the sha256 it was compiled from (its
    loader's ``expected_sha256``). Refused, whatever distribution the module was served for (a
    package reinstalled under another distribution name is the same package): a module under one of
    the plugin's import names whose file is now digested with another hash; one no longer among the
    digested files, unless another distribution's file with unchanged bytes (a portion of a namespace
    package); one under an import name the plugin's distribution (or plugin id) no longer has. Files
    are compared by real path (a symlinked ``sys.path`` entry reaches the same file). Then the verified
    finder's check that registering the new files changes no tree a module was imported from
    (``VerifiedFinder.replacement_problem``: a lazy ``"module:attr"`` handler not imported yet).

    Modules the host imported itself, outside any load, carry no such record and are taken as the
    host's own, like ``reyn_core`` (``import_origin_problem`` still checks where they came from)."""
    import sys

    from reyn_core.loading.step4_import.verified_import import VerifiedLoader, trees_of, verified_finder

    trees = {tree.top: tree for tree in trees_of(rec)}
    real: dict[str, dict[str, str]] = {}
    for name, module in list(sys.modules.items()):
        loader = getattr(getattr(module, "__spec__", None), "loader", None)
        if not isinstance(loader, VerifiedLoader):
            continue
        tree = trees.get(name.partition(".")[0])
        if tree is None:
            if loader.distribution == rec.distribution or loader.plugin_id == rec.plugin_id:
                return _stale(name, loader, rec, "no longer one of its import names")
            continue
        if tree.top not in real:
            real[tree.top] = {os.path.realpath(path): sha for path, sha in tree.files.items()}
        digested = real[tree.top].get(os.path.realpath(loader.path))
        if digested == loader.expected_sha256:
            continue
        if digested is None and loader.distribution != tree.distribution and _unchanged(loader):
            continue  # another distribution's portion of a namespace package
        now = f"now digested as sha256 {digested[:12]}…" if digested else "no longer among its files"
        return _stale(name, loader, rec, now)
    problem = verified_finder().replacement_problem(list(trees.values()))
    return None if problem is None else _not_imported(problem, rec)


def _not_imported(problem: str, rec: ProvenanceRecord) -> str:
    return f"{problem}, so {rec.distribution} {rec.version} is not imported; restart the process to load it"


def _stale(name: str, loader: Any, rec: ProvenanceRecord, now: str) -> str:
    return _not_imported(
        f"module {name!r} was already imported in this process from other bytes (sha256 "
        f"{loader.expected_sha256[:12]}… of {loader.distribution}, {now}): this process still runs the "
        f"previous version of {rec.distribution}",
        rec,
    )


def _unchanged(loader: Any) -> bool:
    """Whether the file a verified module was compiled from still has the bytes it was served with."""
    import hashlib

    try:
        with open(loader.path, "rb") as f:
            return hashlib.sha256(f.read()).hexdigest() == loader.expected_sha256
    except OSError:
        return False


def _path_entry(path: str) -> str:
    """`` (sys.path entry ..., the working directory)`` for the entry a shadowing path sits in."""
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
    digested file, read once and hash-checked at import (``verified_import``). ``PluginLoadError``
    (``RI009``) when the finder keeps serving other bytes this process already imported from."""
    from reyn_core.loading.step4_import.verified_import import trees_of, verified_finder

    assert rec is not None
    problem = verified_finder().register(trees_of(rec))
    if problem is not None:  # a load since ``imported_under_other_bytes`` was asked imported it
        raise PluginLoadError("RI009", _not_imported(problem, rec), hint=RESTART_HINT)


def import_verified(rec: ProvenanceRecord, *, group: str = "reyn.plugins") -> Any:
    """The object ``rec.entry_point`` names, imported only from the digested files (every module
    under the plugin's import names, now and later); ``PluginLoadError`` (``RI001``) when importing
    it fails. A plugin's and an extension's entry point (``group``) are imported alike.

    The error's message names the innermost line of the plugin's own files that raised by its path
    inside the distribution (``pkg/helper.py:3 (in <module>)``), and any of its files the exception's
    text names (the verified finder's refusals) the same way, never by a host path: an extension's
    refusal can reach a model (an approval store's, through the gate's ``unavailable``). The host path
    is in its ``traceback``, for the operator. Only ``Exception`` and ``SystemExit`` (a plugin must not
    end the host) become the error: ``KeyboardInterrupt``, a task's cancellation and ``GeneratorExit``
    propagate."""
    from importlib.metadata import EntryPoint

    serve_from_digested_files(rec)
    try:
        return EntryPoint(name=rec.plugin_id, value=rec.entry_point, group=group).load()
    except (Exception, SystemExit) as exc:
        import traceback

        where = _failing_location(exc, rec)
        shown = f" at {where[1]}" if where else ""
        raised = f"raised at {where[0]}\n" if where else ""
        raise PluginLoadError(
            "RI001",
            f"importing {rec.entry_point!r} from {rec.distribution} failed{shown}: "
            + _inside_distribution(describe_exception(exc), rec),
            traceback=raised + "".join(traceback.format_exception(exc)),
        ) from None


def _inside_distribution(text: str, rec: ProvenanceRecord) -> str:
    """``text`` with the folder each digested location is installed in dropped from the paths of the
    plugin's files it names (``/venv/…/site-packages/pkg/mod.py`` → ``pkg/mod.py``)."""
    for _, location in rec.module_locations:
        for base in {os.path.dirname(os.path.abspath(location)), os.path.dirname(os.path.realpath(location))}:
            if base.rstrip(os.sep):  # never a location at the file system's root
                text = text.replace(base.rstrip(os.sep) + os.sep, "")
    return text


def _failing_location(exc: BaseException, rec: ProvenanceRecord | None) -> tuple[str, str] | None:
    """Where in the plugin's own files (the folders or modules its digest covers) ``exc`` was
    raised: the innermost traceback frame there, or where a syntax error in one of them is, as
    ``(host path, path inside the distribution)``, each ``…/mod.py:12 (in func)``. None when no frame
    is the plugin's (e.g. the failure is inside a dependency it imports and nothing of its own is on
    the stack)."""
    import traceback

    if rec is None or not rec.module_locations:
        return None
    roots = [os.path.realpath(path) for _, path in rec.module_locations]

    def inside(filename: str | None) -> str | None:
        """``filename`` relative to the folder holding its digested location, if it is the plugin's."""
        real = os.path.realpath(filename) if filename else None
        for root in roots if real else ():
            if real and path_within(real, root):
                return os.path.relpath(real, os.path.dirname(root)).replace(os.sep, "/")
        return None

    if isinstance(exc, SyntaxError) and exc.lineno and (rel := inside(exc.filename)):
        return f"{exc.filename}:{exc.lineno}", f"{rel}:{exc.lineno}"
    for frame in reversed(traceback.extract_tb(exc.__traceback__)):
        if rel := inside(frame.filename):
            return (
                f"{frame.filename}:{frame.lineno} (in {frame.name})",
                f"{rel}:{frame.lineno} (in {frame.name})",
            )
    return None


__all__ = [
    "RESTART_HINT",
    "imported_under_other_bytes",
    "import_origin_problem",
    "import_verified",
    "serve_from_digested_files",
]
