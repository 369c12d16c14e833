"""Everything a cached ``reyn tools render`` depends on, read without loading (the render cache's key).

``world(argv)`` is what is known before any plugin is imported: the command line, the working
directory, the interpreter and its import path (each ``sys.path`` folder's stat, so a module
dropped there — a shadowing plugin, an installed or removed distribution — changes it), the
environment that decides the profile and the user folders, whether stdout and stderr are terminals,
the profile file found exactly as the loader finds it (path, resolved path and bytes), reyn-core's
own verified digest and the discovered plugins.
``plugin_digest``, ``env_values`` and ``path_states`` fingerprint what a load turned out to depend
on: each enabled plugin's distribution (its provenance record: digest, RECORD check, origin), the
environment variables and the files or folders the plugins declared (``reyn_load_inputs``).

Files are trusted by content (the profile) or by the loader's own rule (the digest cache: a file's
hash is reused while its size and mtime_ns are unchanged); declared paths and the import path's
folders by their stat (size, mtime_ns, ctime_ns, inode), and ``recently_changed`` tells the writer
not to store a result any of whose stat-checked inputs changed less than two seconds ago (a change
within the file system's timestamp tick would otherwise go unseen). Nothing here imports pydantic
or a plugin: this is the cache's fast path.
"""

from __future__ import annotations

import hashlib
import os
import stat
import sys
from collections.abc import Iterable, Sequence
from typing import Any

from reyn_core.errors import ReynError
from reyn_core.jsondata import canonical_json
from reyn_core.loading.provenance.cache import RACY_NS

FORMAT = "reyn-render-cache-v2"
MAX_WALK = 10_000
"""A declared folder with more entries than this makes the load uncacheable (checking it would cost
more than the load)."""

# The variables that decide where the profile and the user folders are, how Python runs, and how
# output for a terminal looks.
_ENV_NAMES = (
    "HOME",
    "USERPROFILE",
    "APPDATA",
    "LOCALAPPDATA",
    "XDG_CONFIG_HOME",
    "XDG_CACHE_HOME",
    "LANG",
    "LC_ALL",
    "LC_CTYPE",
    "TERM",
    "NO_COLOR",
    "FORCE_COLOR",
)
SWITCH = "REYN_RENDER_CACHE"
"""``off`` (or ``0``, ``no``, ``false``) disables the cache, ``trace`` says on stderr what it did."""


class NotCacheable(Exception):
    """Why this run cannot use or fill the cache (the trace shows the message)."""


def canonical(value: Any) -> bytes:
    """The canonical JSON of ``value`` (``jsondata.canonical_json``) as bytes to hash or store."""
    return canonical_json(value).encode("utf-8", "surrogatepass")


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _stat(path: str) -> list[Any]:
    """``[size, mtime_ns, ctime_ns, inode, is_dir]`` of ``path`` (links followed), or why not."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return ["absent"]
    except OSError as exc:
        return ["unreadable", exc.errno]
    return [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, stat.S_ISDIR(st.st_mode)]


def world(argv: Sequence[str], profile_file: str | None) -> dict[str, Any]:
    """The inputs known before loading; ``NotCacheable`` when they cannot all be read."""
    from reyn_core import __version__

    env = {k: v for k, v in os.environ.items() if k.startswith(("REYN_", "PYTHON")) and k != SWITCH}
    env.update((k, os.environ[k]) for k in _ENV_NAMES if k in os.environ)
    paths = [os.path.abspath(p or os.curdir) for p in sys.path]
    return {
        "format": FORMAT,
        "reyn_core": __version__,
        "argv": list(argv),
        "cwd": os.getcwd(),
        "python": [
            sys.version,
            sys.executable,
            sys.implementation.cache_tag,
            list(sys.flags),
            sorted((k, str(v)) for k, v in sys._xoptions.items()),
            list(sys.warnoptions),
            sys.platform,
        ],
        "sys_path": [[p, _stat(p)] for p in paths],
        "env": env,
        # Output may depend on whether it goes to a terminal (colour, a warning's form).
        "terminal": [os.isatty(1), os.isatty(2)],
        "profile": _profile(profile_file),
        "reyn_core_digest": _core_digest(),
        "discovered": _discovered(),
    }


def _profile(profile_file: str | None) -> list[Any] | None:
    from reyn_core.loading.profile_location import find_profile_file

    try:
        found = find_profile_file(profile_file)
        if found is None:
            return None
        path, is_pyproject = found
        # The resolved path too: the profile's relative paths (its lock) resolve against its real
        # folder, which a swapped link changes under the same path and bytes.
        return [str(path), os.path.realpath(path), is_pyproject, sha256_hex(path.read_bytes())]
    except (ReynError, OSError) as exc:  # the real run reports it
        raise NotCacheable(f"the profile cannot be read ({exc})") from None


def _core_digest() -> str:
    """reyn-core's provenance, as for a plugin: its files checked against RECORD and digested, and
    the imported ``reyn_core`` must be the one the digest covers."""
    import importlib.metadata as md

    import reyn_core

    try:
        dist = md.distribution("reyn-core")
    except md.PackageNotFoundError:
        raise NotCacheable("reyn-core is not an installed distribution") from None
    digest, record = _provenance(dist, "reyn-core", "reyn_core")
    here = os.path.dirname(os.path.abspath(reyn_core.__file__))
    if dict(record.module_locations).get("reyn_core") != here:
        raise NotCacheable(f"reyn_core is imported from {here}, not from the reyn-core distribution")
    return digest


def _provenance(dist: Any, plugin_id: str, entry_point: str) -> tuple[str, Any]:
    """(fingerprint, provenance record) of a distribution: the record's hash and the stat of every
    file it covers — the ctime too, which ``os.utime`` cannot set back, so bytes replaced under a kept
    size and mtime (which the digest cache trusts) still count as a change."""
    from reyn_core.loading.provenance.cache import DigestCache
    from reyn_core.loading.provenance.record import provenance_for

    record = provenance_for(dist, plugin_id=plugin_id, entry_point=entry_point, cache=DigestCache.default())
    if record.record_mismatches or record.problems:
        raise NotCacheable(f"{record.distribution}'s files do not match its RECORD or cannot all be read")
    site = os.path.abspath(str(dist.locate_file("")))
    locations = dict(record.module_locations)
    stats = []
    for rel, _ in record.files:
        top, _, rest = rel.partition("/")
        where = [os.path.join(site, rel)]  # as installed, and (source-tree digests) in the source tree
        if top in locations:
            where.append(os.path.join(locations[top], rest) if rest else locations[top])
        stats.append([rel, [_stat(p) for p in where]])
    return sha256_hex(canonical([record_digest(record), stats])), record


def record_digest(record: Any) -> str:
    """One hash of a provenance record: origin, digest, file listing and import locations."""
    return sha256_hex(canonical([record.to_dict(), [list(m) for m in record.module_locations]]))


def _discovered() -> list[Any]:
    from reyn_core.loading.discovery import discover

    found = discover()
    plugins = [
        [p.plugin_id, p.entry_point, p.distribution, p.version, p.dist and str(p.dist.locate_file(""))]
        for p in found.plugins
    ]
    near = [[n.distribution, n.version, n.group, list(n.names)] for n in found.near_misses]
    return [plugins, near]


def plugin_digest(plugin_id: str, distribution: str, loaded: Any = None) -> str:
    """The provenance fingerprint of the discovered ``distribution`` providing ``plugin_id``; with
    ``loaded`` (the record a load checked), ``NotCacheable`` unless the distribution is unchanged."""
    from reyn_core.loading.discovery import discover

    for p in discover().plugins:
        if p.plugin_id == plugin_id and p.distribution == distribution and p.dist is not None:
            fingerprint, record = _provenance(p.dist, plugin_id, p.entry_point)
            if loaded is not None and record_digest(record) != record_digest(loaded):
                raise NotCacheable(f"{distribution} changed during the run")
            return fingerprint
    raise NotCacheable(f"plugin {plugin_id!r} of {distribution} is no longer installed")


def env_values(names: Iterable[str]) -> dict[str, str | None]:
    """The declared environment variables' values (None: unset)."""
    return {name: os.environ.get(name) for name in sorted(set(names))}


