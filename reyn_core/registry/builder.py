"""``RegistryBuilder``: checks tools one by one and freezes them into a ``ToolRegistry`` snapshot."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import fields, replace
from typing import TYPE_CHECKING, Any

from ..errors import ToolRegistrationError, describe_exception
from ..operator_policy import NO_POLICY, OperatorPolicy
from ..schema import SchemaIssue, copy_json
from ..tool import ToolDefinition, ToolOrigin, as_definition, collision_key
from .checks import check_definition
from .collisions import Claim, Collision
from .prepared import schema_validator
from .snapshot import RegisteredTool, ToolRegistry

if TYPE_CHECKING:  # annotations only: building a registry (a load, a render) never imports the call types
    from ..calls import CallApprovals, ToolCallHooks


class CheckedDefinitions:
    """The definitions builders have checked, by identity, with their warnings: a builder that meets
    one of these exact objects again adopts it instead of checking and copying it a second time (the
    loader checks each tool in a scratch builder, then registers survivors into the real one).

    Only a ``RegistryBuilder`` records into it, and only the object it returned (a frozen definition
    holding the builder's private copy of the schema), so an adopted definition is one that passed
    every check. Entries hold the definitions alive: ``clear()`` when the registry is built."""

    def __init__(self) -> None:
        self._entries: dict[int, RegisteredTool] = {}

    def record(self, entry: RegisteredTool) -> None:
        self._entries[id(entry.definition)] = entry

    def entry_of(self, definition: object) -> RegisteredTool | None:
        """The entry (warnings, validator) recorded for exactly this object, or None when it was not
        checked here."""
        entry = self._entries.get(id(definition))
        return entry if entry is not None and entry.definition is definition else None

    def clear(self) -> None:
        self._entries.clear()

    def __len__(self) -> int:
        return len(self._entries)


class RegistryBuilder:
    """Collects checked tools; ``freeze()`` returns the immutable ``ToolRegistry`` to render and
    dispatch from (the builder stays usable, later registrations do not reach earlier snapshots)::

        builder = RegistryBuilder(operator=policy, hooks=audit.hooks())
        builder.register(word_count)
        registry = builder.freeze()

    Every tool registered is checked (``check_definition``: its fields and ``check_tool_schema``),
    except the very object a builder sharing ``checked`` returned: the loader's builders share one
    ledger per load, and a definition one of them returned is adopted by the next without a second
    check (checked once in that load; nothing stored stands in for a check).
    """

    def __init__(
        self,
        *,
        operator: OperatorPolicy = NO_POLICY,
        settings: Mapping[str, Any] | None = None,
        hooks: ToolCallHooks | None = None,
        checked: CheckedDefinitions | None = None,
        approvals: CallApprovals | None = None,
        host_files: Mapping[str, str] | None = None,
    ) -> None:
        self.operator = operator
        self.hooks = hooks
        self.approvals = approvals
        self.host_files: dict[str, str] = dict(host_files or {})
        self._checked = checked
        self._tools: dict[str, RegisteredTool] = {}
        self._original_names: dict[str, str] = {}
        self._keys: dict[str, str] = {}  # collision_key(name) -> the registered name
        self._settings: dict[str, Any] = dict(settings or {})

    def register(
        self,
        obj: ToolDefinition | Callable[..., Any],
        *,
        origin: ToolOrigin | None = None,
        original_name: str | None = None,
    ) -> ToolDefinition:
        """Check and add one tool; return the definition as registered. Raises
        ``ToolRegistrationError`` (with a diagnostic code) when the name is invalid, the schema has
        errors, or the name is already taken — naming both origins.

        ``origin``, when given, replaces whatever origin the definition carried: origins are stamped
        by whoever registers, never trusted from the definition itself.
        """
        adopted = self._checked.entry_of(obj) if self._checked is not None else None
        if adopted is not None and isinstance(obj, ToolDefinition) and origin in (None, obj.origin):
            # Checked by a builder sharing this ledger, and returned by it: the same frozen object
            # with that builder's private copy of the schema and the validator its check compiled.
            # No second check, no second copy, no second compile.
            entry = adopted
        else:
            entry = self._checked_copy(obj, origin)
        definition = entry.definition
        key = collision_key(definition.name)
        taken = self._keys.get(key, definition.name)
        existing = self._tools.get(taken)
        if existing is not None:
            claims = (
                Claim(taken, existing.definition.origin or ToolOrigin()),
                Claim(definition.name, definition.origin or ToolOrigin()),
            )
            raise Collision(claims).error(kept_first=True)
        self._tools[definition.name] = entry
        if self._checked is not None:
            self._checked.record(entry)
        self._keys[key] = definition.name
        if original_name is not None and original_name != definition.name:
            self._original_names[definition.name] = original_name
        return definition

    def _checked_copy(
        self, obj: ToolDefinition | Callable[..., Any], origin: ToolOrigin | None
    ) -> RegisteredTool:
        """``obj`` as a checked ``ToolDefinition`` stamped with its origin and holding a private copy
        of its schema, with the schema's warnings and the validator of that copy (compiled by the
        check); ``ToolRegistrationError``
        when it cannot be registered."""
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
            ) from None
        # Origins are stamped by whoever registers (never trusted from the definition), and we keep
        # our own copy of the schema, made before the check so the validator the check compiles is
        # the copy's: a plugin that mutates its dict later cannot change what the renderers show or
        # what the dispatcher validates against. One ``replace`` for both.
        stamp = origin if origin is not None else definition.origin or ToolOrigin(kind="host")
        try:
            parameters = copy_json(definition.parameters)
            returns = copy_json(definition.returns) if definition.returns is not None else None
        except RecursionError:  # nested past any bound (or cyclic): the check refuses it (RS002)
            parameters, returns = definition.parameters, definition.returns
        definition = replace(definition, origin=stamp, parameters=parameters, returns=returns)
        validator = schema_validator(parameters)
        try:
            warnings = check_definition(definition, validator)
        except ToolRegistrationError:
            raise
        except Exception as exc:  # fail closed for this one tool: a check that breaks refuses it
            raise ToolRegistrationError(
                "RT007",
                f"tool {definition.name!r} could not be checked: {describe_exception(exc)}",
                tool=str(definition.name)[:80],
            ) from None
        return RegisteredTool(definition, tuple(warnings), validator)

    def set_settings(self, plugin_id: str, settings: Any) -> None:
        """Attach a plugin's validated settings; tools of that plugin see them as ``ctx.settings``."""
        self._settings[plugin_id] = settings

    def warnings(self, name: str) -> tuple[SchemaIssue, ...]:
        """Provider-lint warnings recorded when ``name`` was registered."""
        entry = self._tools.get(name)
        return entry.warnings if entry else ()

    def __len__(self) -> int:
        return len(self._tools)

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def freeze(self) -> ToolRegistry:
        """The immutable snapshot of what is registered now."""
        return ToolRegistry(
            self._tools,
            original_names=self._original_names,
            settings=self._settings,
            operator=self.operator,
            hooks=self.hooks,
            approvals=self.approvals,
            host_files=self.host_files,
        )
