"""Extensions the core loads by entry point (the isolation backend, the tracing add-on, an approval
store), trusted by the distribution they come from and the bytes they are, never by where they are
declared.

An extension group names the distribution its entry point must come from (``reyn.isolation`` →
reyn-isolation, ``reyn.tracing`` → reyn-otel, the approval store ``postgres`` → reyn-approvals-postgres);
a group that names none (another approval store) accepts any distribution that is not a plugin. A
distribution that declares ``reyn.plugins`` never provides an extension. An entry point from any other
distribution is ignored for selection and reported (``RD006``, naming it), never imported.

The chosen extension is imported like a plugin: its provenance is computed (``provenance_for``: every
file against RECORD, a tree digest), its module must resolve to the digested files
(``import_origin_problem``), and it is served only from those bytes (``serve_from_digested_files``).
Any failure raises ``ExtensionError`` and nothing of it runs; the caller fails closed (``RJ012``,
``RC012``, the approval store's refusals). What was verified is kept for the load report
(``extensions``, shown by ``reyn plugins audit``).
"""

from __future__ import annotations

import dataclasses
import importlib.metadata as md
import sys
import threading
from dataclasses import dataclass
from typing import Any

from reyn_core.loading.diagnostics import Diagnostic

PLUGIN_GROUP = "reyn.plugins"


class ExtensionError(LookupError):
    """No extension can be used: none from the allowed distribution, or its files did not verify."""

    def __init__(self, message: str, *, missing: bool) -> None:
        super().__init__(message)
        self.missing = missing
        """True when no allowed distribution declares it (False: one does, and it was refused)."""


@dataclass(frozen=True, slots=True)
class ExtensionOrigin:
    """An extension imported from verified bytes: what the load report and ``reyn plugins audit`` show."""

    group: str
    name: str
    entry_point: str
    distribution: str
    version: str
    source_kind: str
    tree_digest: str

    def to_dict(self) -> dict[str, str]:
        """JSON-ready form."""
        return dataclasses.asdict(self)


@dataclass(frozen=True, slots=True)
class _Claim:
    distribution: str
    version: str
    value: str
    dist: md.Distribution
    is_plugin: bool


_LOCK = threading.Lock()
_ORIGINS: dict[tuple[str, str], ExtensionOrigin] = {}
_VERIFIED: dict[tuple[str, str], Any] = {}
"""What this load already verified and imported (the object): scanned and hashed once per load."""
_IGNORED: dict[tuple[str, str], tuple[str, ...]] = {}


def begin_load() -> None:
    """Forget what earlier loads looked up: the next report shows this load's lookups only."""
    with _LOCK:
        _ORIGINS.clear()
        _VERIFIED.clear()
        _IGNORED.clear()


def load_extension(group: str, name: str, *, distribution: str | None) -> Any:
    """The object entry point ``name`` of ``group`` names, imported only from the verified files of
    ``distribution`` (None: of the one non-plugin distribution declaring it); ``ExtensionError`` why not."""
    with _LOCK:
        done = _VERIFIED.get((group, name))
    if done is not None:  # every isolated plugin of a load asks for the backend: scanned and hashed once
        return done
    allowed, ignored = _claims(group, name, distribution)
    with _LOCK:
        _IGNORED[(group, name)] = tuple(ignored)
        _ORIGINS.pop((group, name), None)
    if not allowed:
        required = distribution or "a distribution that is not a Reyn plugin"
        raise ExtensionError(
            f"no installed {required} provides the entry point {name!r} of the group {group!r}"
            + (f" ({'; '.join(ignored)})" if ignored else ""),
            missing=True,
        )
    if len(allowed) > 1:
        shown = ", ".join(f"{c.distribution} {c.version} ({c.value})" for c in allowed)
        raise ExtensionError(
            f"{len(allowed)} installed distributions provide the entry point {name!r} of the group "
            f"{group!r} ({shown}); uninstall all but one",
            missing=False,
        )
    [claim] = allowed
    origin, obj = _verified_import(group, name, claim)
    with _LOCK:
        _ORIGINS[(group, name)] = origin
        _VERIFIED[(group, name)] = obj
    return obj


