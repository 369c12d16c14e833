"""``ToolRegistry``: the read-only snapshot both surfaces are rendered from and dispatched against."""

from __future__ import annotations

import difflib
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, TypeVar, final

from .. import gates
from ..context import ToolContext
from ..errors import RegistryFrozen, ToolNotFound
from ..operator_policy import NO_POLICY, OperatorPolicy
from ..remote_log import FailureLog
from ..schema import SchemaIssue
from ..tool import ToolDefinition, refuse_subclassing
from .prepared import PreparedTool

if TYPE_CHECKING:
    from ..calls import CallApprovals, ToolCallHooks  # annotations only: a render never imports them
    from ..validation.compiled import SchemaValidator


@dataclass(frozen=True, slots=True)
class RegisteredTool:
    """A tool as registered: the checked definition, the warnings found when it was checked, and the
    ``SchemaValidator`` of its registered schema that the check compiled (``schema_validator``; the
    snapshot's entry validates with this very object when the schema is the tool's validator)."""

    definition: ToolDefinition
    warnings: tuple[SchemaIssue, ...] = ()
    validator: SchemaValidator | None = field(default=None, compare=False, repr=False)


_EMPTY: Mapping[str, Any] = MappingProxyType({})
_T = TypeVar("_T")
# What a snapshot keeps of what it derived (visible sets per call key, search indexes, ...): the most
# recently used entries, so a long-running host that sees many agents or contexts stays bounded.
DERIVED_ENTRIES = 64


def _not_found(name: object, near: list[str]) -> ToolNotFound:
    hint = f"; did you mean {', '.join(map(repr, near))}?" if near else ""
    return ToolNotFound(f"no tool named {str(name)[:80]!r}{hint}", tool=str(name)[:80])


