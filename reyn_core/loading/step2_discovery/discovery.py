"""Discovery: which Reyn plugins are installed, and which commands they add, from entry-point
metadata only.

Nothing is imported here. The entry-point groups ``reyn.plugins`` (plugin id = module) and
``reyn.commands`` (command name = the plugin id of the same distribution that implements it) are
scanned on every call (a few milliseconds): nothing is cached, so a load after an install, an
upgrade or an uninstall in the same process sees what is installed now. ``reyn --help`` lists the
declared commands of installed plugins, enabled or not, from this metadata alone: a disabled plugin
is never imported to learn them.
"""

from __future__ import annotations

import configparser
import importlib.metadata as md
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

GROUP = "reyn.plugins"
COMMANDS_GROUP = "reyn.commands"


@dataclass(frozen=True, slots=True)
class DiscoveredPlugin:
    """One ``reyn.plugins`` entry point: plugin id, its value, and the distribution providing it."""

    plugin_id: str
    entry_point: str
    distribution: str
    version: str
    ep: md.EntryPoint = field(compare=False, repr=False)
    dist: md.Distribution | None = field(compare=False, repr=False)
    commands: frozenset[str] = frozenset()
    """The command names its distribution declares for this plugin id (``reyn.commands``)."""

    @property
    def well_formed(self) -> bool:
        """Whether the value names a module or ``module:attr`` (checked without importing it)."""
        return self.ep.pattern.fullmatch(self.entry_point) is not None


@dataclass(frozen=True, slots=True)
class NearMiss:
    """An entry-point group that is almost ``reyn.plugins`` (``reyn_plugins``, ``reyn-plugins``,
    ``reyn.plugin``…): its plugins are not discovered, and ``reyn doctor`` says why."""

    distribution: str
    version: str
    group: str
    names: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class DeclaredCommand:
    """One ``reyn.commands`` entry point: ``reyn <name>`` is implemented by plugin ``plugin_id`` of
    ``distribution`` (its ``reyn_cli_commands`` hook, once the plugin is enabled and loaded).

    ``summary`` is the distribution's one-line ``Summary`` metadata, for ``reyn --help``."""

    name: str
    plugin_id: str
    distribution: str
    version: str
    summary: str = ""


@dataclass(frozen=True, slots=True)
class Discovery:
    """Every discovered plugin, grouped by id (an id may be claimed by several distributions), the
    commands installed distributions declare, and the distributions whose entry-point group is a near
    miss of ``reyn.plugins``."""

    plugins: tuple[DiscoveredPlugin, ...]
    near_misses: tuple[NearMiss, ...] = ()
    commands: tuple[DeclaredCommand, ...] = ()

    def declared_commands(self) -> Mapping[str, tuple[DeclaredCommand, ...]]:
        """Command name → its declarations, sorted by name. A declaration counts only when its
        distribution also provides that plugin id in ``reyn.plugins`` (a command is always some
        installed plugin's); a name declared by several distributions keeps them all (the load then
        uses none of them, ``RI007``)."""
        provided = {(p.distribution, p.plugin_id) for p in self.plugins}
        grouped: dict[str, list[DeclaredCommand]] = {}
        for c in self.commands:
            if (c.distribution, c.plugin_id) in provided:
                grouped.setdefault(c.name, []).append(c)
        return {k: tuple(v) for k, v in sorted(grouped.items())}

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


def discover(*, path: Iterable[str] | None = None) -> Discovery:
    """Scan the ``reyn.plugins`` entry-point group (metadata only) on ``path`` (default ``sys.path``)."""
    plugins, near, commands = _scan(list(path if path is not None else sys.path))
    return Discovery(tuple(plugins), tuple(near), tuple(commands))


def _scan(path: list[str]) -> tuple[list[DiscoveredPlugin], list[NearMiss], list[DeclaredCommand]]:
    out: list[DiscoveredPlugin] = []
    near: list[NearMiss] = []
    commands: list[DeclaredCommand] = []
    seen: set[str] = set()
    for dist in md.distributions(path=path):
        # The first distribution of a name on the path wins, exactly as for imports.
        norm = _normalized_name(dist)
        if norm in seen:
            continue
        seen.add(norm)
        text = dist.read_text("entry_points.txt")
        if not text or "reyn" not in text.lower():
            continue
        parser = parse_entry_points(text)
        if parser is None:
            continue
        missed = [g for g in parser.sections() if g != GROUP and _is_near_miss(g)]
        if not parser.has_section(GROUP) and not missed:
            continue
        meta = dist.metadata  # parsed on every access: read it once
        name = meta["Name"] or norm
        version = meta["Version"] or ""
        near += [NearMiss(name, version, g, tuple(n for n, _ in parser.items(g))) for g in missed]
        if parser.has_section(GROUP):
            declared: list[DeclaredCommand] = []
            if parser.has_section(COMMANDS_GROUP):
                # a METADATA without Summary is valid; meta["Summary"] raises KeyError on some versions
                summary = " ".join((meta.get("Summary") or "").split())[:200]  # type: ignore[attr-defined]
                for command, plugin_id in parser.items(COMMANDS_GROUP):
                    if _is_command_name(command) and plugin_id.strip():
                        declared.append(DeclaredCommand(command, plugin_id.strip(), name, version, summary))
            commands += declared
            for ep_name, value in parser.items(GROUP):
                ep = md.EntryPoint(name=ep_name, value=value.strip(), group=GROUP)
                own = frozenset(c.name for c in declared if c.plugin_id == ep.name)
                out.append(DiscoveredPlugin(ep.name, ep.value, name, version, ep, dist, own))
    return out, near, commands


def _is_command_name(name: str) -> bool:
    """A word ``reyn`` can take as a command (not an option, no spaces or path separators)."""
    return (
        bool(name) and len(name) <= 64 and not name.startswith("-") and name.replace("-", "_").isidentifier()
    )


def parse_entry_points(text: str) -> configparser.ConfigParser | None:
    """``entry_points.txt``, parsed here rather than through ``dist.entry_points``.

    Parsing the text ourselves keeps a malformed value (reported later as RD004) from breaking the
    scan: some ``importlib_metadata`` releases raise on it while building ``dist.entry_points``,
    which would hide every other plugin of the distribution and fail discovery as a whole.
    """
    parser = configparser.ConfigParser(delimiters=("=",), interpolation=None, strict=False)
    parser.optionxform = str  # type: ignore[assignment, method-assign]  # entry-point names are case-sensitive
    try:
        parser.read_string(text)
    except configparser.Error:
        return None
    return parser


def _is_near_miss(group: str) -> bool:
    """Whether ``group`` looks like a misspelt ``reyn.plugins`` (case, separators, a letter off)."""
    import difflib

    folded = group.strip().lower()
    return difflib.SequenceMatcher(None, folded, GROUP).ratio() >= 0.8 or folded.replace("-", ".").replace(
        "_", "."
    ) in (GROUP, "reyn.plugin")


def _normalized_name(dist: md.Distribution) -> str:
    name = getattr(dist, "_normalized_name", None)  # cheap: taken from the .dist-info folder name
    if not name:
        name = dist.metadata["Name"] or ""
    return name_key(str(name))


def name_key(name: str) -> str:
    """A distribution's name as names are compared: lower case, ``-`` and ``.`` as ``_``."""
    return name.lower().replace("-", "_").replace(".", "_")
