"""Where a plugin came from, and a digest of exactly what is installed — computed without importing it.

``provenance_for(dist, plugin_id=..., entry_point=...)`` reads a distribution's metadata (RECORD,
PEP 610 ``direct_url.json``; ``top_level.txt`` and entry points only where RECORD lists no module
source), re-hashes its files from disk, checks them against RECORD's own hashes, and returns a
``ProvenanceRecord`` whose ``tree_digest`` is::

    "sha256:" + sha256("reyn-tree-digest-v1\\n"
                       + "".join(f"{path}\\0{sha256_hex}\\n" for path, hex in files))

with ``files`` sorted by path, paths relative to site-packages (so the same wheel in two venvs gives
the same digest). Editable and directory installs whose RECORD does not list the module sources are
digested over the import package's source tree instead (``digest_scope = "source-tree"``).
docs/provenance.md describes every rule and what the digest does and does not prove.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from importlib.metadata import Distribution
from typing import Any, Literal

from reyn_core.jsondata import fields_json
from reyn_core.loading.step3_provenance.digest import hash_file, tree_digest
from reyn_core.loading.step3_provenance.direct_url import SourceKind, source_of
from reyn_core.loading.step3_provenance.installed_files import (
    RecordEntry,
    import_locations,
    is_bytecode,
    is_installer_file,
    parse_record,
    unlisted_files,
)
from reyn_core.loading.step3_provenance.source_walk import walk_source
from reyn_core.loading.step3_provenance.sources import find_sources, module_top, top_level_names
from reyn_core.tool import ToolOrigin

DigestScope = Literal["installed", "source-tree"]
DIGEST_SCOPES: tuple[str, ...] = ("installed", "source-tree")


ORIGIN_FIELDS = ("source_kind", "source_url", "commit", "artifact_sha256", "tree_digest", "digest_scope")
"""Where the code came from and what its digest covers: the fields a provenance record, a locked
plugin and a load report's ``origin`` share, in the order they are written."""


def origin_fields(source: Any) -> dict[str, Any]:
    """``ORIGIN_FIELDS`` of ``source`` (a ``ProvenanceRecord`` or a ``LockedPlugin``), in that order."""
    return {name: getattr(source, name) for name in ORIGIN_FIELDS}


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
    """``(top-level import name, absolute path)`` of the package folder or module file of every
    import name the digested files install (``import_locations``; for a ``source-tree`` digest, also
    each declared name's source tree): the verified finder serves these names, and only from there
    (``RI009``)."""

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
        """JSON-ready form (``reyn plugins show --json``): every field but ``module_locations``."""
        return fields_json(self, omit=("module_locations",))


def coverage_problem(entry_point: str, rec: ProvenanceRecord) -> str | None:
    """Why the digest does not cover the entry point's top-level module (so its bytes were never
    hashed), or None when it does."""
    top = entry_point.partition(":")[0].strip().split(".")[0]
    if top in dict(rec.module_locations):
        return None
    return (
        f"the digest of {rec.distribution} does not cover import package {top!r} (its files "
        "were not found), so where it would be imported from cannot be verified"
    )


def unverified(
    rec: ProvenanceRecord, *, entry_point: str | None = None, itself: bool = False
) -> list[tuple[str, str]]:
    """Why ``rec`` is not fully hashed, as ``(code, message)`` in the loader's words, in the order the
    loader refuses them; empty when its digest stands for exactly the bytes that would be imported.

    ``RI009``: the digest does not cover ``entry_point``'s module (asked only when ``entry_point`` is
    given); ``RP002``: installed files differ from RECORD (the first five named); ``RP005``: the
    digest may be incomplete (the first three reasons). ``itself=True`` words them for a message
    that already names the distribution ("its digest"). The one rule for the loader's step 3
    (``check_provenance``), a worker's ``plugin_from_record`` and an extension's import."""
    found: list[tuple[str, str]] = []
    problem = None if entry_point is None else coverage_problem(entry_point, rec)
    if problem is not None:
        who = f"plugin {rec.plugin_id!r} ({rec.distribution} {rec.version})"
        found.append(("RI009", f"{who} is not imported: {problem}"))
    mismatches = rec.record_mismatches
    if mismatches:
        shown = ", ".join(mismatches[:5]) + (" …" if len(mismatches) > 5 else "")
        of = "" if itself else f" of {rec.distribution}"
        found.append(("RP002", f"{len(mismatches)} installed file(s){of} differ from its RECORD: {shown}"))
    if rec.problems:
        digest = "its digest" if itself else f"the digest of {rec.distribution}"
        found.append(("RP005", f"{digest} may be incomplete: " + "; ".join(rec.problems[:3])))
    return found


