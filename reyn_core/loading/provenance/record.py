"""Where a plugin came from, and a digest of exactly what is installed — computed without importing it.

``provenance_for(dist, plugin_id=..., entry_point=...)`` reads a distribution's metadata (RECORD,
PEP 610 ``direct_url.json``, ``top_level.txt``, entry points), re-hashes its files from disk, checks
them against RECORD's own hashes, and returns a ``ProvenanceRecord`` whose ``tree_digest`` is::

    "sha256:" + sha256( "reyn-tree-digest-v1\\n" + "".join(f"{path}\\0{sha256_hex}\\n" for path, hex in files) )

with ``files`` sorted by path, paths relative to site-packages (so the same wheel in two venvs gives
the same digest). Editable and directory installs whose RECORD does not list the module sources are
digested over the import package's source tree instead (``digest_scope = "source-tree"``).
docs/provenance.md describes every rule and what the digest does and does not prove.
"""

from __future__ import annotations

import ast
import base64
import binascii
import csv
import hashlib
import io
import json
import os
import posixpath
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from importlib.metadata import Distribution
from pathlib import Path
from typing import Any, Literal
from urllib.parse import unquote, urlsplit

from reyn_core.loading.provenance.cache import DigestCache, default_cache_dir, hash_file, is_sha256_hex
from reyn_core.tool import ToolOrigin

DIGEST_VERSION = "reyn-tree-digest-v1"
"""The first line of the canonical listing. A change to the listing rules gets a new tag."""

SourceKind = Literal["index", "wheel", "directory", "editable", "vcs"]
DigestScope = Literal["installed", "source-tree"]
SOURCE_KINDS: tuple[str, ...] = ("index", "wheel", "directory", "editable", "vcs")
DIGEST_SCOPES: tuple[str, ...] = ("installed", "source-tree")

# Written by the installer, not the wheel: they differ between two installs of the same wheel.
INSTALLER_FILES = frozenset({"RECORD", "INSTALLER", "REQUESTED", "direct_url.json"})
VCS_DIRS = frozenset({".git", ".hg", ".svn", ".bzr"})
# Skipped in a source tree: tool caches and build output (``build``/``dist`` only when they are not
# Python packages themselves, since a package may well have a ``build`` subpackage).
CACHE_DIRS = frozenset(
    {"__pycache__", ".eggs", ".tox", ".nox", ".mypy_cache", ".pytest_cache", ".ruff_cache"}
)
BUILD_DIRS = frozenset({"build", "dist"})
BYTECODE_SUFFIXES = (".pyc", ".pyo")


