"""Only hashed bytes execute: the import finder that serves a verified plugin's modules.

Once provenance has digested a plugin's files, every module under its top-level import names — the
entry point, its package's ``__init__``, and handler modules imported lazily at call time
(``"module:attr"`` handlers) — is served by ``VerifiedFinder``, first on ``sys.meta_path``. For each
module it reads the source file's bytes once, compares their sha256 with the hash the digest listed
for that file, and compiles *those bytes*: what runs is exactly what was hashed, whatever the digest
cache said without reading, and a file changed after the digest is refused, not executed.

Nothing else under a verified name is ever found: ``__pycache__`` is never consulted (a planted
``.pyc`` with the source's mtime and size, a PEP 552 checked- or unchecked-hash ``.pyc``, ``opt-1``
/ ``opt-2`` variants), a sourceless ``.pyc``, an extension module (``*.so`` / ``.pyd``) or a file
added after the digest is refused with an ``ImportError`` naming the file, and a name with no file at
all is a plain ``ModuleNotFoundError`` (so ``try: import optional`` keeps working). The package's
``__path__`` is ignored: submodules come from the digested tree only. Compiled code may be kept in
Reyn's private bytecode cache, keyed by the source's sha256 (``bytecode_cache``).
"""

from __future__ import annotations

import hashlib
import importlib.abc
import importlib.machinery
import importlib.util
import os
import pathlib
import sys
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import CodeType, ModuleType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from reyn_core.loading.step3_provenance.record import ProvenanceRecord

__all__ = ["VerifiedFinder", "VerifiedLoader", "VerifiedTree", "trees_of", "verified_finder"]


@dataclass(frozen=True, slots=True)
class VerifiedTree:
    """The digested files of one top-level import name of one plugin.

    ``location`` is the package folder or module file the digest covers (absolute); ``files`` maps
    the absolute path of each digested file under it to the sha256 hex the digest listed.
    """

    top: str
    plugin_id: str
    distribution: str
    location: str
    files: Mapping[str, str]
    folders: frozenset[str]
    is_package: bool
    """True when ``location`` is a folder (a regular or namespace package), False for a module file."""


def trees_of(rec: ProvenanceRecord) -> list[VerifiedTree]:
    """One ``VerifiedTree`` per top-level import name of ``rec`` (``rec.module_locations``).

    ``rec.files`` lists paths relative to the folder holding each location (site-packages, or the
    source tree's parent for ``source-tree`` digests), so joining them with that folder gives the
    absolute path the import would read.
    """
    trees = []
    for top, location in rec.module_locations:
        location = os.path.abspath(location)
        base = os.path.dirname(location)
        single = os.path.basename(location) if not os.path.isdir(location) else None
        files: dict[str, str] = {}
        for rel, hexdigest in rec.files:
            if rel == single or (single is None and rel.startswith(top + "/")):
                files[os.path.normpath(os.path.join(base, *rel.split("/")))] = hexdigest
        folders = {location}
        for path in files:
            parent = os.path.dirname(path)
            while len(parent) > len(location) and parent not in folders:
                folders.add(parent)
                parent = os.path.dirname(parent)
        trees.append(
            VerifiedTree(
                top, rec.plugin_id, rec.distribution, location, files, frozenset(folders), single is None
            )
        )
    return trees


class VerifiedLoader(importlib.machinery.SourceFileLoader):
    """Loads one digested source file: read once, hash checked, compiled from those bytes.

    A ``SourceFileLoader`` for everything around the code (``get_source``, ``is_package``,
    ``importlib.resources`` via its ``FileReader``), but ``get_code`` never looks at bytecode.
    """

    def __init__(self, fullname: str, path: str, expected_sha256: str, tree: VerifiedTree) -> None:
        super().__init__(fullname, path)
        self.expected_sha256 = expected_sha256
        self.plugin_id = tree.plugin_id
        self.distribution = tree.distribution

    def get_code(self, fullname: str) -> CodeType:
        """The module's code, compiled from the bytes read now, refused unless they are the digested bytes."""
        from reyn_core.loading.step4_import.bytecode_cache import compile_source

        path = self.get_filename(fullname)
        try:
            data = self.get_data(path)
        except OSError as exc:
            raise ImportError(
                f"{path} of plugin {self.plugin_id!r} cannot be read: {exc.strerror or exc}",
                name=fullname,
                path=path,
            ) from None
        actual = hashlib.sha256(data).hexdigest()
        if actual != self.expected_sha256:
            raise ImportError(
                f"{path} of plugin {self.plugin_id!r} ({self.distribution}) changed after its digest "
                f"was computed (sha256 {actual[:12]}…, digested {self.expected_sha256[:12]}…); it was "
                "not executed. Restart the process to load the new version (a pinned or locked plugin "
                "is then refused until the pin or lock is updated)",
                name=fullname,
                path=path,
            )
        return compile_source(data, path, actual)


