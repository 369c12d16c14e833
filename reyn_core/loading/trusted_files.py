"""The host's own files: what no confined process and no tool may write, computed once per load.

Every file and folder the host trusts on this run or the next: the profile (or, with none, where the
next load would find one), the lock, the audit log, the remote failure log, the argument key calls
and sessions are hashed with, Reyn's own cache and configuration folders (the next load runs the
bytecode cached there), and the approval store's files (``store_files``: its rows are trusted as
decisions). A process that could write one of them — or plant a file beside one, such as the
``approvals.db-wal`` SQLite reads next to its store — could approve its own held call, delete the
approval rules or forge the audit.

``load()`` puts the list on the registry (``ToolRegistry.host_files``, ``LoadResult.host_files``) and
the dispatcher hands it to every call's context (``ToolContext.host_files``, merged with whatever a
host set, so no surface can drop it). Every confining surface checks it with one rule
(``reyn_sandbox.protected_problem``): the shell pack's commands and the mcp pack's stdio servers
through ``reyn_sandbox.resolve_grants``, isolated plugin workers at load (``RJ011``); the file pack
refuses to write or delete anything at or below one of these paths.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from reyn_core.loading.plugin_state import LoadSession


def trusted_files(session: LoadSession) -> dict[str, str]:
    """``{absolute path: what it is}`` of the host's own files for this load (computed once, kept
    on the session)."""
    found = session.host_files
    if found is None:
        found = session.host_files = _compute(session)
    return found


def _compute(session: LoadSession) -> dict[str, str]:
    from reyn_core.loading.argument_key import key_path
    from reyn_core.loading.step1_profile.profile_location import PROFILE_FILE_NAME
    from reyn_core.loading.step6_registry.approval_gate import store_files
    from reyn_core.loading.userdirs import own_folders
    from reyn_core.remote_log import remote_log_file

    profile = session.profile
    audit = profile.audit.log
    remote = remote_log_file()
    named = {
        "the host's profile": profile.source or str(profile.base_dir / PROFILE_FILE_NAME),
        "the host's lock": str(profile.lock_path),
        "the host's audit log": str(profile.resolve_path(audit)) if audit else None,
        "the host's remote failure log": str(remote) if remote else None,
        # the key calls and sessions are hashed with: a process that could replace it could forge them
        "the host's argument key": str(key_path()),
    }
    found: dict[str, str] = {}
    for what, file in named.items():
        if file:
            found.setdefault(os.path.abspath(file), what)
    # the caches the host trusts on its next load (a process could plant bytecode it then runs)
    for what, folder in own_folders().items():
        found.setdefault(os.path.abspath(folder), what)
    for file, what in store_files(profile, session.extensions).items():  # its rows are decisions
        found.setdefault(os.path.abspath(file), what)
    return found


__all__ = ["trusted_files"]