@dataclass(frozen=True, slots=True)
class ProvenanceRecord:
    """The origin of one plugin: its distribution, where that came from, and a digest of its files.

    ``files`` is the sorted canonical listing ``(relative path, sha256 hex)`` the digest is computed
    over; ``record_mismatches`` names files whose bytes differ from RECORD's hash, files RECORD lists
    that are missing on disk, and files found in the distribution's own packages that RECORD does
    not list. ``problems`` are other reasons the digest may not cover what will be imported (a source
    tree that cannot be found, an unreadable file, a malformed ``direct_url.json``).
    """

    plugin_id: str
    entry_point: str
    distribution: str
    version: str
    source_kind: SourceKind
    source_url: str | None
    commit: str | None
    artifact_sha256: str | None
    tree_digest: str
    digest_scope: DigestScope
    files: tuple[tuple[str, str], ...]
    record_mismatches: tuple[str, ...] = ()
    problems: tuple[str, ...] = ()
    module_locations: tuple[tuple[str, str], ...] = ()
    """``(top-level import name, absolute path)`` of the package folder or module file the digest
    covers for each import name: the loader imports the plugin only from there (``RI009``)."""

    @property
    def short_digest(self) -> str:
        """The first 12 hex digits of the tree digest, for listings."""
        return self.tree_digest.removeprefix("sha256:")[:12]

    @property
    def is_editable(self) -> bool:
        """True for editable and directory installs (``provenance.allow_editable`` governs them)."""
        return self.source_kind in ("editable", "directory")

    def to_origin(self, api_version: int | None) -> ToolOrigin:
        """The ``ToolOrigin`` stamped on each tool this plugin registers."""
        return ToolOrigin(
            kind="plugin",
            plugin_id=self.plugin_id,
            entry_point=self.entry_point,
            distribution=self.distribution,
            version=self.version,
            source_kind=self.source_kind,
            source_url=self.source_url,
            commit=self.commit,
            artifact_sha256=self.artifact_sha256,
            tree_digest=self.tree_digest,
            api_version=api_version,
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (``reyn plugins show --json``)."""
        return {
            "plugin_id": self.plugin_id,
            "entry_point": self.entry_point,
            "distribution": self.distribution,
            "version": self.version,
            "source_kind": self.source_kind,
            "source_url": self.source_url,
            "commit": self.commit,
            "artifact_sha256": self.artifact_sha256,
            "tree_digest": self.tree_digest,
            "digest_scope": self.digest_scope,
            "files": [list(f) for f in self.files],
            "record_mismatches": list(self.record_mismatches),
            "problems": list(self.problems),
        }


def tree_digest(files: Iterable[tuple[str, str]]) -> str:
    """The digest of a listing of ``(relative path, sha256 hex)``: the one definition of the algorithm.

    The listing is sorted here, so callers may pass it in any order. Paths never contain NUL and the
    hash is fixed-length hex, so the encoding is unambiguous even for paths containing newlines.
    """
    h = hashlib.sha256()
    h.update(DIGEST_VERSION.encode() + b"\n")
    for path, hexdigest in sorted(files):
        h.update(path.encode("utf-8", "surrogateescape") + b"\0" + hexdigest.encode("ascii") + b"\n")
    return "sha256:" + h.hexdigest()


# --------------------------------------------------------------------------- RECORD


@dataclass(frozen=True, slots=True)
class _RecordEntry:
    rel: str  # normalised, relative to site-packages, forward slashes
    abspath: str
    algorithm: str | None
    expected_hex: str | None


def _parse_record(text: str, site: str) -> tuple[list[_RecordEntry], list[str]]:
    """RECORD rows inside site-packages (others, like console scripts, are dropped) and problems."""
    entries: list[_RecordEntry] = []
    problems: list[str] = []
    for row in csv.reader(io.StringIO(text)):
        if not row or not row[0]:
            continue
        rel = _inside(site, row[0])
        if rel is None:
            continue
        algorithm = expected = None
        if len(row) > 1 and row[1]:
            algorithm, _, b64 = row[1].partition("=")
            try:
                expected = base64.urlsafe_b64decode(b64 + "=" * (-len(b64) % 4)).hex()
            except (binascii.Error, ValueError):
                problems.append(f"RECORD has a malformed hash for {rel}")
            if algorithm not in hashlib.algorithms_guaranteed:
                problems.append(f"RECORD uses an unknown hash algorithm {algorithm!r} for {rel}")
                algorithm = expected = None
        entries.append(_RecordEntry(rel, os.path.join(site, rel), algorithm, expected))
    return entries, problems


def _inside(site: str, path: str) -> str | None:
    """``path`` relative to ``site`` with forward slashes, or None when it lies outside."""
    norm = posixpath.normpath(path.replace("\\", "/"))
    if not (
        norm.startswith("/") or norm == ".." or norm.startswith("../") or (len(norm) > 1 and norm[1] == ":")
    ):
        return None if norm == "." else norm  # the usual case: a plain relative path, no I/O
    full = os.path.normpath(os.path.join(site, path))
    try:
        if os.path.commonpath([site, full]) != site:
            return None
    except ValueError:  # different drives on Windows
        return None
    rel = os.path.relpath(full, site)
    return None if rel == "." else rel.replace(os.sep, "/")


def _is_bytecode(rel: str) -> bool:
    return rel.endswith(BYTECODE_SUFFIXES) or "__pycache__" in rel.split("/")


def _is_installer_file(rel: str) -> bool:
    parts = rel.split("/")
    return len(parts) == 2 and parts[0].endswith((".dist-info", ".egg-info")) and parts[1] in INSTALLER_FILES


# --------------------------------------------------------------------------- direct_url.json


@dataclass(frozen=True, slots=True)
class _Source:
    kind: SourceKind
    url: str | None = None
    commit: str | None = None
    artifact_sha256: str | None = None
    problems: tuple[str, ...] = ()


def _source_of(dist: Distribution) -> _Source:
    """The PEP 610 source of an install; no ``direct_url.json`` means an index install."""
    text = dist.read_text("direct_url.json")
    if text is None:
        return _Source("index")
    try:
        data = json.loads(text)
        if not isinstance(data, dict):
            raise ValueError("not an object")
    except ValueError as exc:
        return _Source("index", problems=(f"direct_url.json is malformed ({exc}); source unknown",))
    url = data.get("url") if isinstance(data.get("url"), str) else None
    vcs = data.get("vcs_info")
    if isinstance(vcs, dict):
        commit = vcs.get("commit_id")
        return _Source("vcs", url, commit if isinstance(commit, str) else None)
    info = data.get("dir_info")
    if isinstance(info, dict):
        return _Source("editable" if info.get("editable") is True else "directory", url)
    archive = data.get("archive_info")
    if isinstance(archive, dict):
        return _Source("wheel", url, artifact_sha256=_archive_sha256(archive))
    return _Source(
        "index", url, problems=("direct_url.json names no known source (vcs_info, dir_info, archive_info)",)
    )


def _archive_sha256(archive: Mapping[str, Any]) -> str | None:
    hashes = archive.get("hashes")
    if isinstance(hashes, dict) and isinstance(hashes.get("sha256"), str):
        value = hashes["sha256"].lower()
        return value if is_sha256_hex(value) else None
    legacy = archive.get("hash")
    if isinstance(legacy, str) and legacy.startswith("sha256="):
        value = legacy.removeprefix("sha256=").lower()
        return value if is_sha256_hex(value) else None
    return None


def _file_url_path(url: str | None) -> Path | None:
    if not url:
        return None
    parts = urlsplit(url)
    if parts.scheme != "file" or parts.netloc not in ("", "localhost"):
        return None
    return Path(unquote(parts.path))


# --------------------------------------------------------------------------- import packages


def _top_level_names(dist: Distribution, entry_point: str) -> tuple[str, list[str]]:
    """The entry point's top-level module name, and every top-level name the distribution declares."""
    ep_top = _module_top(entry_point)
    names: list[str] = [ep_top] if ep_top else []
    for value in _plugin_entry_values(dist.read_text("entry_points.txt") or ""):
        top = _module_top(value)
        if top and top not in names:
            names.append(top)
    for line in (dist.read_text("top_level.txt") or "").splitlines():
        name = line.strip().replace("/", ".").split(".")[0]
        if name.isidentifier() and name not in names:
            names.append(name)
    return ep_top, names


def _plugin_entry_values(text: str) -> Iterator[str]:
    """Values in the ``[reyn.plugins]`` section of ``entry_points.txt`` (a plain INI reading)."""
    in_group = False
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("["):
            in_group = line == "[reyn.plugins]"
        elif in_group and "=" in line and not line.startswith(("#", ";")):
            yield line.partition("=")[2].strip()


def _module_top(value: str) -> str:
    module = value.split(":", 1)[0].strip()
    top = module.split(".", 1)[0].strip()
    return top if top.isidentifier() else ""


def _record_has_module(entries: Iterable[_RecordEntry], top: str) -> bool:
    """Whether RECORD installs ``top`` (package dir, ``top.py`` or an extension module) in site-packages."""
    for e in entries:
        first, _, rest = e.rel.partition("/")
        if rest and first == top and not _is_bytecode(e.rel):
            return True
        if not rest and (
            first == f"{top}.py" or (first.startswith(f"{top}.") and first.endswith((".so", ".pyd")))
        ):
            return True
    return False


_MAPPING_LINE = re.compile(r"^MAPPING\s*(?::[^=\n]*)?=\s*(.+?)\s*$", re.M)


def _editable_mapping(entries: Iterable[_RecordEntry]) -> dict[str, str]:
    """``MAPPING`` of setuptools' editable finder modules listed in RECORD, read without running them."""
    mapping: dict[str, str] = {}
    for e in entries:
        if "/" in e.rel or not (e.rel.startswith("__editable__") and e.rel.endswith("_finder.py")):
            continue
        try:
            with open(e.abspath, encoding="utf-8") as f:
                text = f.read()
        except (OSError, ValueError):
            continue
        found = _literal_mapping(text)
        if found is not None:
            mapping.update({str(k): str(v) for k, v in found.items()})
    return mapping


def _literal_mapping(text: str) -> dict[Any, Any] | None:
    """The last top-level ``MAPPING = {...}`` literal of a module's text (one line: fast; else parsed)."""
    for match in reversed(list(_MAPPING_LINE.finditer(text))):
        try:
            value = ast.literal_eval(match.group(1))
        except (ValueError, SyntaxError):
            break  # a multi-line literal: parse the module properly
        return value if isinstance(value, dict) else None
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    result = None
    for node in tree.body:
        target = value_node = None
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value_node = node.targets[0], node.value
        elif isinstance(node, ast.AnnAssign):
            target, value_node = node.target, node.value
        if isinstance(target, ast.Name) and target.id == "MAPPING" and value_node is not None:
            try:
                literal = ast.literal_eval(value_node)
            except ValueError:
                continue
            result = literal if isinstance(literal, dict) else result
    return result


def _pth_dirs(entries: Iterable[_RecordEntry], site: str) -> list[str]:
    """Directories named by path lines of ``.pth`` files listed in RECORD (``import`` lines are skipped)."""
    dirs: list[str] = []
    for e in entries:
        if "/" in e.rel or not e.rel.endswith(".pth"):
            continue
        try:
            with open(e.abspath, encoding="utf-8") as f:
                lines = f.read().splitlines()
        except (OSError, ValueError):
            continue
        for line in lines:
            line = line.strip()
            if not line or line.startswith(("#", "import ", "import\t")):
                continue
            dirs.append(os.path.join(site, line))
    return dirs


def _find_sources(
    names: Iterable[str], entries: list[_RecordEntry], site: str, source: _Source
) -> tuple[dict[str, str], list[str]]:
    """Where each top-level import name's source lives, in the order Python's import would look.

    site-packages (the folder holding the metadata) comes first: the path finder runs before the
    editable finder on ``sys.meta_path``. Then setuptools' editable ``MAPPING``, then folders named
    by ``.pth`` files, then the ``dir_info`` project folder and its ``src/``.
    """
    mapping = _editable_mapping(entries)
    folders = _pth_dirs(entries, site)
    project = _file_url_path(source.url) if source.kind in ("editable", "directory") else None
    if project is not None:
        folders += [str(project), os.path.join(project, "src")]
    found: dict[str, str] = {}
    missing: list[str] = []
    for name in names:
        location = _module_in(site, name, regular_only=True)
        if location is None and name in mapping and os.path.exists(mapping[name]):
            location = mapping[name]
        for base in folders:
            if location is not None:
                break
            location = _module_in(base, name)
        if location is not None:
            found[name] = location
        else:
            missing.append(name)
    return found, missing


def _module_in(base: str, name: str, *, regular_only: bool = False) -> str | None:
    package = os.path.join(base, name)
    if os.path.isdir(package) and (not regular_only or os.path.isfile(os.path.join(package, "__init__.py"))):
        return package
    module = package + ".py"
    return module if os.path.isfile(module) else None


def _walk_source(top: str, location: str) -> Iterator[tuple[str, str]]:
    """``(path as it would be installed, file)`` for a package's source tree or a single module."""
    if os.path.isfile(location):
        yield os.path.basename(location), location
        return
    seen: set[str] = set()
    for dirpath, dirnames, filenames in os.walk(location, followlinks=True):
        real = os.path.realpath(dirpath)
        if real in seen:  # a symlink loop
            dirnames[:] = []
            continue
        seen.add(real)
        dirnames[:] = sorted(d for d in dirnames if not _skip_source_dir(dirpath, d))
        rel_dir = "" if dirpath == location else os.path.relpath(dirpath, location).replace(os.sep, "/") + "/"
        for filename in sorted(filenames):
            if not filename.endswith(BYTECODE_SUFFIXES):
                yield f"{top}/{rel_dir}{filename}", os.path.join(dirpath, filename)


def _skip_source_dir(parent: str, name: str) -> bool:
    if name in VCS_DIRS or name in CACHE_DIRS or name.endswith(".egg-info"):
        return True
    return name in BUILD_DIRS and not os.path.exists(os.path.join(parent, name, "__init__.py"))


def _unlisted_files(entries: list[_RecordEntry], site: str) -> Iterator[tuple[str, str]]:
    """Files inside the distribution's own regular packages that RECORD does not list."""
    listed = {e.rel for e in entries}
    packages = sorted(
        {e.rel.split("/", 1)[0] for e in entries if e.rel.count("/") == 1 and e.rel.endswith("/__init__.py")}
    )
    for pkg in packages:
        if pkg.endswith((".dist-info", ".egg-info", ".data")):
            continue
        for rel, path in _walk_source(pkg, os.path.join(site, pkg)):
            if rel not in listed:
                yield rel, path


# --------------------------------------------------------------------------- provenance_for


def provenance_for(
    dist: Distribution,
    *,
    plugin_id: str,
    entry_point: str,
    cache: DigestCache | None = None,
) -> ProvenanceRecord:
    """The origin record and tree digest of ``dist``; never imports the plugin's code.

    ``entry_point`` is the entry point's value (``"pkg.module"`` or ``"pkg.module:attr"``); its
    top-level package decides whether RECORD covers the code that will be imported. ``cache=None``
    re-hashes every file; pass ``DigestCache.default()`` for warm starts.
    """
    site = os.path.abspath(str(dist.locate_file("")))
    source = _source_of(dist)
    problems: list[str] = list(source.problems)
    record_text = dist.read_text("RECORD")
    if record_text is None:
        entries: list[_RecordEntry] = []
        problems.append(
            "the distribution has no RECORD; its files cannot be checked against the installer's hashes"
        )
    else:
        entries, record_problems = _parse_record(record_text, site)
        problems += record_problems

    hasher: Callable[[str | Path], str] = cache.sha256 if cache is not None else hash_file
    files: dict[str, str] = {}
    mismatches: list[str] = []
    for e in entries:
        if _is_bytecode(e.rel) or (e.rel.endswith("/RECORD") and _is_installer_file(e.rel)):
            continue  # RECORD has no hash of itself
        try:
            actual = hasher(e.abspath)
        except FileNotFoundError:
            mismatches.append(e.rel)
            continue
        except OSError as exc:
            mismatches.append(e.rel)
            problems.append(f"cannot read {e.rel}: {exc.strerror or exc}")
            continue
        if e.algorithm is not None and e.expected_hex is not None:
            check = actual if e.algorithm == "sha256" else _rehash(e.abspath, e.algorithm)
            if check != e.expected_hex:
                mismatches.append(e.rel)
        if not _is_installer_file(e.rel):
            files[e.rel] = actual
    for rel, path in _unlisted_files(entries, site):
        try:
            files[rel] = hasher(path)
        except OSError as exc:
            problems.append(f"cannot read {rel}: {exc.strerror or exc}")
        mismatches.append(rel)

    ep_top, names = _top_level_names(dist, entry_point)
    scope: DigestScope = "installed"
    locations: dict[str, str] = {}
    for name in names:
        installed = _installed_location(entries, site, name)
        if installed is not None:
            locations[name] = installed
    if source.kind == "editable" or not (ep_top and _record_has_module(entries, ep_top)):
        scope = "source-tree"
        found, missing = _find_sources(names, entries, site, source)
        for name in missing:
            problems.append(
                f"the source of import package {name!r} was not found; the digest does not cover it"
            )
        for name, location in sorted(found.items()):
            locations[name] = os.path.abspath(location)
            for rel, path in _walk_source(name, location):
                try:
                    files[rel] = hasher(path)
                except OSError as exc:
                    problems.append(f"cannot read {path}: {exc.strerror or exc}")
    if cache is not None:
        cache.save()

    listing = tuple(sorted(files.items()))
    name, version = _name_and_version(dist)
    return ProvenanceRecord(
        plugin_id=plugin_id,
        entry_point=entry_point,
        distribution=name,
        version=version,
        source_kind=source.kind,
        source_url=source.url,
        commit=source.commit,
        artifact_sha256=source.artifact_sha256,
        tree_digest=tree_digest(listing),
        digest_scope=scope,
        files=listing,
        record_mismatches=tuple(sorted(set(mismatches))),
        problems=tuple(problems),
        module_locations=tuple(sorted(locations.items())),
    )


def _installed_location(entries: Iterable[_RecordEntry], site: str, top: str) -> str | None:
    """Where RECORD installs import name ``top`` in site-packages: its package folder, ``top.py``
    or an extension module; None when RECORD does not install it."""
    module = None
    for e in entries:
        first, _, rest = e.rel.partition("/")
        if rest and first == top and not _is_bytecode(e.rel):
            return os.path.join(site, top)
        if not rest and (
            first == f"{top}.py" or (first.startswith(f"{top}.") and first.endswith((".so", ".pyd")))
        ):
            module = os.path.join(site, first)
    return module


def _rehash(path: str, algorithm: str) -> str | None:
    try:
        return hash_file(path, algorithm)
    except OSError:
        return None


def _name_and_version(dist: Distribution) -> tuple[str, str]:
    """``Name`` and ``Version`` from the METADATA headers, without a full email parse (warm-start cost)."""
    name = version = None
    for line in (dist.read_text("METADATA") or dist.read_text("PKG-INFO") or "").splitlines():
        if not line.strip():
            break
        key, sep, value = line.partition(":")
        if sep and key == "Name" and name is None:
            name = value.strip()
        elif sep and key == "Version" and version is None:
            version = value.strip()
    if name is None or version is None:
        meta = dist.metadata
        name = name or (meta["Name"] if meta is not None else None)
        version = version or (meta["Version"] if meta is not None else None)
    return str(name or "<unknown>"), str(version or "<unknown>")


__all__ = [
    "DIGEST_VERSION",
    "DigestCache",
    "ProvenanceRecord",
    "default_cache_dir",
    "provenance_for",
    "tree_digest",
]