def provenance_for(dist: Distribution, *, plugin_id: str, entry_point: str) -> ProvenanceRecord:
    """The origin record and tree digest of ``dist``; never imports the plugin's code.

    ``entry_point`` is the entry point's value (``"pkg.module"`` or ``"pkg.module:attr"``); its
    top-level package decides whether RECORD covers the code that will be imported. Every file is
    read and hashed on every call: nothing stored stands in for its bytes.
    """
    site = os.path.abspath(str(dist.locate_file("")))
    source = source_of(dist)
    problems: list[str] = list(source.problems)
    record_text = dist.read_text("RECORD")
    if record_text is None:
        entries: list[RecordEntry] = []
        problems.append(
            "the distribution has no RECORD; its files cannot be checked against the installer's hashes"
        )
    else:
        entries, record_problems = parse_record(record_text, site)
        problems += record_problems

    files: dict[str, str] = {}
    mismatches: list[str] = []
    for e in entries:
        if is_bytecode(e.rel) or (e.rel.endswith("/RECORD") and is_installer_file(e.rel)):
            continue  # RECORD has no hash of itself
        try:
            actual = hash_file(e.abspath)
        except FileNotFoundError:
            mismatches.append(e.rel)
            continue
        except OSError as exc:
            mismatches.append(e.rel)
            problems.append(f"cannot read {e.rel}: {exc.strerror or exc}")
            continue
        if e.algorithm is not None and e.expected_hex is not None:
            check = actual if e.algorithm == "sha256" else rehash(e.abspath, e.algorithm)
            if check != e.expected_hex:
                mismatches.append(e.rel)
        if not is_installer_file(e.rel):
            files[e.rel] = actual
    for rel, path in unlisted_files(entries, site):
        try:
            files[rel] = hash_file(path)
        except OSError as exc:
            problems.append(f"cannot read {rel}: {exc.strerror or exc}")
        mismatches.append(rel)

    # every import name RECORD installs, derived from its files (bytecode too): the names the
    # verified finder serves, whatever metadata the wheel ships
    installed = import_locations(e.rel for e in entries)
    locations = {name: os.path.join(site, rel) for name, rel in installed.items()}
    scope: DigestScope = "installed"
    if source.kind == "editable" or module_top(entry_point) not in installed:
        # the code is not in RECORD: find the declared names' source trees, digest and serve them
        scope = "source-tree"
        declared = top_level_names(dist, entry_point)[1]
        found, missing = find_sources(declared, entries, site, source)
        for name in missing:
            problems.append(
                f"the source of import package {name!r} was not found; the digest does not cover it"
            )
        for name, location in sorted(found.items()):
            locations[name] = os.path.abspath(location)
            for rel, path in walk_source(name, location):
                try:
                    files[rel] = hash_file(path)
                except OSError as exc:
                    problems.append(f"cannot read {path}: {exc.strerror or exc}")

    listing = tuple(sorted(files.items()))
    name, version = name_and_version(dist)
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


def rehash(path: str, algorithm: str) -> str | None:
    try:
        return hash_file(path, algorithm)
    except OSError:
        return None


def name_and_version(dist: Distribution) -> tuple[str, str]:
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
    "DIGEST_SCOPES",
    "ORIGIN_FIELDS",
    "DigestScope",
    "ProvenanceRecord",
    "coverage_problem",
    "origin_fields",
    "provenance_for",
    "unverified",
]