class _NamespaceLoader(importlib.abc.Loader):
    """A folder of digested files without ``__init__.py``: a package with no code of its own."""

    def __init__(self, folder: str) -> None:
        self.folder = folder

    def get_resource_reader(self, name: str) -> Any:
        """``importlib.resources`` reads the folder's data files (as for any namespace package)."""
        from importlib.readers import MultiplexedPath
        from importlib.resources.abc import TraversableResources

        folder = self.folder

        class _Reader(TraversableResources):
            def files(self) -> Any:
                return MultiplexedPath(pathlib.Path(folder))

        return _Reader()

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return None

    def exec_module(self, module: ModuleType) -> None:
        return None


class VerifiedFinder(importlib.abc.MetaPathFinder):
    """Serves every module under a registered top-level name from that name's digested files only."""

    def __init__(self) -> None:
        self._trees: dict[str, dict[str, VerifiedTree]] = {}
        self._lock = threading.Lock()

    def register(self, trees: Sequence[VerifiedTree]) -> str | None:
        """Serve these trees from now on, and return None; or register none of them and return why
        (``replacement_problem``): a tree this process imported a module of is never replaced by
        other bytes. A tree replaces the one its distribution registered for the same name before (a
        later load of the same bytes, a reinstall elsewhere once nothing of it is imported); trees of
        other distributions for the same name stay (portions of one namespace package), the latest
        registered searched first."""
        with self._lock:
            problem = self._replacement_problem(trees)
            if problem is not None:
                return problem
            for tree in trees:
                portions = self._trees.setdefault(tree.top, {})
                portions.pop(tree.distribution, None)
                self._trees[tree.top] = {tree.distribution: tree, **portions}
        return None

    def replacement_problem(self, trees: Sequence[VerifiedTree]) -> str | None:
        """Why registering ``trees`` would change the bytes served under a name this process already
        imported a module of, or None. A process serves one version of a plugin: once a module of a
        registered tree is imported (``sys.modules``), a tree with other source bytes for it — a
        changed, added or removed ``.py`` file of the same distribution, or another distribution's
        file at the same path — would serve its lazily imported modules (a ``"module:attr"``
        handler) to every registry of the process, a pinned one included. Compared by real path, so
        the same files reached through a symlinked ``sys.path`` entry are the same tree."""
        with self._lock:
            return self._replacement_problem(trees)

    def _replacement_problem(self, trees: Sequence[VerifiedTree]) -> str | None:
        for tree in trees:
            for old in self._trees.get(tree.top, {}).values():
                changed = _changed_source(old, tree)
                imported = changed and _imported_module(old)
                if changed and imported:
                    return (
                        f"module {imported!r} of {old.distribution} is imported in this process, and "
                        f"{changed} now has other bytes than the ones it was served with: this process "
                        f"keeps serving the version it imported first"
                    )
        return None

    def find_spec(
        self, fullname: str, path: Sequence[str] | None = None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        """The spec of a digested module, None for names no verified plugin owns; raises otherwise."""
        top, _, rest = fullname.partition(".")
        portions = self._trees.get(top)
        if portions is None:
            return None
        parts = rest.split(".") if rest else []
        refused: list[tuple[VerifiedTree, str]] = []
        for tree in list(portions.values()):
            spec = _spec_in(tree, fullname, parts)
            if spec is not None:
                return spec
            refused += [(tree, found) for found in _undigested(tree, parts)]
        if refused:
            tree, found = refused[0]
            raise ImportError(
                f"module {fullname!r} of plugin {tree.plugin_id!r} is not imported: {found} is not one "
                f"of the source files digested for {tree.distribution}. Reyn runs a verified plugin's "
                "modules only from the source files it hashed: bytecode (.pyc), extension modules "
                "and files added after the digest are never executed",
                name=fullname,
                path=found,
            )
        raise ModuleNotFoundError(f"No module named {fullname!r}", name=fullname)


def _spec_in(tree: VerifiedTree, fullname: str, parts: list[str]) -> importlib.machinery.ModuleSpec | None:
    if not tree.is_package:
        # a module whose source is not digested (only its bytecode or native code is) is never served
        served = not parts and tree.location in tree.files
        return _file_spec(tree, fullname, tree.location, None) if served else None
    folder = os.path.join(tree.location, *parts)
    init = os.path.join(folder, "__init__.py")
    if init in tree.files:
        return _file_spec(tree, fullname, init, folder)
    if parts:
        module = os.path.join(tree.location, *parts[:-1], parts[-1] + ".py")
        if module in tree.files:
            return _file_spec(tree, fullname, module, None)
    if folder in tree.folders:
        spec = importlib.machinery.ModuleSpec(fullname, _NamespaceLoader(folder), is_package=True)
        spec.submodule_search_locations = [folder]
        return spec
    return None


def _file_spec(
    tree: VerifiedTree, fullname: str, path: str, package: str | None
) -> importlib.machinery.ModuleSpec:
    loader = VerifiedLoader(fullname, path, tree.files[path], tree)
    spec = importlib.util.spec_from_file_location(
        fullname, path, loader=loader, submodule_search_locations=[package] if package else None
    )
    assert spec is not None
    return spec


def _undigested(tree: VerifiedTree, parts: list[str]) -> list[str]:
    """Files on disk that the normal import system would have used for this name, none digested."""
    if not tree.is_package:
        if parts:
            return []
        stem = tree.location[: -len(".py")] if tree.location.endswith(".py") else tree.location
        parent, name = os.path.dirname(tree.location), os.path.basename(stem)
    elif parts:
        parent, name = os.path.join(tree.location, *parts[:-1]), parts[-1]
    else:
        parent, name = os.path.dirname(tree.location), os.path.basename(tree.location)
    folder = os.path.join(parent, name)
    # An extension module is named even when the digest lists it: native code is never loaded.
    native = [os.path.join(parent, name + s) for s in (*importlib.machinery.EXTENSION_SUFFIXES, ".pyd")]
    found = [c for c in dict.fromkeys(native) if os.path.isfile(c)]
    candidates = [os.path.join(folder, "__init__.py"), os.path.join(folder, "__init__.pyc")]
    candidates += [os.path.join(parent, name + ".py"), os.path.join(parent, name + ".pyc")]
    found += [c for c in candidates if os.path.isfile(c) and c not in tree.files]
    cache = os.path.join(parent, "__pycache__")
    try:
        names = os.listdir(cache)
    except OSError:
        names = []
    found += sorted(os.path.join(cache, f) for f in names if f.startswith(name + ".") and f.endswith(".pyc"))
    return found


def _sources(tree: VerifiedTree) -> dict[str, str]:
    """The real path of each ``.py`` file of ``tree`` (what the finder can serve) → its sha256."""
    return {os.path.realpath(path): sha for path, sha in tree.files.items() if path.endswith(".py")}


def _changed_source(old: VerifiedTree, new: VerifiedTree) -> str | None:
    """A source file (its path inside the distribution) that ``new`` would serve other bytes for, or
    not serve, than ``old``: any difference for the same distribution, a shared path with other bytes
    for another one (disjoint files are portions of one namespace package). None when there is none."""
    a, b = _sources(old), _sources(new)
    if old.distribution == new.distribution:
        changed = set(a) ^ set(b)
    else:
        changed = set()
    changed |= {path for path in a.keys() & b.keys() if a[path] != b[path]}
    if not changed:
        return None
    path = min(changed)
    base = os.path.dirname(os.path.realpath(old.location if path in a else new.location))
    return os.path.relpath(path, base).replace(os.sep, "/")


def _imported_module(tree: VerifiedTree) -> str | None:
    """A module under ``tree``'s name that the finder served for its distribution and that this
    process still imports (``sys.modules``), or None."""
    for name, module in list(sys.modules.items()):
        if name != tree.top and not name.startswith(tree.top + "."):
            continue
        loader = getattr(getattr(module, "__spec__", None), "loader", None)
        if isinstance(loader, VerifiedLoader) and loader.distribution == tree.distribution:
            return name
    return None


_FINDER: VerifiedFinder | None = None
_FINDER_LOCK = threading.Lock()


def verified_finder() -> VerifiedFinder:
    """The process's ``VerifiedFinder``, placed first on ``sys.meta_path`` (again, if something was
    inserted before it since the last load)."""
    global _FINDER
    with _FINDER_LOCK:
        if _FINDER is None:
            _FINDER = VerifiedFinder()
        meta: list[Any] = sys.meta_path
        if not meta or meta[0] is not _FINDER:
            if _FINDER in meta:
                meta.remove(_FINDER)
            meta.insert(0, _FINDER)
        return _FINDER
