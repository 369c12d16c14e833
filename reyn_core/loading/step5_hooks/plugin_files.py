"""Load step 5: the files a plugin trusts (``reyn_trusted_files``), joined to the host's one list.

A plugin's database, the snapshot it builds tools from, the files that decide an agent's tools: the
host acts on what they say, so a confined process that could rewrite one could change what the host
runs or trusts, as with the host's own files. The plugin names them once per load, from its validated
settings; they go into the same list as the host's (``trusted_files``: ``LoadResult.host_files``),
which every confining surface checks with one rule. There is no second list.

An answer that cannot be used refuses the plugin (``RI013``) before its tools are registered: the
files it meant to protect are unknown, so its tools would act on files any write root might cover.
So does a path inside another isolated plugin's write grant (``[plugins.<id>.grants] write``, read
from the profile, whatever the order plugins load in): that worker could rewrite it. The other
plugins keep loading. An isolated plugin answers from its worker (the backend forwards the answer;
``workspace`` is the load's there too), and may name only files its own write grants cover.

Each named path is checked before it joins the list, and kept resolved (``ResolvedPath``): one
printable line that encodes as UTF-8 (it is shown in refusals a model reads, and sent as JSON), of
at most ``MAX_COMPONENTS`` components, all of them at most ``MAX_TOTAL_CHARS`` characters; its
links are followed once, here (``//ws/x`` and a link to a host file are that file: a host entry is
never relabelled, and a plugin's path that is one is skipped), so no call resolves it again; and it
must not be ``/``, the workspace, the working directory, the home directory or a folder above one
of them — that would refuse every write root of every surface.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from reyn_core.errors import describe_exception
from reyn_core.loading.plugin_state import LoadSession, PluginState
from reyn_core.loading.trusted_files import trusted_files
from reyn_core.secret_files import path_within

MAX_FILES = 1_000
"""Most paths one plugin may name (a plugin names its few files, not a tree)."""
MAX_PATH_CHARS = 4_096
MAX_COMPONENTS = 64
"""Most components of one named path (each is resolved once at load)."""
MAX_TOTAL_CHARS = 65_536
"""Most characters of all the paths one plugin names."""
MAX_WHAT_CHARS = 200


class ResolvedPath(str):
    """A path of the host's list that the load resolved already (links followed): the confining
    surfaces read the ``resolved`` mark and do not resolve it again on every call."""

    __slots__ = ()
    resolved = True


def collect_trusted_files(session: LoadSession, p: PluginState) -> None:
    """Add what the plugin's ``reyn_trusted_files`` hook names to the load's list of the host's own
    files (each described as the plugin says, with the plugin's id); ``RI013`` refuses the plugin
    when the hook raises or answers anything but a mapping of absolute paths to short phrases."""
    assert p.pm is not None
    caller = p.pm.hook.reyn_trusted_files
    if not caller.get_hookimpls():
        return
    try:
        answers = list(caller(settings=p.settings, workspace=Path(session.workspace)))
    except (Exception, SystemExit) as exc:
        _refuse(p, f"reyn_trusted_files raised {describe_exception(exc)}")
        return
    named: dict[str, str] = {}
    for answer in answers:
        if answer is None:
            continue
        problem = _answer_problem(answer, named)
        if problem is not None:
            _refuse(p, f"reyn_trusted_files {problem}")
            return
    resolved = {os.path.realpath(path): (path, what) for path, what in named.items()}
    problem = _too_broad(session, resolved) or _outside_own_grants(session, p.plugin_id, resolved)
    if problem is not None:
        _refuse(p, f"reyn_trusted_files named {problem}", "it would protect what is not its own")
        return
    problem = _writable_by_another(session, p.plugin_id, resolved)
    if problem is not None:
        _refuse(p, f"reyn_trusted_files named {problem}", "another plugin may rewrite a file it trusts")
        return
    found = trusted_files(session)
    host = {os.path.realpath(path) for path in found} | set(found)
    for real, (_, what) in resolved.items():
        if real not in host:  # a host entry keeps its words and its mark
            found[ResolvedPath(real)] = f"{what} (plugin {p.plugin_id!r})"


def _refuse(p: PluginState, message: str, why: str = "") -> None:
    why = why or f"the files plugin {p.plugin_id!r} trusts are unknown"
    p.fail("failed", "RI013", f"{message}, so {why} and it is not loaded")


def _too_broad(session: LoadSession, resolved: Mapping[str, tuple[str, str]]) -> str | None:
    """The first named path that is ``/``, or the workspace, the working directory or the home
    directory, or a folder above one of them (it would refuse every write root), worded."""
    anchors = {
        "the workspace": session.workspace,
        "the working directory": os.path.realpath(os.getcwd()),
        "the home directory": os.path.realpath(os.path.expanduser("~")),
    }
    for real, (path, _) in resolved.items():
        if real == os.sep:
            return f"{path!r}, the file system's root"
        for which, anchor in anchors.items():
            if path_within(anchor, real):
                return f"{path!r}, which is or holds {which} ({anchor!r})"
    return None


def _outside_own_grants(
    session: LoadSession, plugin_id: str, resolved: Mapping[str, tuple[str, str]]
) -> str | None:
    """For an isolated plugin, the first named path outside every root its own grants let it write
    (``[plugins.<id>.grants] write``): only there can it keep a file of its own; a path it may only
    read would let it refuse the write roots of others (a pack's `out`, a source file a model edits).
    None for a plugin in process."""
    profile = session.profile
    config = profile.plugin(plugin_id)
    if config.isolation != "process":
        return None
    granted = config.grants.write if config.grants else ()
    roots = [os.path.realpath(profile.resolve_path(root)) for root in granted]
    for real, (path, _) in resolved.items():
        if not any(path_within(real, root) for root in roots):
            return f"{path!r}, outside every path [plugins.{plugin_id}.grants] lets it write"
    return None


def _writable_by_another(session: LoadSession, plugin_id: str, named: Mapping[str, object]) -> str | None:
    """The first named path that another isolated plugin's write grant equals, contains or lies inside
    (from the profile: its worker may already run), worded; None when there is none."""
    profile = session.profile
    roots: dict[str, str] = {}
    for other in profile.enabled:
        config = profile.plugin(other)
        if other != plugin_id and config.isolation == "process" and config.grants is not None:
            for root in config.grants.write:
                roots.setdefault(os.path.realpath(profile.resolve_path(root)), other)
    if not roots:
        return None
    for real in named:  # resolved already
        path = real
        for root, other in roots.items():
            if path_within(real, root) or path_within(root, real):
                return (
                    f"{path[:200]!r}, which isolated plugin {other!r} may write ([plugins.{other}.grants] "
                    f"write: {root[:200]})"
                )
    return None


def _answer_problem(answer: object, named: dict[str, str]) -> str | None:
    """What is wrong with one answer of the hook (None when it is usable: its entries are then in
    ``named``, as normalised absolute paths). Stops at the first bad entry; linear in its size."""
    if not isinstance(answer, Mapping):
        return f"returned a {type(answer).__name__}, not a mapping of absolute paths to what they are"
    if len(answer) + len(named) > MAX_FILES:
        return f"named {len(answer) + len(named):,} paths, more than {MAX_FILES:,}"
    total = sum(len(path) for path in named)
    for raw, what in answer.items():
        path = _absolute(raw)
        if path is None:
            return (
                f"named {str(raw)[:120]!r}, which is not an absolute path (str or os.PathLike) of one "
                f"printable line, UTF-8, at most {MAX_PATH_CHARS:,} characters and {MAX_COMPONENTS} "
                "components"
            )
        total += len(path)
        if total > MAX_TOTAL_CHARS:
            return f"named paths of more than {MAX_TOTAL_CHARS:,} characters in all"
        if not _is_phrase(what):
            return (
                f"described {path[:120]!r} as {str(what)[:120]!r}: say what it is in one line of at "
                f"most {MAX_WHAT_CHARS} characters"
            )
        named[path] = what.strip()
    return None


def _is_phrase(what: object) -> bool:
    """One printable line of at most ``MAX_WHAT_CHARS`` characters (it is shown in refusals)."""
    if not isinstance(what, str) or not 0 < len(what) <= MAX_WHAT_CHARS:
        return False
    return what.isprintable() and bool(what.strip())


def _absolute(raw: object) -> str | None:
    try:
        path = os.fspath(raw)  # type: ignore[call-overload]
    except TypeError:
        return None
    if not isinstance(path, str) or not path or len(path) > MAX_PATH_CHARS or not path.isprintable():
        return None  # a newline, an escape code, a NUL or a lone surrogate is no file of its own
    try:
        path.encode("utf-8", "strict")
    except UnicodeEncodeError:
        return None
    if not os.path.isabs(path) or path.count(os.sep) > MAX_COMPONENTS:
        return None
    return os.path.normpath(path)


__all__ = ["collect_trusted_files"]
