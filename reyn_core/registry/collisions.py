"""The collision rule, written once: which claims on a tool name collide, and the one ``RT004`` wording.

Two claims collide when their names have one ``collision_key`` (case and the separators
``-``/``_``/``.`` do not make two names different; models and providers confuse such names). The
loader applies the rule to every claimant at once — a plugin registering a name twice, two
plugins, a plugin and a host tool — and registers none of them; ``RegistryBuilder.register``
applies it to one new tool against those already registered and refuses the new one. Both say so
with ``Collision.message`` and ``Collision.hint``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ..errors import ToolRegistrationError
from ..tool import ToolOrigin, collision_key


@dataclass(frozen=True, slots=True)
class Claim:
    """One claim on a tool name: the name as spelled, and who claims it."""

    name: str
    origin: ToolOrigin


@dataclass(frozen=True, slots=True)
class Collision:
    """Two or more claims on one collision key, in the order they were made."""

    claims: tuple[Claim, ...]

    @property
    def names(self) -> list[str]:
        """The distinct spellings, first claim first."""
        return list(dict.fromkeys(c.name for c in self.claims))

    def message(self, *, kept_first: bool = False) -> str:
        """The ``RT004`` message: every spelling and every origin, and what became of the claims
        (``kept_first``: the first claim stays registered and the later one is refused, as
        ``RegistryBuilder.register`` does; otherwise none of them is registered, as a load does)."""
        names = self.names
        counts: dict[tuple[str, ToolOrigin], int] = {}
        for c in self.claims:
            counts[(c.name, c.origin)] = counts.get((c.name, c.origin), 0) + 1

        def who(name: str, origin: ToolOrigin, n: int) -> str:
            times = f" ({n} times)" if n > 1 else ""
            return (f"{name!r} by " if len(names) > 1 else "by ") + origin.describe() + times

        described = " and ".join(who(name, origin, n) for (name, origin), n in counts.items())
        if len(names) == 1:
            what = f"tool name {names[0]!r} is claimed {described}"
        else:
            what = (
                "tool names that differ only in case or separators (models and providers confuse "
                f"them) are claimed: {described}"
            )
        outcome = "the later one is refused" if kept_first else "none of them is registered"
        return f"{what}; {outcome}"

    def plugin_owners(self) -> list[tuple[str, str]]:
        """(tool name, plugin id) of every claim a plugin made, first claim first, without repeats."""
        owners = [(c.name, c.origin.plugin_id) for c in self.claims if c.origin.plugin_id]
        return list(dict.fromkeys(owners))

    def hint(self) -> str:
        """The fix: one plugin claiming a name twice registers it once; two plugins keep one (or
        both under a prefix, see ``collision_fix``); host tools get names of their own."""
        owners = self.plugin_owners()
        if all(c.origin == self.claims[0].origin for c in self.claims):
            return "register each tool once, under one spelling"
        if owners:
            return collision_fix(owners)
        return "give each host tool its own name (the tools passed to load(host_tools=...) or registered)"

    def error(self, *, kept_first: bool = False) -> ToolRegistrationError:
        """This collision as the ``ToolRegistrationError`` a builder raises (code ``RT004``)."""
        return ToolRegistrationError(
            "RT004",
            self.message(kept_first=kept_first),
            tool=self.claims[-1].name,
            hint=self.hint(),
        )


def find_collisions(claims: Iterable[Claim]) -> dict[str, Collision]:
    """The collisions among ``claims``, by collision key (sorted); keys claimed once are absent."""
    groups: dict[str, list[Claim]] = {}
    for claim in claims:
        groups.setdefault(collision_key(claim.name), []).append(claim)
    return {key: Collision(tuple(group)) for key, group in sorted(groups.items()) if len(group) > 1}


def collision_fix(owners: list[tuple[str, str]]) -> str:
    """The fix for plugin tools whose names collide (``owners``: (tool name, plugin id) pairs).

    Two plugins offering one name usually offer the same capability, so the first fix is keeping
    one (excluding the other's tool). Then a prefix, on a plugin whose tool name does not already
    start with its id: ``prefix = "weather_"`` on ``weather_forecast`` would give
    ``weather_weather_forecast``."""
    name, owner = owners[-1]
    fix = f"keep one: add {name!r} to plugins.{owner}.tools.exclude"
    for tool_name, plugin in reversed(owners):
        if not (collision_key(tool_name) + "_").startswith(collision_key(plugin) + "_"):
            return (
                f'{fix}; or keep both: set [plugins.{plugin}] prefix = "{plugin}_" '
                f"(its tool becomes {plugin + '_' + tool_name!r})"
            )
    return f"{fix}; or keep both under other names with a [plugins.<id>] prefix"


__all__ = ["Claim", "Collision", "collision_fix", "find_collisions"]
