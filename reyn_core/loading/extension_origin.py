"""Extensions the core loads by entry point (the isolation backend, the tracing add-on, an approval
store), trusted by the distribution they come from and the bytes they are, never by where they are
declared.

An extension group names the distribution its entry point must come from (``reyn.isolation`` →
reyn-isolation, ``reyn.tracing`` → reyn-otel, the approval stores ``sqlite`` → reyn-approvals-sqlite and
``postgres`` → reyn-approvals-postgres);
a group that names none (another approval store) accepts any distribution that is not a plugin. A
distribution that declares ``reyn.plugins`` never provides an extension. An entry point from any other
distribution is ignored for selection and reported (``RD006``, naming it), never imported.

The chosen extension is imported like a plugin: its provenance is computed (``provenance_for``: every
file against RECORD, a tree digest), its module must resolve to the digested files
(``import_origin_problem``), and it is served only from those bytes (``serve_from_digested_files``).
Under ``[lock] enforce`` the load's ``pin`` compares its provenance with the lock's
``[extensions."<group>:<name>"]`` before anything of it is imported: unlocked or drifted, it is
refused. Any failure raises ``ExtensionError`` and nothing of it runs; the caller fails closed
(``RJ012``, ``RC012``, the approval store's ``RC011``).

``reyn plugins lock`` and ``audit`` describe an extension without importing it: their session
(``imports``) verifies and reports it, and imports only the groups it names (the isolation backend,
which runs the isolated plugins). A refusal's hint follows its cause (``ExtensionError.hint``).

What one load looked up is kept by that load's ``ExtensionSession`` (``LoadSession.extensions``),
never in this module: two loads in one process (threads, a host loading two profiles) each verify
and report their own extensions (``LoadReport.extensions``, shown by ``reyn plugins audit``).
"""

from __future__ import annotations

import importlib.metadata as md
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from reyn_core.loading.diagnostics import Diagnostic

if TYPE_CHECKING:
    from reyn_core.loading.step3_provenance.record import ProvenanceRecord

PLUGIN_GROUP = "reyn.plugins"


class ExtensionError(LookupError):
    """No extension can be used: none from the allowed distribution, or its files did not verify."""

    def __init__(
        self, message: str, *, missing: bool, refused_by_lock: bool = False, traceback: str | None = None
    ) -> None:
        super().__init__(message)
        self.traceback = traceback
        """Importing it raised: where and the traceback, with host paths, for the operator's diagnostic
        only (the message names no host path: an approval store's refusal can reach a model)."""
        self.missing = missing
        """True when no allowed distribution declares it (False: one does, and it was refused)."""
        self.refused_by_lock = refused_by_lock
        """True when its files verified and the enforced lock refused it (not in the lock, drifted
        from it, or the lock cannot be read)."""

    def hint(self, install: str) -> str:
        """How to fix it, by why it is refused: ``install`` (how to install it) when nothing provides
        it; review and relock when the lock refused it; else reinstall (its files or its import)."""
        if self.missing:
            return install
        if self.refused_by_lock:
            return (
                "the enforced lock refuses it (the message says why): reinstall the version the lock has, "
                "or review the installed one and run `reyn plugins lock`"
            )
        return (
            "it is installed but cannot be used (the message says why: its files differ from its RECORD, "
            "several distributions provide it, or importing it failed): reinstall it from the wheelhouse "
            "it came from, or uninstall the extra distributions"
        )


def refusal_hint(exc: BaseException, code: str) -> str:
    """The hint of ``code`` (the diagnostic of a missing or refused extension) for ``exc``: the
    code's own (how to install it) unless ``exc`` is an ``ExtensionError`` that says otherwise."""
    from reyn_core.loading.diagnostics import CODES

    install = CODES[code].hint
    return exc.hint(install) if isinstance(exc, ExtensionError) else install


