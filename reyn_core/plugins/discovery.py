"""Discovery: which Reyn plugins are installed, from entry-point metadata only.

Nothing is imported here. The entry-point group ``reyn.plugins`` is scanned once per process (per
``sys.path``) and cached; ``discover(refresh=True)`` rescans after installs in the same process.
"""

from __future__ import annotations

import configparser
import importlib.metadata as md
import sys
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

GROUP = "reyn.plugins"


@dataclass(frozen=True, slots=True)
class DiscoveredPlugin:
    """One ``reyn.plugins`` entry point: plugin id, its value, and the distribution providing it."""

    plugin_id: str
    entry_point: str
    distribution: str
    version: str
    ep: md.EntryPoint = field(compare=False, repr=False)
    dist: md.Distribution | None = field(compare=False, repr=False)

    @property
    def well_formed(self) -> bool:
        """Whether the value names a module or ``module:attr`` (checked without importing it)."""
        return self.ep.pattern.fullmatch(self.entry_point) is not None


@dataclass(frozen=True, slots=True)
class Discovery:
    """Every discovered plugin, grouped by id (an id may be claimed by several distributions)."""

    plugins: tuple[DiscoveredPlugin, ...]

    def by_id(self) -> Mapping[str, tuple[DiscoveredPlugin, ...]]:
        """Plugin id → the candidates that claim it, sorted by distribution name."""
        grouped: dict[str, list[DiscoveredPlugin]] = {}
        for p in self.plugins:
            grouped.setdefault(p.plugin_id, []).append(p)
        return {k: tuple(sorted(v, key=lambda p: p.distribution.lower())) for k, v in sorted(grouped.items())}

    @property
    def ids(self) -> tuple[str, ...]:
        """Every discovered plugin id, sorted."""
        return tuple(self.by_id())


_CACHE: dict[tuple[str, ...], Discovery] = {}
_LOCK = threading.Lock()


def discover(*, refresh: bool = False, path: Iterable[str] | None = None) -> Discovery:
    """Scan the ``reyn.plugins`` entry-point group (metadata only) on ``path`` (default ``sys.path``).

    The result is cached per path; ``refresh=True`` rescans.
    """
    key = tuple(path if path is not None else sys.path)
    if not refresh:
        cached = _CACHE.get(key)
        if cached is not None:
            return cached
    found = Discovery(tuple(_scan(list(key))))
    with _LOCK:
        _CACHE[key] = found
    return found


def _scan(path: list[str]) -> list[DiscoveredPlugin]:
    out: list[DiscoveredPlugin] = []
    seen: set[str] = set()
    for dist in md.distributions(path=path):
        # The first distribution of a name on the path wins, exactly as for imports.
        norm = _normalized_name(dist)
        if norm in seen:
            continue
        seen.add(norm)
        eps = _group_entry_points(dist)
        if not eps:
            continue
        meta = dist.metadata  # parsed on every access: read it once
        name = meta["Name"] or norm
        version = meta["Version"] or ""
        for ep in eps:
            out.append(DiscoveredPlugin(ep.name, ep.value, name, version, ep, dist))
    return out


def _group_entry_points(dist: md.Distribution) -> list[md.EntryPoint]:
    """This distribution's ``reyn.plugins`` entry points, parsed from ``entry_points.txt`` here.

    Parsing the text ourselves keeps a malformed value (reported later as RD004) from breaking the
    scan: some ``importlib_metadata`` releases raise on it while building ``dist.entry_points``,
    which would hide every other plugin of the distribution and fail discovery as a whole.
    """
    text = dist.read_text("entry_points.txt")
    if not text or GROUP not in text:
        return []
    parser = configparser.ConfigParser(delimiters=("=",), interpolation=None, strict=False)
    parser.optionxform = str  # type: ignore[assignment, method-assign]  # entry-point names are case-sensitive
    try:
        parser.read_string(text)
    except configparser.Error:
        return []
    if not parser.has_section(GROUP):
        return []
    return [md.EntryPoint(name=name, value=value.strip(), group=GROUP) for name, value in parser.items(GROUP)]


def _normalized_name(dist: md.Distribution) -> str:
    name = getattr(dist, "_normalized_name", None)  # cheap: taken from the .dist-info folder name
    if not name:
        name = dist.metadata["Name"] or ""
    return str(name).lower().replace("-", "_").replace(".", "_")