def loaded_extensions() -> tuple[ExtensionOrigin, ...]:
    """The extensions this load imported from verified bytes, sorted by group and name."""
    with _LOCK:
        return tuple(_ORIGINS[k] for k in sorted(_ORIGINS))


def ignored_diagnostics() -> list[Diagnostic]:
    """``RD006`` for each entry point this load ignored because of the distribution declaring it."""
    with _LOCK:
        found = [(k, v) for k, v in sorted(_IGNORED.items())]
    return [Diagnostic.make("RD006", why) for _, notes in found for why in notes]


def _normal(name: str) -> str:
    return name.lower().replace("-", "_").replace(".", "_")


def _claims(group: str, name: str, distribution: str | None) -> tuple[list[_Claim], list[str]]:
    """Who declares the entry point (the first distribution of a name on ``sys.path`` only, as for
    imports): the allowed claims, and why each other one is ignored."""
    from reyn_core.loading.step2_discovery.discovery import parse_entry_points
    from reyn_core.loading.step3_provenance.record import name_and_version

    allowed: list[_Claim] = []
    ignored: list[str] = []
    seen: set[str] = set()
    for dist in md.distributions(path=list(sys.path)):
        text = dist.read_text("entry_points.txt")
        if not text or group not in text:
            continue
        dist_name, version = name_and_version(dist)
        if _normal(dist_name) in seen:
            continue
        seen.add(_normal(dist_name))
        parser = parse_entry_points(text)
        if parser is None or not parser.has_section(group) or not parser.has_option(group, name):
            continue
        claim = _Claim(
            dist_name, version, parser.get(group, name).strip(), dist, parser.has_section(PLUGIN_GROUP)
        )
        if claim.is_plugin:
            why = (
                f"it is a Reyn plugin (it declares {PLUGIN_GROUP!r}), and a plugin never provides an "
                "extension"
            )
        elif distribution is not None and _normal(dist_name) != _normal(distribution):
            why = f"only {distribution} may provide it"
        else:
            allowed.append(claim)
            continue
        ignored.append(
            f"{dist_name} {version} declares the entry point {name!r} = {claim.value!r} of the group "
            f"{group!r}; it is ignored and never imported: {why}"
        )
    return allowed, ignored


def _verified_import(group: str, name: str, claim: _Claim) -> tuple[ExtensionOrigin, Any]:
    from reyn_core.errors import describe_exception
    from reyn_core.loading.step3_provenance.record import provenance_for
    from reyn_core.loading.step4_import.import_origin import import_origin_problem, serve_from_digested_files

    who = f"{claim.distribution} {claim.version}"

    def refuse(why: str) -> ExtensionError:
        return ExtensionError(f"the entry point {name!r} of {who} is not imported: {why}", missing=False)

    ep = md.EntryPoint(name=name, value=claim.value, group=group)
    if ep.pattern.fullmatch(claim.value) is None:
        raise refuse(f"its value {claim.value!r} is malformed")
    try:  # every file re-hashed (no digest cache): the cache folder is not the extension's trust root
        rec = provenance_for(claim.dist, plugin_id=f"{group}:{name}", entry_point=claim.value, cache=None)
    except Exception as exc:
        raise refuse(f"its provenance cannot be computed ({describe_exception(exc)})") from None
    if rec.record_mismatches:
        shown = ", ".join(rec.record_mismatches[:5]) + (" …" if len(rec.record_mismatches) > 5 else "")
        raise refuse(f"{len(rec.record_mismatches)} installed file(s) differ from its RECORD: {shown}")
    if rec.problems:
        raise refuse("its digest may be incomplete: " + "; ".join(rec.problems[:3]))
    problem = import_origin_problem(claim.value, rec)
    if problem is not None:
        raise refuse(problem)
    try:
        serve_from_digested_files(rec)
        obj = ep.load()
    except (Exception, SystemExit) as exc:
        raise refuse(f"importing it failed: {describe_exception(exc)}") from None
    origin = ExtensionOrigin(
        group, name, claim.value, rec.distribution, rec.version, rec.source_kind, rec.tree_digest
    )
    return origin, obj


__all__ = [
    "ExtensionError",
    "ExtensionOrigin",
    "begin_load",
    "ignored_diagnostics",
    "load_extension",
    "loaded_extensions",
]