@final
class ToolRegistry:
    """Tools by name, in a deterministic (sorted) order, with the operator policy that gates them.

    Immutable, so renderers and the dispatcher may read one from many tasks and threads. Build one
    with ``RegistryBuilder`` (``register`` checks each tool, ``freeze()`` returns this snapshot); the
    plugin loader builds one from a profile. ``ToolRegistry()`` is the empty registry.

    Final (subclassing raises ``TypeError``), like ``ToolDefinition`` and the policies: the snapshot
    owns its prepared form (``prepared``: the gate layers it fixes, the one validator of each tool),
    and nothing can compute those differently later.
    """

    # ``operator``, ``hooks``, ``call_hooks`` and ``approvals`` are read-only attributes
    # (``__setattr__`` and ``__delattr__`` refuse): the dispatcher reads them on every call, without
    # a property's frame.
    __slots__ = {
        "__weakref__": None,
        "_derived": None,
        "_original_names": None,
        "_prepare_lock": None,
        "_prepared": None,
        "_settings": None,
        "_sorted": None,
        "_tools": None,
        "approvals": "The approval check the dispatcher runs before the hooks and the handler (None: none).",
        "call_hooks": "``hooks`` when they have a ``before`` or an ``after`` hook, else None: decided when "
        "the snapshot is made, so a call to a registry without hooks does no hook work at all.",
        "failures": "Where what a tool's own ``available(ctx)`` raised is logged, once per tool and kind of "
        "failure (``gates.available``: the model sees fixed words and the record's reference).",
        "hooks": "The ``before`` / ``after`` hooks the dispatcher runs around every call (None: none).",
        "host_files": "The host's own files (absolute path → what it is: the profile, the lock, the audit "
        "log, the approval store, ...; ``reyn_core.loading.trusted_files``), which no confined process "
        "and no tool may write: handed to every call's context (``context_for``).",
        "operator": "Gate layer 2: the operator policy of the profile this registry was built from.",
    }
    _tools: Mapping[str, RegisteredTool]
    _sorted: tuple[ToolDefinition, ...]
    _original_names: Mapping[str, str]
    _settings: Mapping[str, Any]
    operator: OperatorPolicy
    hooks: ToolCallHooks | None
    call_hooks: ToolCallHooks | None
    approvals: CallApprovals | None
    host_files: Mapping[str, str]
    failures: FailureLog
    _prepared: dict[str, PreparedTool]
    _prepare_lock: threading.Lock
    _derived: dict[str, OrderedDict[Hashable, Any]]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        refuse_subclassing(cls)

    def __init__(
        self,
        tools: Mapping[str, RegisteredTool] = _EMPTY,
        *,
        original_names: Mapping[str, str] = _EMPTY,
        settings: Mapping[str, Any] = _EMPTY,
        operator: OperatorPolicy = NO_POLICY,
        hooks: ToolCallHooks | None = None,
        approvals: CallApprovals | None = None,
        host_files: Mapping[str, str] = _EMPTY,
    ) -> None:
        # The entries are trusted as checked: RegistryBuilder.freeze() is the way to make them.
        for name, entry in tools.items():
            if type(entry) is not RegisteredTool or entry.definition.name != name:
                raise TypeError(f"registry entry {name!r} must be a RegisteredTool of that name")
        init = object.__setattr__
        init(self, "_tools", MappingProxyType(dict(tools)))
        init(self, "_sorted", tuple(tools[n].definition for n in sorted(tools)))
        init(self, "_original_names", MappingProxyType(dict(original_names)))
        init(self, "operator", operator)
        init(self, "hooks", hooks)
        # decided once: a snapshot whose hooks have neither ``before`` nor ``after`` runs none
        init(self, "call_hooks", hooks if hooks is not None and (hooks.before or hooks.after) else None)
        init(self, "approvals", approvals)
        init(self, "host_files", MappingProxyType(dict(host_files)))
        init(self, "_settings", MappingProxyType(dict(settings)))
        # Each tool prepared for calls here, when the snapshot is made (``PreparedTool``).
        init(
            self,
            "_prepared",
            {
                name: PreparedTool(
                    entry.definition, not entry.definition.plugin_id and not host_files, entry.validator
                )
                for name, entry in tools.items()
            },
        )
        init(self, "_prepare_lock", threading.Lock())
        init(self, "_derived", {})
        init(self, "failures", FailureLog("available"))

    def __setattr__(self, name: str, value: Any) -> None:
        # A snapshot's policy is part of its gates: swapping `operator` or `hooks` would silently
        # switch off layer 2 or the audit log, so nothing on it can be changed.
        raise RegistryFrozen(f"this registry is frozen; {name!r} cannot be changed (build a new registry)")

    def __delattr__(self, name: str) -> None:
        raise RegistryFrozen(f"this registry is frozen; {name!r} cannot be deleted (build a new registry)")

    @property
    def frozen(self) -> bool:
        """Always True: a ``ToolRegistry`` is a snapshot (``RegistryBuilder`` is what changes)."""
        return True

    # ------------------------------------------------------------------ reading

    def __len__(self) -> int:
        return len(self._tools)

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __iter__(self) -> Iterator[ToolDefinition]:
        return iter(self._sorted)

    def tools(self) -> tuple[ToolDefinition, ...]:
        """Every tool, sorted by name: independent of registration or install order."""
        return self._sorted

    def entries(self) -> Mapping[str, RegisteredTool]:
        """Name → the registered tool with its warnings (read-only)."""
        return self._tools

    def get(self, name: str) -> ToolDefinition:
        """The tool called ``name`` or ``ToolNotFound`` listing near names of *every* tool (the host's
        view: a caller-facing error comes from ``not_found``, which suggests only what it may see)."""
        entry = self._tools.get(name) if isinstance(name, str) else None
        if entry is None:
            near = difflib.get_close_matches(str(name), list(self._tools), n=3)
            raise _not_found(name, near)
        return entry.definition

    def not_found(
        self,
        name: object,
        surface: str,
        ctx: ToolContext,
        *,
        exclude: Iterable[str] = (),
        allowed_ops: Iterable[str] | None = None,
    ) -> ToolNotFound:
        """The ``ToolNotFound`` a caller gets for ``name``: "did you mean" names only tools that
        ``gates.check`` lets ``surface`` see in ``ctx`` — a near miss never reveals a hidden tool."""
        ex = frozenset(gates.as_names(exclude, "exclude"))
        ops = gates.as_names(allowed_ops, "allowed_ops") if allowed_ops is not None else None
        # every name above the cutoff, nearest first; gates only on those (a short list)
        candidates = difflib.get_close_matches(str(name), list(self._tools), n=len(self._tools) or 1)
        near: list[str] = []
        for candidate in candidates:
            if gates.check(
                self._tools[candidate].definition, surface, ctx, registry=self, exclude=ex, allowed_ops=ops
            ):
                near.append(candidate)
                if len(near) == 3:
                    break
        return _not_found(name, near)

    def warnings(self, name: str) -> tuple[SchemaIssue, ...]:
        """Provider-lint warnings recorded when ``name`` was registered."""
        entry = self._tools.get(name)
        return entry.warnings if entry else ()

    def registered(self, name: str) -> RegisteredTool:
        """The entry ``name`` was registered as (its definition, warnings and schema validator): a
        derived registry's builder adopts it (``CheckedDefinitions``) instead of checking again."""
        entry = self._tools.get(name) if type(name) is str else None
        if entry is None:
            self.get(name)  # raises ToolNotFound with the near names
            raise AssertionError("unreachable")  # pragma: no cover
        return entry

    def original_name(self, name: str) -> str:
        """The plugin's own name for a (possibly prefixed) tool."""
        return self._original_names.get(name, name)

    @property
    def original_names(self) -> Mapping[str, str]:
        """Prefixed name → the plugin's own name, for the tools that were renamed (read-only)."""
        return self._original_names

    @property
    def plugin_settings(self) -> Mapping[str, Any]:
        """Plugin id → validated settings (read-only)."""
        return self._settings

    # ------------------------------------------------------------------ prepared for calls

    def prepared(self, name: str) -> PreparedTool:
        """The tool called ``name`` as this snapshot prepared it for calls (``ToolNotFound`` when
        there is none): made when the snapshot was, the same object for every call."""
        entry = self._prepared.get(name) if type(name) is str else None
        if entry is None:
            self.get(name)  # raises ToolNotFound with the near names
            raise AssertionError("every registered tool is prepared")  # pragma: no cover
        return entry

    def fixed_layers(self, tool: ToolDefinition, surface: str) -> gates.Decision | None:
        """``gates.fixed_layers`` of ``tool`` under this snapshot's policy, decided once per tool of
        this snapshot and surface (an object that is not its registered definition is decided
        afresh). A policy the gates cannot evaluate raises here, inside the call, every time."""
        entry = self._prepared.get(tool.name)
        if entry is not None and entry.definition is tool and surface in entry.refusals:
            return entry.refusals[surface]  # the common call: decided before
        registered = self._tools.get(tool.name)
        if registered is None or registered.definition is not tool:
            return gates.fixed_layers(tool, surface, self.operator, self._original_names)
        refusals = self.prepared(tool.name).refusals
        if surface in refusals:
            return refusals[surface]
        decision = gates.fixed_layers(tool, surface, self.operator, self._original_names)
        refusals[surface] = decision
        return decision

    # ------------------------------------------------------------------ gating

    def context_for(self, tool: ToolDefinition, ctx: ToolContext) -> ToolContext:
        """``ctx`` with the owning plugin's settings and this registry's ``host_files`` (merged with
        any the host set: a context a host built cannot drop them), as the tool's handler and
        ``available`` see it."""
        return self._plugin_context(tool.plugin_id, ctx)

    def _plugin_context(self, plugin_id: str | None, ctx: ToolContext) -> ToolContext:
        """``context_for`` a tool of ``plugin_id`` (all it reads of the tool). A plugin's tool sees its
        own plugin's settings, None when it has none — never what the caller's ``ctx`` carried (a
        handler listing its registry holds its own plugin's); a host tool (no plugin) sees ``ctx``'s."""
        if plugin_id:
            settings = self._settings.get(plugin_id)
            if ctx.settings is not settings:
                ctx = ctx.with_settings(settings)
        return ctx.with_host_files(self.host_files) if self.host_files else ctx

    def derived(
        self, kind: str, key: Hashable, build: Callable[[], _T], *, keep: int = DERIVED_ENTRIES
    ) -> _T:
        """What this snapshot derived of ``kind`` for ``key`` (``build()`` the first time; the ``keep``
        most recently used of each kind are kept, so many cheap entries never evict a costly one).
        The snapshot owns it, so it lives and dies with the snapshot; ``key`` must name everything
        ``build`` reads besides the snapshot (a frozen value)."""
        with self._prepare_lock:
            entries = self._derived.setdefault(kind, OrderedDict())
            if key in entries:
                entries.move_to_end(key)
                return entries[key]
        value = build()  # outside the lock: other calls are not held up by a slow build
        with self._prepare_lock:
            value = entries.setdefault(key, value)
            entries.move_to_end(key)
            while len(entries) > keep:
                entries.popitem(last=False)
        return value

    def visible(
        self,
        surface: str,
        ctx: ToolContext,
        *,
        exclude: Iterable[str] = (),
        allowed_ops: Iterable[str] | None = None,
    ) -> list[ToolDefinition]:
        """The tools ``gates.check`` lets ``surface`` see in ``ctx``, sorted by name.

        What the gates decide from the snapshot (role, operator, runtime) and from the call's
        ``gates.CallKey`` (surface, agent, exclusions, step and agent allowlists, ``allowed_ops``) is
        kept per key; each tool's own ``available(ctx)`` is asked again on every call, in ``ctx``."""
        admitted, _, conditional = self._visible_for(surface, ctx, exclude, allowed_ops)
        if not conditional:
            return list(admitted)
        hidden = self._hidden(conditional, ctx)
        return [t for t in admitted if t.name not in hidden]

    def visible_names(
        self,
        surface: str,
        ctx: ToolContext,
        *,
        exclude: Iterable[str] = (),
        allowed_ops: Iterable[str] | None = None,
    ) -> frozenset[str]:
        """The names of ``visible(surface, ctx, ...)``, as a set (kept, like it, per call key)."""
        _, names, conditional = self._visible_for(surface, ctx, exclude, allowed_ops)
        hidden = self._hidden(conditional, ctx) if conditional else ()
        return names.difference(hidden) if hidden else names

    def _hidden(self, conditional: tuple[ToolDefinition, ...], ctx: ToolContext) -> set[str]:
        """The names of ``conditional`` tools whose own ``available(ctx)`` refuses: all asked at once,
        within one deadline in all (``gates.available_each``). The tools of one plugin are asked in one
        context object, so tools sharing a check share its ask (``own_check.ask_all``)."""
        contexts: dict[str | None, ToolContext] = {}
        for t in conditional:
            if t.plugin_id not in contexts:
                contexts[t.plugin_id] = self._plugin_context(t.plugin_id, ctx)
        asked = [(t, contexts[t.plugin_id]) for t in conditional]
        return {
            t.name
            for t, d in zip(conditional, gates.available_each(asked, self.failures), strict=True)
            if not d
        }

    def _visible_for(
        self, surface: str, ctx: ToolContext, exclude: Iterable[str], allowed_ops: Iterable[str] | None
    ) -> tuple[tuple[ToolDefinition, ...], frozenset[str], tuple[ToolDefinition, ...]]:
        ex = exclude if type(exclude) is frozenset else frozenset(gates.as_names(exclude, "exclude"))
        key = gates.call_key(surface, ctx, self.operator, exclude=ex, allowed_ops=allowed_ops)
        return self.derived("visible", key, lambda: self._admitted(key))

    def _admitted(
        self, key: gates.CallKey
    ) -> tuple[tuple[ToolDefinition, ...], frozenset[str], tuple[ToolDefinition, ...]]:
        """The tools every layer but ``available`` admits for ``key``, their names, and those of them
        that have an ``available`` check (asked again on every call)."""
        admitted = tuple(
            t for t in self._sorted if self.fixed_layers(t, key.surface) is None and gates.call_layer(t, key)
        )
        conditional = tuple(t for t in admitted if t.available is not None)
        return admitted, frozenset(t.name for t in admitted), conditional
