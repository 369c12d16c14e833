"""Tool deferral: which gate-visible tools the router's tools array leaves out, and where the search
tool that lets the model find them goes.

The search tool is an ordinary loaded tool (``DeferralPolicy.search_tool``, by default the search
pack's ``find_tools``): the core ranks nothing. A policy that defers anything without it loaded is
refused (``missing_search_tool``); its results name the tools found as ``{"tools": [{"name": ...},
...]}`` in the envelope's ``data`` (what ``found_tool_names`` reads).

A deferred tool is not rendered; it keeps everything else — gates, validation, audit, lock — and the
model may still call it by name. Deferral is operator policy (``[surfaces.router.defer]``), never a
gate: it only chooses among the tools ``registry.visible`` already allows, so it cannot widen what a
caller may see. Unrelated to ``dispatch_kind="deferred"`` (a tool whose call the host finishes).

The split, for one turn (deterministic: same registry, policy, context and found names → same
bytes):

1. candidates = ``registry.visible("router", ctx)``, the search tool aside (never deferred; offered
   only when the gates show it to this caller);
2. tools named by ``defer.tools`` / ``defer.plugins`` / ``defer.clusters`` are deferred unless found;
3. the rest are ordered most-preferred first: found tools (most recently found first), then by the
   first ``defer.prefer`` entry that names the tool, its plugin or its cluster (unlisted last), then
   host tools before plugin tools and plugins in ``plugins.enable`` order, then by name;
4. with ``max_tools`` / ``max_tokens``, the longest prefix of that order that fits is kept (the search
   tool counts when it is offered) and everything after it is deferred;
5. the array is the kept tools that the first turn (nothing found) would also render, by name; then
   the search tool, offered when the first turn defers anything (and kept for the whole
   conversation, even once everything has been found); then the tools kept only because they were
   found, in the order they were found.

"Found" means named in a search result or called by the model earlier in the conversation
(``found_tool_names``): the router loop adds them from the next turn on.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from .context import ToolContext, as_names
from .errors import StrictSchemaError
from .jsondata import compact_json, read_json
from .render.router import StrictRenderError, render_router_tool
from .tool import ToolDefinition, is_valid_tool_name

if TYPE_CHECKING:
    from .registry import ToolRegistry

TokenCounter = Callable[[Mapping[str, Any]], int]

DEFAULT_SEARCH_TOOL = "find_tools"
"""The search tool's name unless ``[surfaces.router.defer] search_tool`` says otherwise: the tool the
search pack registers (docs/packs/search.md; the core names no pack's distribution)."""
MAX_RESULT_VALUES = 100_000
"""The most JSON values a search result's message may hold to be read for tool names (counted before
it is parsed; a result holds a few per hit): a message of more is not read."""


def missing_search_tool(registry: ToolRegistry, search_tool: str) -> str | None:
    """Why deferral cannot work over ``registry``, or None: a policy that defers anything needs its
    search tool loaded, or the tools it leaves out could only be called by a name the model was
    never told (the one wording of the load's ``ProfileError``, ``ToolDeferral`` and ``reyn tools
    search``)."""
    if search_tool in registry:
        return None
    return (
        f"no tool {search_tool!r} is loaded to find deferred tools: enable the plugin that registers "
        'it (the search pack: plugins.enable = [..., "search"], docs/packs/search.md) or set '
        "search_tool to the loaded tool that searches"
    )


def estimate_tokens(entry: Mapping[str, Any]) -> int:
    """The budget's token measure of one tools-array entry: its canonical JSON in UTF-8 bytes / 4,
    rounded up. Deterministic and dependency-free (the same on every install); the benchmark in
    docs/large-registries.md compares it with a real tokenizer."""
    return (len(compact_json(entry).encode("utf-8")) + 3) // 4


def _budget(value: object, what: str) -> int | None:
    if value is None:
        return None
    if type(value) is not int or value < 1:
        raise ValueError(f"{what} must be a whole number of at least 1 (or None for no limit), got {value!r}")
    return value


@dataclass(frozen=True, slots=True)
class DeferralPolicy:
    """What the operator defers on the router surface (``[surfaces.router.defer]``).

    ``tools`` / ``plugins`` / ``clusters`` are always deferred (until found); ``max_tools`` and
    ``max_tokens`` (``estimate_tokens``) cap the array, deferring the least-preferred tools;
    ``prefer`` (tool names, plugin ids or clusters) and ``plugin_order`` (the profile's
    ``plugins.enable``) define preference; ``search_tool`` names the search tool.
    """

    tools: frozenset[str] = frozenset()
    plugins: frozenset[str] = frozenset()
    clusters: frozenset[str] = frozenset()
    prefer: tuple[str, ...] = ()
    plugin_order: tuple[str, ...] = ()
    max_tools: int | None = None
    max_tokens: int | None = None
    search_tool: str = DEFAULT_SEARCH_TOOL

    def __post_init__(self) -> None:
        for name in ("tools", "plugins", "clusters"):
            object.__setattr__(self, name, frozenset(as_names(getattr(self, name), name)))
        for name in ("prefer", "plugin_order"):
            object.__setattr__(self, name, as_names(getattr(self, name), name))
        for name in ("tools", "plugins", "clusters", "prefer", "plugin_order"):
            bad = [v for v in getattr(self, name) if type(v) is not str]
            if bad:
                raise TypeError(f"{name} must hold strings, got {bad[0]!r}")
        object.__setattr__(self, "max_tools", _budget(self.max_tools, "max_tools"))
        object.__setattr__(self, "max_tokens", _budget(self.max_tokens, "max_tokens"))
        if not is_valid_tool_name(self.search_tool):
            raise ValueError(
                f"search_tool must be a valid tool name (^[a-zA-Z0-9_-]{{1,64}}$), got {self.search_tool!r}"
            )

    @property
    def active(self) -> bool:
        """Whether this policy can defer anything (some list or budget is set)."""
        return bool(self.tools or self.plugins or self.clusters or self.max_tools or self.max_tokens)

    def defers(self, tool: ToolDefinition) -> str:
        """The key that always defers ``tool`` (``tools``, ``plugins``, ``clusters``), or ''."""
        if tool.name in self.tools:
            return "tools"
        if tool.plugin_id is not None and tool.plugin_id in self.plugins:
            return "plugins"
        if tool.cluster in self.clusters:
            return "clusters"
        return ""

    def preference(self, tool: ToolDefinition) -> tuple[int, int, str]:
        """The sort key of step 3 (smaller is more preferred), found tools aside."""
        keys = (tool.name, tool.plugin_id, tool.cluster)
        listed = next((i for i, entry in enumerate(self.prefer) if entry in keys), len(self.prefer))
        if tool.plugin_id is None or (tool.origin is not None and tool.origin.kind == "host"):
            plugin_rank = -1
        elif tool.plugin_id in self.plugin_order:
            plugin_rank = self.plugin_order.index(tool.plugin_id)
        else:
            plugin_rank = len(self.plugin_order)
        return listed, plugin_rank, tool.name


# --------------------------------------------------------------------------- found names


def found_tool_names(
    messages: Sequence[Mapping[str, Any]], search_tool: str = DEFAULT_SEARCH_TOOL
) -> tuple[str, ...]:
    """Tools the conversation has found: named in a ``search_tool`` result or called by the model,
    oldest first (a name found again moves to the end). The names are only candidates: the split
    keeps those the gates still allow."""
    calls: dict[str, str] = {}
    order: dict[str, None] = {}

    def mention(name: object) -> None:
        if isinstance(name, str) and is_valid_tool_name(name) and name != search_tool:
            order.pop(name, None)
            order[name] = None

    for message in messages:
        if not isinstance(message, Mapping):
            continue
        role = message.get("role")
        if role == "assistant":
            for call in message.get("tool_calls") or ():
                fn = call.get("function") if isinstance(call, Mapping) else None
                if isinstance(fn, Mapping):
                    calls[str(call.get("id"))] = str(fn.get("name"))
                    mention(fn.get("name"))
        elif role == "tool" and calls.get(str(message.get("tool_call_id"))) == search_tool:
            for name in _result_names(message.get("content")):
                mention(name)
    return tuple(order)


def _result_names(content: object) -> list[object]:
    if not isinstance(content, str) or len(content) > 1_000_000:
        return []
    try:  # a message of the conversation: bounded in values before it is parsed
        envelope = read_json(content, MAX_RESULT_VALUES)
    except (ValueError, RecursionError):
        return []
    hits = search_hits(envelope.get("data") if isinstance(envelope, Mapping) else None)
    return [h["name"] for h in hits] if hits else []


def search_hits(data: object) -> list[Mapping[str, Any]] | None:
    """The hits of a search tool's result ``data`` — ``{"tools": [{"name": ...}, ...]}``, the first
    100 entries that are objects naming a tool by a string — or None when ``data`` has not that shape
    (another tool's answer)."""
    hits = data.get("tools") if isinstance(data, Mapping) else None
    if not isinstance(hits, list):
        return None
    return [h for h in hits[:100] if isinstance(h, Mapping) and isinstance(h.get("name"), str)]


# --------------------------------------------------------------------------- the split


@dataclass(frozen=True)
class TurnTools:
    """One turn's tools array and how it was split.

    ``tools`` is the array to send; ``rendered`` its names in order (the search tool included when
    offered); ``deferred`` the visible tools left out, by name; ``reasons`` why each was left out
    (``defer.tools``, ``defer.plugins``, ``defer.clusters``, ``max_tools``, ``max_tokens``);
    ``tokens`` the array's size in ``estimate_tokens`` (or the deferral's counter).
    """

    tools: list[dict[str, Any]]
    rendered: tuple[str, ...]
    deferred: tuple[str, ...]
    reasons: Mapping[str, str] = field(default_factory=dict)
    tokens: int = 0


class ToolDeferral:
    """Deferral over one registry: the host API for any loop.

    ``registry`` is what to dispatch against: the source registry itself, whose tools include the
    search tool (gated, validated and audited by the one dispatcher like every tool).
    ``split(ctx, found).tools`` is the tools array for the next turn, the rest of the split its
    explanation. ``token_counter`` replaces ``estimate_tokens`` for ``max_tokens``.

    Raises ``ValueError`` (``missing_search_tool``) when ``policy`` defers anything and ``registry``
    has no tool ``policy.search_tool``.
    """

    def __init__(
        self,
        registry: ToolRegistry,
        policy: DeferralPolicy,
        *,
        token_counter: TokenCounter = estimate_tokens,
    ) -> None:
        problem = missing_search_tool(registry, policy.search_tool) if policy.active else None
        if problem is not None:
            raise ValueError(problem)
        self.registry = registry
        """What calls are dispatched against and tools are rendered from (the search tool is one of
        its tools)."""
        self.policy = policy
        self.count = token_counter

    def split(
        self,
        ctx: ToolContext,
        found: Iterable[str] = (),
        *,
        exclude: Iterable[str] = (),
        strict: bool = False,
        target: str = "openai",
    ) -> TurnTools:
        """The router tools for the next turn (``tools``), given the names found so far (oldest
        first), with the split explained (see the module docstring for the rule).
        ``strict`` and ``target`` as in ``render_router``: ``StrictRenderError`` if a rendered tool
        cannot be strict."""
        ctx = ctx if ctx.surface == "router" else ctx.with_surface("router")
        visible = self.registry.visible("router", ctx, exclude=exclude)
        if not self.policy.active:
            return self._render(ctx, list(visible), [], None, {}, strict, target=target)
        search_name = self.policy.search_tool
        search_def = next((t for t in visible if t.name == search_name), None)
        visible = [t for t in visible if t.name != search_name]
        by_name = {t.name: t for t in visible}
        found_order = [n for n in dict.fromkeys(found) if n in by_name]
        entries: dict[str, dict[str, Any]] = {}
        errors: dict[str, StrictSchemaError] = {}

        def entry(tool: ToolDefinition) -> dict[str, Any]:
            if tool.name not in entries:
                try:
                    entries[tool.name] = render_router_tool(
                        self.registry, tool, ctx, strict=strict, target=target
                    )
                except StrictSchemaError as exc:
                    errors[tool.name] = exc
                    entries[tool.name] = render_router_tool(self.registry, tool, ctx)
            return entries[tool.name]

        # A search tool the gates hide from this caller is not offered (nor counted in the budget):
        # what is deferred can then be called only by name.
        search_entry = entry(search_def) if search_def is not None else None
        baseline, baseline_reasons = self._select(visible, [], entry, search_entry, reserve=False)
        # The search tool stays offered for the whole conversation once anything was deferred at
        # the start, even when everything has since been found (the history refers to it).
        offer_search = bool(baseline_reasons) and search_entry is not None
        kept, reasons = self._select(visible, found_order, entry, search_entry, reserve=offer_search)
        first = [t for t in visible if t.name in kept and t.name in baseline]  # by name
        later = [by_name[n] for n in found_order if n in kept and n not in baseline]
        return self._render(
            ctx, first, later, search_entry if offer_search else None, reasons, strict, entry, errors
        )

    def _select(
        self,
        visible: Sequence[ToolDefinition],
        found: Sequence[str],
        entry: Callable[[ToolDefinition], dict[str, Any]],
        search_entry: dict[str, Any] | None,
        *,
        reserve: bool,
    ) -> tuple[set[str], dict[str, str]]:
        """The names kept and, for every deferred name, why (steps 2-4). ``reserve`` counts the
        search tool in the budget even when this selection would defer nothing."""
        policy = self.policy
        found_set = set(found)
        reasons = {
            t.name: f"defer.{why}" for t in visible if t.name not in found_set and (why := policy.defers(t))
        }
        by_name = {t.name: t for t in visible}
        ordered = [by_name[n] for n in reversed(found)]
        ordered += sorted(
            (t for t in visible if t.name not in found_set and t.name not in reasons), key=policy.preference
        )
        if policy.max_tools is None and policy.max_tokens is None:
            return {t.name for t in ordered}, reasons
        costs = [self.count(entry(t)) for t in ordered]
        if not reasons and not reserve and self._fits(len(ordered), sum(costs)):
            return {t.name for t in ordered}, reasons
        # Something is deferred, so the search tool is offered and takes its place in the budget.
        used_tools, used_tokens = (0, 0) if search_entry is None else (1, self.count(search_entry))
        kept: set[str] = set()
        for i, tool in enumerate(ordered):
            if not self._fits(used_tools + 1, used_tokens + costs[i]):
                over = "max_tools" if not self._fits(used_tools + 1, 0) else "max_tokens"
                for rest in ordered[i:]:
                    reasons[rest.name] = over
                break
            used_tools, used_tokens = used_tools + 1, used_tokens + costs[i]
            kept.add(tool.name)
        return kept, reasons

    def _fits(self, n_tools: int, tokens: int) -> bool:
        p = self.policy
        return (p.max_tools is None or n_tools <= p.max_tools) and (
            p.max_tokens is None or tokens <= p.max_tokens
        )

    def _render(
        self,
        ctx: ToolContext,
        first: list[ToolDefinition],
        later: list[ToolDefinition],
        search_entry: dict[str, Any] | None,
        reasons: dict[str, str],
        strict: bool,
        entry: Callable[[ToolDefinition], dict[str, Any]] | None = None,
        errors: Mapping[str, StrictSchemaError] | None = None,
        *,
        target: str = "openai",
    ) -> TurnTools:
        if entry is None:
            from .render.router import render_router_tools

            tools = render_router_tools(self.registry, first, ctx, strict=strict, target=target)
            return TurnTools(
                tools, tuple(t.name for t in first), (), MappingProxyType({}), sum(map(self.count, tools))
            )
        tools = [entry(t) for t in first]
        names = [t.name for t in first]
        if search_entry is not None:
            tools.append(search_entry)
            names.append(self.policy.search_tool)
        tools += [entry(t) for t in later]
        names += [t.name for t in later]
        failed = [errors[n] for n in names if errors and n in errors]
        if failed:
            raise StrictRenderError(failed, tools)
        deferred = tuple(sorted(reasons))
        return TurnTools(
            tools,
            tuple(names),
            deferred,
            MappingProxyType({n: reasons[n] for n in deferred}),
            sum(self.count(e) for e in tools),
        )
