"""The host's own files: what no confined process and no tool may write, computed once per load.

Every file and folder the host trusts on this run or the next: the profile and the files the profile
search tries before it (a model that wrote one would choose the next load's profile), the code the
host runs (``host_code``: its import path but the working directory, the Python installation, the
code of every installed distribution, imported module and meta-path finder's mapping), the lock, the
audit log, the remote failure log (and Reyn's log folder that holds it), the argument key calls and
sessions are hashed with, Reyn's own cache and configuration folders (the next load runs the
bytecode cached there), the approval store's files (``store_files``: its rows are trusted as
decisions), and the files each plugin names through ``reyn_trusted_files`` (its database, a snapshot
it builds tools from), which ``step5_hooks.plugin_files`` adds to this list. A process that could
write one of them — or plant a file beside one, such as the ``approvals.db-wal`` SQLite reads next
to its store — could approve its own held call, delete the approval rules or forge the audit.

``load()`` puts the list on the registry (``ToolRegistry.host_files``, ``LoadResult.host_files``) and
the dispatcher hands it to every call's context (``ToolContext.host_files``, merged with whatever a
host set, so no surface can drop it). Every confining surface checks it with one rule
(``reyn_sandbox.protected_problem``): the shell pack's commands and the mcp pack's stdio servers
through ``reyn_sandbox.resolve_grants``, isolated plugin workers at load (``RJ011``); the file pack
refuses to write or delete anything at or below one of these paths.

A few are also secret (``reyn_core.secret_files.SecretFile``, ``_secrets``): the argument key and
the remote failure log are hidden from every confined process whose roots cover them, and the file
pack refuses to read them.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from reyn_core.loading.plugin_state import LoadSession
    from reyn_core.secret_files import SecretFile


def trusted_files(session: LoadSession) -> dict[str, str]:
    """``{absolute path: what it is}`` of the host's own files for this load (computed once, kept
    on the session)."""
    found = session.host_files
    if found is None:
        found = session.host_files = _compute(session)
    return found


def _compute(session: LoadSession) -> dict[str, str]:
    from reyn_core.loading.step1_profile.profile_location import PROFILE_FILE_NAME
    from reyn_core.loading.step6_registry.approval_gate import store_files
    from reyn_core.loading.userdirs import own_folders

    profile = session.profile
    audit = profile.audit.log
    named = {
        "the host's profile": profile.source or str(profile.base_dir / PROFILE_FILE_NAME),
        "the host's lock": str(profile.lock_path),
        "the host's audit log": str(profile.resolve_path(audit)) if audit else None,
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
    for file in _searched_first(profile.source):
        found.setdefault(file, "where the next load looks for its profile first")
    _add_host_code(session, found)
    for file, what in _secrets(session).items():  # a secret stays marked whatever else names it
        found[file] = what
    return found


def _secrets(session: LoadSession) -> dict[str, SecretFile]:
    """The host's files no confined process and no tool may read either (``SecretFile``; why these
    and not the others: docs/decisions.md): the argument key (with it, low-entropy argument hashes
    in the audit log can be reversed; a process that could replace it could forge them) and the
    operator's log of failures, which keeps raw output that may carry secrets (DESIGN invariant 7) —
    with the copies its rotation keeps, and, where it is in Reyn's own log folder (the default),
    that folder: a rotation renames files, and a file that appears while a confined process runs
    is hidden only by its folder's cover. A log that cannot be made is ``RC013`` on the load."""
    from reyn_core.loading.argument_key import ArgumentKeyError, installation_key, key_path
    from reyn_core.remote_log import BACKUP_COUNT, default_log_file, make_log_files, remote_log_file
    from reyn_core.secret_files import SecretFile

    # Each is made now, before anything runs confined: a cover is a mount on what exists when a
    # process starts (for a missing one the launcher covers its folder or refuses to start,
    # reyn_sandbox.secret_covers). One that cannot be made is still marked: its user says why.
    try:
        installation_key()
    except ArgumentKeyError:
        pass
    try:
        remote = make_log_files()
    except OSError as exc:  # told now, not at the first record; the rest loads
        from reyn_core.loading.diagnostics import Diagnostic

        remote = remote_log_file()
        session.global_diags.append(Diagnostic.make("RC013", f"the remote failure log cannot be used: {exc}"))
    found = {os.path.abspath(key_path()): SecretFile("the host's argument key")}
    if remote is not None:
        log = os.path.abspath(remote)
        found[log] = SecretFile("the host's remote failure log")
        for n in range(1, BACKUP_COUNT + 1):
            found[f"{log}.{n}"] = SecretFile("a rotated copy of the host's remote failure log")
        if log == os.path.abspath(default_log_file()):
            found[os.path.dirname(log)] = SecretFile("Reyn's user log folder (the remote failure log)")
    return found


def _searched_first(source: str | None) -> list[str]:
    """The files the profile search tries before the one this load read (a model that wrote one of
    them would choose the next load's profile): ``./reyn.toml`` and ``./pyproject.toml`` before the
    user's profile, ``./reyn.toml`` before ``[tool.reyn]`` in ``./pyproject.toml``. A profile named
    by ``--profile-file`` or ``$REYN_PROFILE_FILE`` is found before any of them."""
    from reyn_core.loading.step1_profile.profile_location import PROFILE_FILE_NAME
    from reyn_core.loading.userdirs import user_config_dir

    here = os.path.realpath(os.getcwd())
    local, pyproject = os.path.join(here, PROFILE_FILE_NAME), os.path.join(here, "pyproject.toml")
    read = os.path.realpath(source) if source else None
    if read is None or read == os.path.realpath(user_config_dir() / PROFILE_FILE_NAME):
        return [local, pyproject]
    return [local] if read == pyproject else []


def _add_host_code(session: LoadSession, found: dict[str, str]) -> None:
    """Where the host's code comes from (``host_code``: its import path but the working directory,
    the Python installation, every installed distribution's code, every imported module's, every
    meta-path finder's mapping), Reyn's own package first (its folder keeps its name). A
    distribution whose code cannot be located is ``RC014`` on the load."""
    from reyn_core.loading.diagnostics import Diagnostic
    from reyn_core.loading.host_code import host_code

    found.setdefault(os.path.dirname(os.path.dirname(os.path.realpath(__file__))), "Reyn's own code")
    code = host_code()
    for path, what in code.paths.items():
        found.setdefault(path, what)
    if code.unknown:
        message = "the host's code cannot all be located: " + "; ".join(code.unknown[:10])
        session.global_diags.append(Diagnostic.make("RC014", message))


__all__ = ["trusted_files"]
