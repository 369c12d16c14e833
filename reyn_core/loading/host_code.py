"""Where the host's code comes from: every file and folder Python could run in the host on this load
or the next, read from the sources Python imports from — never a list of known places.

A confined process that could write one of them would run its code in the host, unconfined, at the
next import: so no write root may equal, contain or lie inside any of them (the one rule,
``reyn_sandbox.protected_problem``). The sources:

- each entry of ``sys.path`` (a module or ``.pth`` planted there runs in the host), but the working
  directory, which ``python -m`` puts first and which is usually the workspace (docs/security.md);
- the Python installation (``sys.prefix`` and the others);
- what those folders reach beyond themselves, read from one listing of each: a link's target
  (``flit install -s``), the folders a ``.pth`` file or an ``.egg-link`` names, the folders
  setuptools' editable finders (``__editable___*_finder.py``) map modules to — ``pip install -e``
  of a flat layout puts the package on no ``sys.path`` entry;
- what an installed distribution in those folders puts elsewhere: the files its ``RECORD`` (an
  egg's ``installed-files.txt``) lists outside its folder, read for a distribution outside the
  Python installation (a ``--user`` install's console scripts; inside it, the installation holds
  them), and the project folder of an editable install that maps its modules by none of the above.
  A distribution whose file list or project cannot be read is said (``HostCode.unknown``: the load's
  ``RC014``), not silently left out. Not every ``RECORD``: in a venv of 170 distributions they are
  megabytes, read at every load, and what they list inside an import path folder is covered by it;
- every module imported so far (``sys.modules``) with a file: its top-level package's folder (or its
  file), and every folder a package's ``__path__`` searches (a namespace package's portions);
- each meta-path finder's mapping where it keeps one (setuptools' ``MAPPING`` and ``NAMESPACES``,
  the ``editables`` project's redirections): a list of known finders, the second-best answer — a
  finder of another kind is still covered by its distribution's project folder and the modules it
  has loaded.

A path inside another one of the list is left out: a write root equal to, inside or containing it
is equal to, inside or containing the outer one too, which names the clash. So the list stays
short, which every confined call checks its write roots against.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from reyn_core.secret_files import path_within as _within

IMPORT_PATH = "an entry of the host's import path"
PYTHON = "the Python installation"

# One RECORD row's path (up to its first comma; a quoted row is read by csv), per line.
_RECORD_PATH = re.compile(r"^([^,\n]*)", re.M)


@dataclass(frozen=True, slots=True)
class HostCode:
    """Where the host's code comes from (``host_code``)."""

    paths: dict[str, str]
    """``{real path: what it is}``, a path inside another of them left out."""
    unknown: tuple[str, ...] = ()
    """One sentence per installed distribution whose code could lie where none of ``paths`` is: its
    list of installed files, or an editable install's project, cannot be read. The load reports
    them (``RC014``)."""


def host_code(*, working_directory: bool = False) -> HostCode:
    """Where the host's code comes from (this module's docstring); the working directory too when
    it is on the import path and ``working_directory`` is true (isolated plugins' grants, whose
    write roots lie outside the workspace). Computed anew on each call: it reads the file system."""
    found: dict[str, str] = {}
    unknown: list[str] = []
    here = None if working_directory else os.path.realpath(os.getcwd())
    for entry in sys.path:
        if not isinstance(entry, str):  # a host may put anything there; the import system skips it
            continue
        path = os.path.realpath(entry or os.curdir)
        if path != here and os.path.exists(path):
            found.setdefault(path, IMPORT_PATH)
    for prefix in (sys.prefix, sys.exec_prefix, sys.base_prefix, sys.base_exec_prefix):
        found.setdefault(os.path.realpath(prefix), PYTHON)
    installation = [path for path, what in found.items() if what == PYTHON]
    for located, what in _listed_code([p for p, w in found.items() if w == IMPORT_PATH], installation):
        if located is None:
            unknown.append(what)
        else:
            found.setdefault(located, what)
    for path, what in (*_imported_code(), *_finder_code()):
        found.setdefault(path, what)
    return HostCode(_outermost(found), tuple(unknown))


def _outermost(found: Mapping[str, str]) -> dict[str, str]:
    """``found`` without the paths that lie inside another of its paths (in its order)."""
    paths = set(found)
    kept: dict[str, str] = {}
    for path, what in found.items():
        parent = os.path.dirname(path)
        while parent not in paths and parent != os.path.dirname(parent):
            parent = os.path.dirname(parent)
        if parent not in paths or parent == path:
            kept[path] = what
    return kept


# ---------------------------------------------------------------- what the import path's folders hold


