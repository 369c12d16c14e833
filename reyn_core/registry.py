"""``ToolRegistry``: the one catalogue both surfaces are rendered from and dispatched against."""

from __future__ import annotations

import re
import threading
import unicodedata
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field, fields, replace
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from . import gates
from .context import ToolContext
from .errors import RegistryFrozen, ToolNotFound, ToolRegistrationError
from .schema import SchemaIssue, check_tool_schema, copy_json
from .tool import (
    NAME_PATTERN,
    PURITIES,
    ToolDefinition,
    ToolGates,
    ToolOrigin,
    as_definition,
    is_valid_tool_name,
)

if TYPE_CHECKING:
    from .dispatch import ToolCallHooks
    from .validation import Validator


_SEPARATORS = re.compile(r"[\s_.\-]+")


def collision_key(name: str) -> str:
    """The key two tool names collide on: names that providers and models confuse get one key.

    Case is folded (``Read_File`` = ``read_file``), every run of separators (``-``, ``_``, ``.``,
    whitespace) counts as one ``_`` and separators at either end are ignored (``read-file`` =
    ``read__file`` = ``_read_file``), after Unicode NFKC normalisation. The registered name keeps
    its spelling; only uniqueness is judged on the key.
    """
    folded = unicodedata.normalize("NFKC", name).casefold()
    return _SEPARATORS.sub("_", folded).strip("_") or folded


@dataclass(frozen=True, slots=True)
class RegisteredTool:
    """A tool as registered: the definition plus the warnings found when it was checked."""

    definition: ToolDefinition
    warnings: tuple[SchemaIssue, ...] = ()