@dataclass(frozen=True, slots=True)
class ExtensionOrigin:
    """An extension imported from verified bytes (or, in a record-only session, whose files verified):
    what the load report and ``reyn plugins audit`` show."""

    group: str
    name: str
    entry_point: str
    distribution: str
    version: str
    source_kind: str
    tree_digest: str
    provenance: ProvenanceRecord = field(repr=False, compare=False)
    """Every file and its hash: what ``reyn plugins lock`` pins and ``reyn plugins audit`` compares."""

    @property
    def key(self) -> str:
        """``<group>:<name>``, its key in the lock's ``[extensions]``."""
        return f"{self.group}:{self.name}"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (without the file listing)."""
        from reyn_core.jsondata import fields_json

        return fields_json(self, omit=("provenance",))


@dataclass(frozen=True, slots=True)
class _Claim:
    distribution: str
    version: str
    value: str
    dist: md.Distribution
    is_plugin: bool


Pin = Callable[["ProvenanceRecord"], "str | None"]
"""Why an extension whose files verified must still not be imported (the lock), or None."""


class ExtensionSession:
    """The extensions one load looked up: each verified and imported at most once per load (every
    isolated plugin asks for the backend; the first answer, object or refusal, is reused, not
    re-hashed), what the load report shows, and the ``pin`` each is checked against before import
    (the enforced lock; None: nothing beyond its own RECORD). A plain class, like ``LoadSession``."""

    __slots__ = ("_done", "_ignored", "_lock", "_locked_out", "_origins", "imports", "pin")

    def __init__(self, pin: Pin | None = None, *, imports: frozenset[str] | None = None) -> None:
        self.pin = pin
        self.imports = imports
        """The groups this load may import (None: every group). Any other group is record-only: its
        files are verified and its record reported (``loaded``), and nothing of it is imported
        (``reyn plugins lock`` and ``audit`` describe an extension, they never run it to do so). In a
        record-only session every extension whose files verified is reported, refused or not."""
        self._lock = threading.Lock()  # a load's steps may look up from worker threads
        self._origins: dict[tuple[str, str], ExtensionOrigin] = {}
        self._done: dict[tuple[str, str], Any] = {}  # the object, or the ExtensionError refusing it
        self._ignored: dict[tuple[str, str], tuple[str, ...]] = {}
        self._locked_out: set[tuple[str, str]] = set()  # refused by the pin

    def load(self, group: str, name: str, *, distribution: str | None) -> Any:
        """The object entry point ``name`` of ``group`` names, imported only from the verified files
        of ``distribution`` (None: of the one non-plugin distribution declaring it) and only if the
        pin allows it; ``ExtensionError`` why not."""
        key = (group, name)
        with self._lock:
            known, done = key in self._done, self._done.get(key)
        if not known:
            try:
                done = self._look_up(group, name, distribution)
            except ExtensionError as exc:
                done = exc
            with self._lock:
                self._done[key] = done
        if isinstance(done, ExtensionError):
            with self._lock:
                by_lock = key in self._locked_out
            raise ExtensionError(
                str(done), missing=done.missing, refused_by_lock=by_lock, traceback=done.traceback
            )
        return done

    def _look_up(self, group: str, name: str, distribution: str | None) -> Any:
        allowed, ignored = _claims(group, name, distribution)
        with self._lock:
            self._ignored[(group, name)] = tuple(ignored)
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
        origin, obj = _verified_import(group, name, claim, self._recording_pin(group, name, claim.value))
        with self._lock:
            self._origins[(group, name)] = origin
        return obj

    def _recording_pin(self, group: str, name: str, value: str) -> Pin | None:
        """The pin, noting what it refuses (the hint follows the cause), which a record-only session
        precedes by reporting the verified record (the lock or audit shows it even when the pin
        refuses it) and follows by importing nothing of a group it does not import."""
        if self.imports is None and self.pin is None:
            return None

        def pin(record: ProvenanceRecord) -> str | None:
            if self.imports is not None:
                origin = ExtensionOrigin(
                    group, name, value, record.distribution, record.version, record.source_kind,
                    record.tree_digest, record,
                )  # fmt: skip
                with self._lock:
                    self._origins[(group, name)] = origin
            problem = self.pin(record) if self.pin is not None else None
            if problem is not None:
                with self._lock:
                    self._locked_out.add((group, name))
            elif self.imports is not None and group not in self.imports:
                problem = "this command only records it (its files verified), it never imports it"
            return problem

        return pin

    def loaded(self) -> tuple[ExtensionOrigin, ...]:
        """The extensions this load imported from verified bytes (a record-only session: whose files
        verified), sorted by group and name."""
        with self._lock:
            return tuple(self._origins[k] for k in sorted(self._origins))

    def ignored_diagnostics(self) -> list[Diagnostic]:
        """``RD006`` for each entry point this load ignored because of the distribution declaring it."""
        with self._lock:
            found = sorted(self._ignored.items())
        return [Diagnostic.make("RD006", why) for _, notes in found for why in notes]


def _claims(group: str, name: str, distribution: str | None) -> tuple[list[_Claim], list[str]]:
    """Who declares the entry point (the first distribution of a name on ``sys.path`` only, as for
    imports): the allowed claims, and why each other one is ignored."""
    from reyn_core.loading.step2_discovery.discovery import name_key, parse_entry_points
    from reyn_core.loading.step3_provenance.record import name_and_version

    allowed: list[_Claim] = []
    ignored: list[str] = []
    seen: set[str] = set()
    for dist in md.distributions(path=list(sys.path)):
        text = dist.read_text("entry_points.txt")
        if not text or group not in text:
            continue
        dist_name, version = name_and_version(dist)
        if name_key(dist_name) in seen:
            continue
        seen.add(name_key(dist_name))
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
        elif distribution is not None and name_key(dist_name) != name_key(distribution):
            why = f"only {distribution} may provide it"
        else:
            allowed.append(claim)
            continue
        ignored.append(
            f"{dist_name} {version} declares the entry point {name!r} = {claim.value!r} of the group "
            f"{group!r}; it is ignored and never imported: {why}"
        )
    return allowed, ignored


def _verified_import(group: str, name: str, claim: _Claim, pin: Pin | None) -> tuple[ExtensionOrigin, Any]:
    from reyn_core.errors import PluginLoadError, describe_exception
    from reyn_core.loading.step3_provenance.record import provenance_for, unverified
    from reyn_core.loading.step4_import.import_origin import (
        import_origin_problem,
        import_verified,
        imported_under_other_bytes,
    )

    who = f"{claim.distribution} {claim.version}"

    def refuse(why: str) -> ExtensionError:
        return ExtensionError(f"the entry point {name!r} of {who} is not imported: {why}", missing=False)

    ep = md.EntryPoint(name=name, value=claim.value, group=group)
    if ep.pattern.fullmatch(claim.value) is None:
        raise refuse(f"its value {claim.value!r} is malformed")
    try:
        rec = provenance_for(claim.dist, plugin_id=f"{group}:{name}", entry_point=claim.value)
    except Exception as exc:
        raise refuse(f"its provenance cannot be computed ({describe_exception(exc)})") from None
    for _, why in unverified(rec, itself=True)[:1]:
        raise refuse(why)
    problem = import_origin_problem(claim.value, rec) or imported_under_other_bytes(rec)
    if problem is None and pin is not None:
        problem = pin(rec)  # the enforced lock, before anything of it runs
    if problem is not None:
        raise refuse(problem)
    try:
        obj = import_verified(rec, group=group)
    except PluginLoadError as exc:
        refused = refuse(exc.message)
        refused.traceback = exc.traceback
        raise refused from None
    origin = ExtensionOrigin(
        group, name, claim.value, rec.distribution, rec.version, rec.source_kind, rec.tree_digest, rec
    )
    return origin, obj


__all__ = ["ExtensionError", "ExtensionOrigin", "ExtensionSession", "Pin", "refusal_hint"]