def _listed_code(folders: list[str], installation: list[str]) -> Iterator[tuple[str | None, str]]:
    """What each folder of the import path holds that reaches beyond it: links, the folders its
    ``.pth`` files and setuptools' editable finders name, legacy ``.egg-link`` projects, and what
    its distributions install elsewhere (``_distribution``). One listing per folder; a path of None
    is a distribution whose code cannot be located (its sentence)."""
    for folder in folders:
        try:
            with os.scandir(folder) as listing:
                entries = list(listing)
        except OSError:  # a zip file, or a folder this user cannot list (nor can Python's import)
            continue
        mapping: set[str] = set()  # the names of the files here that map code elsewhere
        for entry in entries:
            name = entry.name
            if entry.is_symlink():
                yield os.path.realpath(entry.path), f"code linked into the import path at {entry.path}"
            found: list[tuple[str, str]] = []
            if name.endswith(".pth"):
                what = f"a folder {entry.path} adds to the host's import path"
                found = [(path, what) for path in _pth_folders(entry.path, folder)]
            elif name.startswith("__editable__") and name.endswith("_finder.py"):
                found = [
                    (path, f"the code of module {module!r} (an editable install's finder maps it)")
                    for module, path in _finder_file_mapping(entry.path).items()
                ]
            elif name.endswith(".egg-link"):
                what = f"the project an editable install links to ({entry.path})"
                found = [(path, what) for path in _pth_folders(entry.path, folder, first_line=True)]
            if found:
                mapping.add(name)
                yield from found
        inside = any(_within(folder, prefix) for prefix in installation)
        for entry in entries:
            if entry.name.endswith((".dist-info", ".egg-info")):
                try:
                    yield from _distribution(entry.path, folder, read_record=not inside, mapping=mapping)
                except (OSError, ValueError) as exc:  # a metadata file unreadable, or not UTF-8
                    yield None, f"the metadata of {entry.path} cannot be read ({exc})"


def _distribution(
    meta: str, site: str, *, read_record: bool, mapping: set[str]
) -> Iterator[tuple[str | None, str]]:
    """Where one installed distribution (its metadata folder ``meta`` in ``site``) puts code beyond
    ``site``: the files its ``RECORD`` (an egg's ``installed-files.txt``) lists outside ``site`` —
    read for a distribution outside the Python installation (a ``--user`` install's console
    scripts; inside it, the installation holds them) — and, for an editable install whose RECORD
    lists none of ``mapping`` (the files of ``site`` that map code elsewhere: a ``.pth`` path, a
    finder), its project folder (PEP 610's ``direct_url.json``). A list or a project that cannot be
    read is said (a path of None)."""
    from importlib.metadata import Distribution

    from reyn_core.loading.step3_provenance.direct_url import source_of

    name = os.path.basename(meta).split("-", 1)[0]
    if not (read_record or os.path.exists(os.path.join(meta, "direct_url.json"))):
        return
    dist = Distribution.at(meta)
    # PEP 610: a wheel installed from a file has a direct_url.json too; only ``dir_info.editable`` is
    # an editable install
    source = source_of(dist)
    editable = source.kind == "editable"
    for problem in source.problems:  # whether it is editable, and where its project is, unknown
        yield None, f"distribution {name!r} ({meta}): {problem}"
    if not (editable or read_record):
        return
    # as importlib.metadata reads them: RECORD; an egg's installed-files.txt (relative to its
    # metadata), else the SOURCES.txt of a project's own egg-info (relative to the project)
    record = dist.read_text("RECORD")
    if record is not None:
        paths, base = _record_paths(record), site
    elif (listed := dist.read_text("installed-files.txt")) is not None:
        paths, base = listed.splitlines(), meta
    elif (listed := dist.read_text("SOURCES.txt")) is not None:
        paths, base = listed.splitlines(), site
    else:
        yield None, f"distribution {name!r} ({meta}) lists no installed files (no RECORD)"
        return
    tops: set[str] = set()
    for rel in paths:
        path = os.path.normpath(os.path.join(base, rel.strip().replace("\\", "/")))
        if not _within(path, site):
            yield os.path.realpath(path), f"a file distribution {name!r} installed"
        elif path != site:
            tops.add(os.path.relpath(path, site).split(os.sep, 1)[0])
    mapped = not mapping.isdisjoint(tops)
    if editable and not mapped:
        project = _editable_project(source.url)
        if project is None:
            yield None, f"editable distribution {name!r} ({meta}) names no project folder Reyn can read"
        else:
            yield (
                project,
                f"the project of editable distribution {name!r} (its modules' mapping is not readable)",
            )