@dataclass
class _Caches:
    """Per-snapshot caches filled lazily (compiled validators, resolved handlers)."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    validators: dict[str, Validator] = field(default_factory=dict)
    null_optionals: dict[str, frozenset[str]] = field(default_factory=dict)
    handlers: dict[str, Any] = field(default_factory=dict)


def _field_problem(d: ToolDefinition) -> str:
    """What is wrong with a definition's non-schema fields ('' when nothing): typos here would
    otherwise be silently accepted (a gate of "Allow" would quietly deny)."""
    # Exact types, not subclasses: a str or ToolGates subclass could change hashing, equality or
    # allows() after the checks ran (bypassing collisions, tools.exclude or the role gate).
    gates_ok = (
        type(d.gates) is ToolGates
        and type(d.gates.router) is str
        and type(d.gates.phase) is str
        and {d.gates.router, d.gates.phase} <= {"allow", "deny"}
    )
    if not gates_ok:
        return (
            f"gates must be ToolGates(router=..., phase=...) with values 'allow' or 'deny', got {d.gates!r}"
        )
    if type(d.purity) is not str or d.purity not in PURITIES:
        return f"purity {d.purity!r} is not one of {list(PURITIES)}"
    if type(d.dispatch_kind) is not str or d.dispatch_kind not in ("inline", "deferred"):
        return f"dispatch_kind {d.dispatch_kind!r} is not 'inline' or 'deferred'"
    if type(d.cluster) is not str or not d.cluster:
        return f"cluster must be a non-empty string, got {d.cluster!r}"
    t = d.timeout_s
    if t is not None and (isinstance(t, bool) or not isinstance(t, int | float) or not 0 < t < float("inf")):
        return f"timeout_s must be a positive number of seconds or None, got {t!r}"
    for name in ("available", "schema_enricher"):
        value = getattr(d, name)
        if value is not None and not callable(value):
            return f"{name} must be callable or None, got {type(value).__name__}"
    return ""


class ToolRegistry:
    """Tools by name, in a deterministic (sorted) order, with the operator policy that gates them.

    Build one with ``register``; call ``freeze()`` for the immutable snapshot that renderers and the
    dispatcher read (safe from many tasks and threads). The plugin loader builds and freezes one
    from a profile; hosts and tests may build their own.
    """

    def __init__(
        self,
        *,
        operator: gates.OperatorPolicy = gates.NO_POLICY,
        settings: Mapping[str, Any] | None = None,
        hooks: ToolCallHooks | None = None,
        schema_check: Callable[..., list[SchemaIssue]] | None = None,
    ) -> None:
        # ``schema_check(parameters, phase_usable=...)`` replaces ``check_tool_schema``; the plugin
        # loader passes a cache of its results so a warm start skips the metaschema work.
        self._schema_check = schema_check or check_tool_schema
        self._tools: dict[str, RegisteredTool] = {}
        self._original_names: dict[str, str] = {}
        self._keys: dict[str, str] = {}  # collision_key(name) -> the registered name
        self._frozen = False
        self.operator = operator
        self._settings: dict[str, Any] = dict(settings or {})
        self.hooks = hooks
        self._sorted: tuple[ToolDefinition, ...] | None = None
        self._caches = _Caches()

    # ------------------------------------------------------------------ building

    def register(
        self,
        obj: ToolDefinition | Callable[..., Any],
        *,
        origin: ToolOrigin | None = None,
        original_name: str | None = None,
    ) -> ToolDefinition:
        """Check and add one tool. Raises ``ToolRegistrationError`` (with a diagnostic code) when the
        name is invalid, the schema has errors, or the name is already taken — naming both origins.

        ``origin``, when given, replaces whatever origin the definition carried: origins are stamped
        by whoever registers, never trusted from the definition itself.
        """
        if self._frozen:
            raise RegistryFrozen("this registry is frozen; register tools before freeze()")
        try:
            definition = as_definition(obj)
            if type(definition) is not ToolDefinition:  # a subclass could override fields' behaviour
                definition = ToolDefinition(
                    **{f.name: getattr(definition, f.name) for f in fields(ToolDefinition)}
                )
        except TypeError as exc:
            raise ToolRegistrationError(
                "RT001",
                f"not a tool: {exc}",
                hint="pass a ToolDefinition or a function decorated with @reyn_core.tool",
            ) from None
        if origin is not None:
            definition = definition.with_origin(origin)
        elif definition.origin is None:
            definition = definition.with_origin(ToolOrigin(kind="host"))
        try:
            issues = self._check_definition(definition)
        except ToolRegistrationError:
            raise
        except Exception as exc:  # fail closed for this one tool: a check that breaks refuses it
            raise ToolRegistrationError(
                "RT007",
                f"tool {definition.name!r} could not be checked: {type(exc).__name__}: {exc}"[:500],
                tool=str(definition.name)[:80],
                hint="simplify the definition; the message names what broke the check",
            ) from None
        # Keep our own copy of the checked schema: a plugin that mutates its dict later cannot
        # change what the renderers show or what the dispatcher validates against.
        definition = replace(definition, parameters=copy_json(definition.parameters))
        key = collision_key(definition.name)
        taken = self._keys.get(key, definition.name)
        existing = self._tools.get(taken)
        if existing is not None:
            a = existing.definition.origin or ToolOrigin()
            b = definition.origin or ToolOrigin()
            what = (
                f"tool name {definition.name!r} is claimed"
                if taken == definition.name
                else f"tool names {taken!r} and {definition.name!r} differ only in case or separators "
                "(models and providers confuse them) and are claimed"
            )
            raise ToolRegistrationError(
                "RT004",
                f"{what} by {a.describe()} and by {b.describe()}",
                tool=definition.name,
                hint="give one plugin a `prefix` or add the tool to its `tools.exclude` in the profile",
            )
        warnings = tuple(i for i in issues if i.severity == "warning")
        self._tools[definition.name] = RegisteredTool(definition, warnings)
        self._keys[key] = definition.name
        if original_name is not None and original_name != definition.name:
            self._original_names[definition.name] = original_name
        self._sorted = None
        return definition

    def _check_definition(self, d: ToolDefinition) -> list[SchemaIssue]:
        if type(d.name) is not str or not is_valid_tool_name(d.name):
            raise ToolRegistrationError(
                "RT002",
                f"tool name {d.name!r} is invalid: it must match {NAME_PATTERN}",
                tool=str(d.name)[:80],
                hint="use letters, digits, '_' and '-', at most 64 characters",
            )
        if type(d.description) is not str or not d.description.strip():
            raise ToolRegistrationError(
                "RT003",
                f"tool {d.name!r} has no description",
                tool=d.name,
                hint="write a docstring or pass description=; models choose tools by it",
            )
        handler = d.handler
        if not (handler is None or callable(handler) or (isinstance(handler, str) and ":" in handler)):
            raise ToolRegistrationError(
                "RT005",
                f"tool {d.name!r} handler must be callable, 'module:attr' or None",
                tool=d.name,
                hint="point handler at a function, e.g. 'my_pkg.tools:fetch'",
            )
        problem = _field_problem(d)
        if problem:
            raise ToolRegistrationError(
                "RT006",
                f"tool {d.name!r} has an invalid field: {problem}",
                tool=d.name,
                hint="fix the value in @tool(...) / ToolDefinition(...)",
            )
        issues = self._schema_check(d.parameters, phase_usable=d.gates.phase == "allow")
        errors = [i for i in issues if i.severity == "error"]
        if errors:
            first = errors[0]
            detail = "; ".join(f"{i.message}" + (f" (at {i.pointer})" if i.pointer else "") for i in errors)
            raise ToolRegistrationError(
                first.code,
                f"tool {d.name!r} has an invalid parameters schema: {detail}",
                tool=d.name,
                hint="fix the schema; docs/diagnostics.md explains each code",
            )
        return issues

    def set_settings(self, plugin_id: str, settings: Any) -> None:
        """Attach a plugin's validated settings; tools of that plugin see them as ``ctx.settings``."""
        if self._frozen:
            raise RegistryFrozen("this registry is frozen")
        self._settings[plugin_id] = settings

    def freeze(self) -> ToolRegistry:
        """An immutable snapshot of this registry (this builder stays usable)."""
        snap = ToolRegistry(operator=self.operator, settings=self._settings, hooks=self.hooks)
        snap._tools = MappingProxyType(dict(self._tools))  # type: ignore[assignment]
        snap._original_names = MappingProxyType(dict(self._original_names))  # type: ignore[assignment]
        snap._keys = MappingProxyType(dict(self._keys))  # type: ignore[assignment]
        snap._settings = MappingProxyType(dict(self._settings))  # type: ignore[assignment]
        snap._sorted = tuple(snap._tools[n].definition for n in sorted(snap._tools))
        snap._frozen = True
        return snap

    _FROZEN_FIELDS = frozenset(
        {
            "operator",
            "hooks",
            "_tools",
            "_original_names",
            "_keys",
            "_settings",
            "_sorted",
            "_frozen",
            "_caches",
            "_schema_check",
        }
    )

    def __setattr__(self, name: str, value: Any) -> None:
        # A snapshot's policy is part of its gates: swapping `operator` or `hooks` would silently
        # switch off layer 2 or the audit log, so a frozen registry refuses it.
        if name in self._FROZEN_FIELDS and getattr(self, "_frozen", False):
            raise RegistryFrozen(
                f"this registry is frozen; {name!r} cannot be changed (build a new registry)"
            )
        object.__setattr__(self, name, value)

    @property
    def frozen(self) -> bool:
        """True for a snapshot made by ``freeze()``."""
        return self._frozen

    # ------------------------------------------------------------------ reading

    def __len__(self) -> int:
        return len(self._tools)

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __iter__(self) -> Iterator[ToolDefinition]:
        return iter(self.tools())

    def tools(self) -> tuple[ToolDefinition, ...]:
        """Every tool, sorted by name: independent of registration or install order."""
        if self._sorted is None:
            self._sorted = tuple(self._tools[n].definition for n in sorted(self._tools))
        return self._sorted

    def get(self, name: str) -> ToolDefinition:
        """The tool called ``name`` or ``ToolNotFound`` listing near names."""
        entry = self._tools.get(name) if isinstance(name, str) else None
        if entry is None:
            raise ToolNotFound(self._not_found_message(name), tool=str(name)[:80])
        return entry.definition

    def warnings(self, name: str) -> tuple[SchemaIssue, ...]:
        """Provider-lint warnings recorded when ``name`` was registered."""
        entry = self._tools.get(name)
        return entry.warnings if entry else ()

    def original_name(self, name: str) -> str:
        """The plugin's own name for a (possibly prefixed) tool."""
        return self._original_names.get(name, name)

    def settings_for(self, tool: ToolDefinition) -> Any:
        """The owning plugin's settings (None for host tools or plugins without settings)."""
        return self._settings.get(tool.plugin_id) if tool.plugin_id else None

    @property
    def plugin_settings(self) -> Mapping[str, Any]:
        """Plugin id → validated settings."""
        return MappingProxyType(self._settings)

    def _not_found_message(self, name: object) -> str:
        import difflib

        near = difflib.get_close_matches(str(name), list(self._tools), n=3)
        hint = f"; did you mean {', '.join(map(repr, near))}?" if near else ""
        return f"no tool named {str(name)[:80]!r}{hint}"

    # ------------------------------------------------------------------ gating

    def context_for(self, tool: ToolDefinition, ctx: ToolContext) -> ToolContext:
        """``ctx`` with the owning plugin's settings, as the tool's handler and ``available`` see it."""
        settings = self.settings_for(tool)
        return ctx if settings is None or ctx.settings is settings else ctx.with_settings(settings)

    def check(
        self,
        tool: ToolDefinition,
        surface: str,
        ctx: ToolContext,
        *,
        exclude: Iterable[str] = (),
        allowed_ops: Iterable[str] | None = None,
    ) -> gates.Decision:
        """``gates.check`` with this registry's operator policy and the tool's own settings."""
        return gates.check(
            tool,
            surface,
            self.context_for(tool, ctx),
            operator=self.operator,
            exclude=frozenset(gates.as_names(exclude, "exclude")),
            allowed_ops=allowed_ops,
            original_names=self._original_names,
        )

    def visible(
        self,
        surface: str,
        ctx: ToolContext,
        *,
        exclude: Iterable[str] = (),
        allowed_ops: Iterable[str] | None = None,
    ) -> list[ToolDefinition]:
        """The tools ``surface`` may see in ``ctx``, sorted by name."""
        ex = frozenset(gates.as_names(exclude, "exclude"))
        ops = gates.as_names(allowed_ops, "allowed_ops") if allowed_ops is not None else None
        return [t for t in self.tools() if self.check(t, surface, ctx, exclude=ex, allowed_ops=ops)]

    # ------------------------------------------------------------------ dispatch caches

    def _null_optionals(self, tool: ToolDefinition) -> frozenset[str]:
        names = self._caches.null_optionals.get(tool.name)
        if names is None:
            from .validation import optional_non_nullable

            names = optional_non_nullable(tool.parameters)
            with self._caches.lock:
                self._caches.null_optionals[tool.name] = names
        return names

    def _validator(self, tool: ToolDefinition) -> Validator:
        v = self._caches.validators.get(tool.name)
        if v is None:
            from .validation import compile_validator

            v = compile_validator(tool.parameters)
            with self._caches.lock:
                self._caches.validators[tool.name] = v
        return v
