"""``[lock] enforce``: an enabled plugin's origin (before import) and tools (after), and each extension
the load imports (before import), compared with ``reyn.lock``, read once per load."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from reyn_core.errors import exception_message
from reyn_core.loading.diagnostics import Diagnostic

if TYPE_CHECKING:  # the lock's modules are imported only by a load that enforces it
    from reyn_core.loading.plugin_state import LoadSession, PluginState
    from reyn_core.loading.step3_provenance.drift import Drift
    from reyn_core.loading.step3_provenance.lock import LockedPlugin, LockFile
    from reyn_core.loading.step3_provenance.record import ProvenanceRecord


def enforced_lock(session: LoadSession) -> LockFile | None:
    """The lock the load enforces, read on first use (None: ``session.lock_error`` or
    ``session.lock_outdated`` says why, the latter said once for the whole load as ``RL004``)."""
    if session.lock is None and session.lock_error is None and not session.lock_outdated:
        from reyn_core.loading.step3_provenance.lock_file import read_lock

        path = session.profile.lock_path
        if not path.is_file():
            session.lock_error = f"[lock] enforce = true but {path} does not exist"
        else:
            from reyn_core.loading.step3_provenance.lock import OutdatedLockError

            try:
                session.lock = read_lock(path)
            except OutdatedLockError as exc:
                # One diagnostic for the whole load, not one per plugin: nothing drifted, the lock
                # only predates this format. Every plugin is still refused (fail closed) below.
                session.lock_outdated = True
                session.global_diags.append(Diagnostic.make("RL004", str(exc)))
            except Exception as exc:
                session.lock_error = (
                    f"[lock] enforce = true but {path} cannot be read: {exception_message(exc)}"
                )
    return session.lock


def locked_entry(session: LoadSession, p: PluginState) -> LockedPlugin | None:
    """The plugin's lock entry, or None after recording why there is none."""
    lock = enforced_lock(session)
    if lock is None:
        if session.lock_outdated:  # already said once for the whole load (RL004)
            p.status = "refused"
        else:
            p.fail("refused", "RL003", session.lock_error or f"{session.profile.lock_path} was not read")
        return None
    entry = lock.plugin(p.plugin_id)
    if entry is None:
        p.fail(
            "refused",
            "RL002",
            f"plugin {p.plugin_id!r} is not in {session.profile.lock_path} and [lock] enforce = true",
        )
    return entry


def check_lock_provenance(session: LoadSession, p: PluginState, rec: ProvenanceRecord) -> None:
    from reyn_core.loading.step3_provenance.drift import compare_provenance

    entry = locked_entry(session, p)
    if entry is not None:
        _refuse_drifts(session, p, rec.distribution, compare_provenance(entry, rec))


def check_lock_tools(session: LoadSession, p: PluginState) -> None:
    from reyn_core.loading.step3_provenance.drift import compare_tools

    entry = locked_entry(session, p)
    if entry is None:
        return
    drifts = compare_tools(entry, [d for d, _ in p.tools])
    if _refuse_drifts(session, p, f"the tools of plugin {p.plugin_id!r}", drifts):
        p.tools.clear()


def extension_pin(session: LoadSession, *, enforce: bool) -> Callable[[ProvenanceRecord], str | None] | None:
    """What each extension of the load is checked against before it is imported: when ``enforce``
    (the profile's ``[lock] enforce``), its ``[extensions."<group>:<name>"]`` entry (None when the
    lock is not enforced); an ``extension_origin.Pin``."""
    if not enforce:
        return None

    def pin(record: ProvenanceRecord) -> str | None:
        from reyn_core.loading.step3_provenance.drift import compare_provenance

        path = session.profile.lock_path
        lock = enforced_lock(session)
        if lock is None:
            if session.lock_outdated:
                return f"{path} predates this Reyn's lock format; re-run `reyn plugins lock` (RL004)"
            return session.lock_error or f"{path} was not read"
        entry = lock.extension(record.plugin_id)
        if entry is None:
            return f"it is not in {path} and [lock] enforce = true; review it, then run `reyn plugins lock`"
        drifts = compare_provenance(entry, record, subject="extension")
        return f"it drifted from {path}: {_describe_drifts(drifts)}" if drifts else None

    return pin


def _refuse_drifts(session: LoadSession, p: PluginState, subject: str, drifts: Sequence[Drift]) -> bool:
    """Refuse the plugin (``RL001``) when ``subject`` drifted from the lock; True when it did."""
    if drifts:
        p.fail(
            "refused",
            "RL001",
            f"{subject} drifted from {session.profile.lock_path}: " + _describe_drifts(drifts),
        )
    return bool(drifts)


def _describe_drifts(drifts: Sequence[Drift]) -> str:
    shown = [f"{d.kind}: {d.detail}" for d in drifts[:6]]
    more = f"; and {len(drifts) - 6} more" if len(drifts) > 6 else ""
    return "; ".join(shown) + more


__all__ = ["check_lock_provenance", "check_lock_tools", "enforced_lock", "extension_pin", "locked_entry"]
