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
``workspace`` is the host's working directory there too), and may name files its own grants cover.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from reyn_core.errors import describe_exception
from reyn_core.loading.plugin_state import LoadSession, PluginState
from reyn_core.loading.trusted_files import trusted_files

MAX_FILES = 1_000
"""Most paths one plugin may name (a plugin names its few files, not a tree)."""
MAX_PATH_CHARS = 4_096
MAX_WHAT_CHARS = 200


def collect_trusted_files(session: LoadSession, p: PluginState) -> None:
    """Add what the plugin's ``reyn_trusted_files`` hook names to the load's list of the host's own
    files (each described as the plugin says, with the plugin's id); ``RI013`` refuses the plugin
    when the hook raises or answers anything but a mapping of absolute paths to short phrases."""
    assert p.pm is not None
    caller = p.pm.hook.reyn_trusted_files
    if not caller.get_hookimpls():
        return
    try:
        answers = list(caller(settings=p.settings, workspace=Path.cwd()))
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
    problem = _writable_by_another(session, p.plugin_id, named)
    if problem is not None:
        _refuse(p, f"reyn_trusted_files named {problem}", "another plugin may rewrite a file it trusts")
        return
    found = trusted_files(session)
    for path, what in named.items():
        found.setdefault(path, f"{what} (plugin {p.plugin_id!r})")


def _refuse(p: PluginState, message: str, why: str = "") -> None:
    why = why or f"the files plugin {p.plugin_id!r} trusts are unknown"
    p.fail("failed", "RI013", f"{message}, so {why} and it is not loaded")


def _writable_by_another(session: LoadSession, plugin_id: str, named: Mapping[str, str]) -> str | None:
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
    for path in named:
        real = os.path.realpath(path)
        for root, other in roots.items():
            if _within(real, root) or _within(root, real):
                return (
                    f"{path[:200]!r}, which isolated plugin {other!r} may write ([plugins.{other}.grants] "
                    f"write: {root[:200]})"
                )
    return None


def _within(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def _answer_problem(answer: object, named: dict[str, str]) -> str | None:
    """What is wrong with one answer of the hook (None when it is usable: its entries are then in
    ``named``, as normalised absolute paths). Stops at the first bad entry; linear in its size."""
    if not isinstance(answer, Mapping):
        return f"returned a {type(answer).__name__}, not a mapping of absolute paths to what they are"
    if len(answer) + len(named) > MAX_FILES:
        return f"named {len(answer) + len(named):,} paths, more than {MAX_FILES:,}"
    for raw, what in answer.items():
        path = _absolute(raw)
        if path is None:
            return f"named {str(raw)[:120]!r}, which is not an absolute path (str or os.PathLike)"
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
    if not isinstance(path, str) or not path or len(path) > MAX_PATH_CHARS or "\0" in path:
        return None
    return os.path.normpath(path) if os.path.isabs(path) else None


__all__ = ["collect_trusted_files"]
