"""Load step 3: the provenance of an enabled plugin checked against the profile, before any import."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from reyn_core.errors import describe_exception
from reyn_core.loading.diagnostics import Diagnostic
from reyn_core.loading.plugin_state import LoadSession, PluginState
from reyn_core.loading.step2_discovery.discovery import DiscoveredPlugin
from reyn_core.loading.step3_provenance.lock_check import check_lock_provenance
from reyn_core.loading.step3_provenance.record import ProvenanceRecord, unverified


def check_provenance(session: LoadSession, p: PluginState) -> None:
    """Every file of the plugin hashed now (``provenance_for``), then checked against RECORD, the
    profile's pin and, when enforced, the lock."""
    from reyn_core.loading.step3_provenance.record import provenance_for

    cand = p.candidate
    assert cand is not None and cand.dist is not None
    try:
        rec = provenance_for(cand.dist, plugin_id=p.plugin_id, entry_point=cand.entry_point)
    except Exception as exc:
        p.fail(
            "refused",
            "RP004",
            f"cannot compute the provenance of {cand.distribution} {cand.version}: {describe_exception(exc)}",
        )
        return
    p.provenance = rec
    cfg = session.profile.plugin(p.plugin_id)
    # Files that differ from RECORD are fatal; a digest that may not cover everything that will be
    # imported is fatal when something depends on the digest (a pin or an enforced lock), a warning
    # otherwise. An audit under an enforced lock (``lock_gate``) refuses before import what the
    # enforced load refuses, so reviewing a drifted plugin never runs it.
    enforce = session.profile.lock.enforce or session.lock_gate
    strict = cfg.digest is not None or enforce
    for code, message in unverified(rec):
        if code == "RP005" and not strict:
            p.diagnostics.append(Diagnostic.make(code, message, plugin=p.plugin_id, severity="warning"))
        else:
            p.fail("refused", code, message)
    if rec.is_editable and not session.profile.provenance.allow_editable:
        p.fail(
            "refused",
            "RP003",
            f"{rec.distribution} is a {rec.source_kind} install "
            f"({rec.source_url or 'local folder'}); the profile sets provenance.allow_editable = false",
        )
    if cfg.digest is not None and cfg.digest != rec.tree_digest:
        p.fail(
            "refused",
            "RP001",
            f"digest of {rec.distribution} {rec.version} is {rec.tree_digest}, "
            f"but the profile pins plugins.{p.plugin_id}.digest = {cfg.digest}",
        )
    if enforce:
        check_lock_provenance(session, p, rec)


def inspect_discovered(
    found: Mapping[str, Sequence[DiscoveredPlugin]], enabled: set[str]
) -> dict[tuple[str, str], ProvenanceRecord]:
    """Provenance of every installed-but-not-enabled plugin (metadata and files only)."""
    from reyn_core.loading.step3_provenance.record import provenance_for

    records = {}
    for pid, candidates in found.items():
        for c in candidates:
            if pid in enabled or c.dist is None or not c.well_formed:
                continue
            try:
                records[(pid, c.distribution)] = provenance_for(
                    c.dist, plugin_id=pid, entry_point=c.entry_point
                )
            except Exception:  # listing only: the plugin is not being loaded
                continue
    return records


__all__ = ["check_provenance", "inspect_discovered"]
