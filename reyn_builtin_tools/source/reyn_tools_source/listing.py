"""Which files may be read: the provenance record of reyn-core and of each enabled plugin.

A distribution's readable files are exactly the listing of its ``ProvenanceRecord`` (the core's
``reyn_core.host.provenance_for``, the record the loader digests and locks): for a wheel install,
the files its installer's ``RECORD`` lists, each with the hash the record holds; for an editable or
directory install (no ``RECORD`` entry for the sources), the import package's source tree, as the
loader walks and digests it. Each listed path is mapped to a location *from the record itself* (the
import package's recorded folder, else the folder holding the metadata); a model's path is only
ever a key looked up in that mapping, never joined to a folder.

What the record refuses is listed with its reason and never served: a file whose bytes differed
from ``RECORD``'s hash, a file ``RECORD`` does not list inside the distribution's packages, and —
for a plugin — every file, when the distribution's digest no longer equals the digest the load
verified (``ToolOrigin.tree_digest``): then the files on disk are not the code this process runs.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from importlib.metadata import Distribution, PackageNotFoundError, distribution

from reyn_core import ToolContext
from reyn_core.host import ToolRegistry, provenance_for

CORE = "reyn-core"
CORE_ENTRY_POINT = "reyn_core"


def canonical_name(name: str) -> str:
    """A distribution name as PEP 503 compares them: lower case, runs of ``-_.`` as one ``-``."""
    out: list[str] = []
    for ch in name.strip().lower():
        if ch in "-_.":
            if out and out[-1] != "-":
                out.append("-")
        else:
            out.append(ch)
    return "".join(out).strip("-")


@dataclass(frozen=True, slots=True)
class SourceFile:
    """One recorded file: where it lies (from the record) and the sha256 it must have to be served.
    ``problem`` is why it is not served (then ``sha256`` may be None)."""

    path: str
    location: str
    sha256: str | None
    problem: str | None = None


@dataclass(frozen=True, slots=True)
class ReadableDistribution:
    """A distribution whose recorded files the tools serve."""

    name: str
    version: str
    plugins: tuple[str, ...]
    scope: str
    tree_digest: str
    files: Mapping[str, SourceFile] = field(default_factory=dict)
    problems: tuple[str, ...] = ()

    def summary(self) -> dict[str, object]:
        """What ``reyn_src_list`` says about the distribution without listing its files."""
        refused = sum(1 for f in self.files.values() if f.problem)
        out: dict[str, object] = {
            "distribution": self.name,
            "version": self.version,
            "plugins": list(self.plugins),
            "record": "RECORD" if self.scope == "installed" else "source tree (editable install)",
            "files": len(self.files),
        }
        if refused:
            out["refused_files"] = refused
        if self.problems:
            out["problems"] = list(self.problems[:5])
        return out


@dataclass(frozen=True, slots=True)
class Wanted:
    """A distribution to read and what the load knows of it."""

    name: str
    entry_point: str
    plugins: tuple[str, ...]
    load_digest: str | None


def wanted(ctx: ToolContext) -> tuple[list[Wanted], str | None]:
    """reyn-core, then each plugin distribution whose tools this session's registry holds (the
    loader stamps their origin, digest included), by name; plus a note when the host passed no
    registry (``ToolContext.extras["registry"]``), so only the core can be listed."""
    found: dict[str, Wanted] = {CORE: Wanted(CORE, CORE_ENTRY_POINT, (), None)}
    registry = ctx.extras.get("registry")
    if not isinstance(registry, ToolRegistry):
        return list(found.values()), (
            "only reyn-core is listed: the host passed no tool registry "
            "(ToolContext(extras={'registry': registry})), so the enabled plugins are not known"
        )
    for definition in registry.tools():
        origin = definition.origin
        if origin is None or origin.kind != "plugin" or not origin.distribution or not origin.plugin_id:
            continue
        key = canonical_name(origin.distribution)
        prior = found.get(key)
        if prior is None:
            found[key] = Wanted(
                origin.distribution,
                origin.entry_point or origin.plugin_id,
                (origin.plugin_id,),
                origin.tree_digest,
            )
        elif origin.plugin_id not in prior.plugins:
            found[key] = Wanted(
                prior.name, prior.entry_point, (*prior.plugins, origin.plugin_id), prior.load_digest
            )
    return [found[CORE], *(found[k] for k in sorted(found) if k != CORE)], None


_LOCK = threading.Lock()
_MEMO: dict[tuple[str, str | None, str], ReadableDistribution] = {}


def readable(want: Wanted) -> ReadableDistribution:
    """The readable files of ``want``, computed once per process and load digest (each read still
    re-hashes its file, so the memo can only make a file refused, never served unverified)."""
    try:
        dist = distribution(want.name)
    except PackageNotFoundError:
        return ReadableDistribution(
            want.name, "?", want.plugins, "installed", "", problems=("the distribution is not installed",)
        )
    key = (canonical_name(want.name), want.load_digest, os.path.abspath(str(dist.locate_file(""))))
    with _LOCK:
        hit = _MEMO.get(key)
    if hit is not None:
        return hit
    result = _from_record(dist, want)
    with _LOCK:
        _MEMO[key] = result
    return result


def _from_record(dist: Distribution, want: Wanted) -> ReadableDistribution:
    plugin_id = want.plugins[0] if want.plugins else CORE
    record = provenance_for(dist, plugin_id=plugin_id, entry_point=want.entry_point)
    site = os.path.abspath(str(dist.locate_file("")))
    places = dict(record.module_locations)
    mismatched = frozenset(record.record_mismatches)
    stale = want.load_digest is not None and record.tree_digest != want.load_digest
    problems = list(record.problems)
    if stale:
        problems.insert(
            0,
            f"its files changed since this process loaded it (digest {want.load_digest} at load, "
            f"{record.tree_digest} now); nothing is served until the host loads it again",
        )
    files: dict[str, SourceFile] = {}
    for path, sha in record.files:
        location = _location(path, places, site)
        problem = None
        if stale:
            problem = "the distribution changed since it was loaded"
        elif path in mismatched:
            problem = (
                "its bytes differ from the hash the installer's RECORD holds (or RECORD does not list it)"
            )
        files[path] = SourceFile(path, location, None if problem else sha, problem)
    # Files RECORD lists that are missing on disk are mismatches without a listing entry.
    for path in mismatched - files.keys():
        files[path] = SourceFile(path, _location(path, places, site), None, "missing on disk")
    return ReadableDistribution(
        record.distribution,
        record.version,
        want.plugins,
        record.digest_scope,
        record.tree_digest,
        dict(sorted(files.items())),
        tuple(problems),
    )


def _location(path: str, places: Mapping[str, str], site: str) -> str:
    """Where recorded ``path`` lies: under its import package's recorded location when the path
    starts with one (a source-tree record: an editable install's project folder), else under the
    folder holding the metadata. Both come from the record, never from a caller."""
    top, _, rest = path.partition("/")
    place = places.get(top)
    if place is not None and rest and os.path.isdir(place):
        return os.path.join(place, *rest.split("/"))
    if place is not None and not rest and os.path.basename(place) == path:
        return place
    return os.path.join(site, *path.split("/"))


def readable_all(ctx: ToolContext) -> tuple[list[ReadableDistribution], str | None]:
    """Every readable distribution of this session, and the note of ``wanted``."""
    wants, note = wanted(ctx)
    return [readable(w) for w in wants], note


def find(ctx: ToolContext, name: str) -> ReadableDistribution | None:
    """The readable distribution called ``name`` (any spelling PEP 503 treats as equal), or None."""
    wants, _ = wanted(ctx)
    key = canonical_name(name)
    for w in wants:
        if canonical_name(w.name) == key:
            return readable(w)
    return None


def names(ctx: ToolContext) -> Iterable[str]:
    """The names of the readable distributions, for messages."""
    return [w.name for w in wanted(ctx)[0]]