def path_states(paths: Iterable[str]) -> dict[str, list[Any]]:
    """Each declared path's stat; a folder's whole tree (links followed, each folder once)."""
    out: dict[str, list[Any]] = {}
    for path in sorted(set(paths)):
        state = [_stat(path)]
        if state[0][-1] is True:
            state.append(_tree(path))
        out[path] = state
    return out


def _tree(root: str) -> list[Any]:
    entries: list[Any] = []
    seen: set[tuple[int, int]] = set()
    stack = [root]
    while stack:
        folder = stack.pop()
        try:
            st = os.stat(folder)
            if (st.st_dev, st.st_ino) in seen:
                continue
            seen.add((st.st_dev, st.st_ino))
            names = sorted(os.listdir(folder))
        except OSError as exc:
            entries.append([os.path.relpath(folder, root), ["unreadable", exc.errno]])
            continue
        for name in names:
            full = os.path.join(folder, name)
            state = _stat(full)
            entries.append([os.path.relpath(full, root), state])
            if state[-1] is True:
                stack.append(full)
            if len(entries) > MAX_WALK:
                raise NotCacheable(f"{root} holds more than {MAX_WALK} entries")
    return entries


def recently_changed(
    world_value: dict[str, Any], states: dict[str, list[Any]], started_ns: int
) -> str | None:
    """A stat-checked input changed while the run that started at ``started_ns`` ran, or less than
    two seconds before it (a next change within the same timestamp tick could keep the stat), or None.

    The ``sys.path`` folders are stat-ed before and after the run (``world``), so a change during it
    is seen; their mtime must predate the run. The declared paths are stat-ed only after the run, so a
    change during it — after a plugin read the old bytes — would be stored as the state the output
    belongs to: their ctime must predate the run, which a copy keeping the mtime (``cp -p``,
    ``rsync -t``, an archive) still moves."""
    limit = started_ns - RACY_NS
    checked: list[tuple[str, int]] = [(p, st[1]) for p, st in world_value["sys_path"] if len(st) == 5]
    for path, state in states.items():
        stats = [(path, state[0])]
        stats += [(os.path.join(path, rel), st) for rel, st in (state[1] if len(state) > 1 else ())]
        for p, st in stats:
            if len(st) != 5:  # absent or unreadable: no ctime of its own, but its folder's
                p, st = _nearest_folder(p)
            checked.append((p, max(st[1], st[2])))
    for path, changed in checked:
        if changed >= limit:
            return path
    return None


def _nearest_folder(path: str) -> tuple[str, list[Any]]:
    """The closest existing folder above ``path`` and its stat (the folder a removal changed)."""
    while True:
        parent = os.path.dirname(path)
        state = _stat(parent)
        if len(state) == 5 or parent == path:
            return parent, state if len(state) == 5 else [0, 0, 0, 0, True]
        path = parent


__all__ = [
    "FORMAT",
    "SWITCH",
    "NotCacheable",
    "canonical",
    "env_values",
    "path_states",
    "plugin_digest",
    "recently_changed",
    "record_digest",
    "world",
]