def _record_paths(text: str) -> list[str]:
    """The path of each RECORD row (CSV; a row quoted for a comma in its path is read as CSV)."""
    if '"' not in text:
        return [p for p in _RECORD_PATH.findall(text) if p]
    import csv
    import io

    return [row[0] for row in csv.reader(io.StringIO(text)) if row and row[0]]


def _finder_file_mapping(file: str) -> dict[str, str]:
    """setuptools' editable finder's ``MAPPING`` (import name → folder), read without running it."""
    from reyn_core.loading.step3_provenance.sources import literal_mapping

    try:
        with open(file, encoding="utf-8") as f:
            found = literal_mapping(f.read())
    except (OSError, ValueError):
        return {}
    return {
        str(k): os.path.realpath(v)
        for k, v in (found or {}).items()
        if isinstance(v, str) and os.path.isabs(v)
    }


def _pth_folders(file: str, site: str, *, first_line: bool = False) -> list[str]:
    """The folders a ``.pth`` file's path lines add to the import path (``import`` lines skipped),
    real and existing; with ``first_line``, its first line only (an ``.egg-link``)."""
    try:
        with open(file, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except (OSError, ValueError):
        return []
    found = []
    lines = lines[:1] if first_line else lines
    for line in lines:
        line = line.strip()
        if line and not line.startswith(("#", "import ", "import\t")):
            folder = os.path.realpath(os.path.join(site, line))
            if os.path.isdir(folder):
                found.append(folder)
    return found


def _editable_project(url: str | None) -> str | None:
    from reyn_core.loading.step3_provenance.direct_url import file_url_path

    project = file_url_path(url) if url else None
    return os.path.realpath(project) if project is not None else None


# ---------------------------------------------------------------- imported modules and finders


def _imported_code() -> Iterator[tuple[str, str]]:
    real = _RealPaths()
    for name, module in list(sys.modules.items()):
        # the module's own names, read without its __getattr__ (a lazy module's runs code)
        names = getattr(module, "__dict__", None)
        if not isinstance(names, dict):
            continue
        spec = names.get("__spec__")
        origin = getattr(spec, "origin", None) if spec is not None else None
        located = spec is not None and getattr(spec, "has_location", False) and isinstance(origin, str)
        if "." not in name and located:
            file = real(str(origin))
            package = getattr(spec, "submodule_search_locations", None) is not None
            yield (os.path.dirname(file) if package else file), f"the code of module {name!r} (imported)"
        for folder in _search_path(names.get("__path__"), origin if located else None):
            yield real(folder), f"the code of package {name!r} (imported)"


class _RealPaths:
    """``os.path.realpath`` for many paths sharing folders: each folder is resolved once (realpath
    reads every component of every path). Held for one computation only, never across calls."""

    def __init__(self) -> None:
        self.known: dict[str, str] = {}

    def __call__(self, path: str) -> str:
        if ".." in path.split(os.sep):  # a link before ".." resolves first: realpath's own walk
            return os.path.realpath(path)
        path = os.path.abspath(path)
        found = self.known.get(path)
        if found is None:
            parent, name = os.path.split(path)
            found = os.path.join(self(parent), name) if name else path
            if name and os.path.islink(found):
                found = os.path.realpath(found)
            self.known[path] = found
        return found


def _search_path(found: Any, origin: str | None) -> list[str]:
    """The folders a package's ``__path__`` (``found``) searches beyond its own (a namespace
    package's portions, a path a package extended), as strings."""
    own = os.path.dirname(origin) if origin else None
    try:
        return [p for p in found if isinstance(p, str) and p and p != own] if found is not None else []
    except TypeError:  # a module's attribute of any kind: only an iterable of strings is read
        return []


def _finder_code() -> Iterator[tuple[str, str]]:
    for finder in list(sys.meta_path):
        module = sys.modules.get(getattr(finder, "__module__", "") or "")
        for holder in (finder, module):
            for attr in ("MAPPING", "_redirections"):
                for name, path in _str_items(getattr(holder, attr, None)):
                    yield os.path.realpath(path), f"code a meta-path finder maps {name!r} to"
            for name, paths in _str_items(getattr(holder, "NAMESPACES", None), many=True):
                yield os.path.realpath(paths), f"code a meta-path finder maps namespace {name!r} to"


def _str_items(value: object, *, many: bool = False) -> Iterator[tuple[str, str]]:
    if not isinstance(value, dict):
        return
    for key, item in list(value.items()):
        items = item if many and isinstance(item, list) else [item]
        for path in items:
            if isinstance(path, str) and os.path.isabs(path):
                yield str(key), path


__all__ = ["IMPORT_PATH", "PYTHON", "HostCode", "host_code"]
