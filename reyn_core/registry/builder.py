"""``RegistryBuilder``: checks tools one by one and freezes them into a ``ToolRegistry`` snapshot."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import fields, replace
from typing import Any

from .. import gates
from ..calls import ToolCallHooks
from ..errors import ToolRegistrationError
from ..schema import SchemaIssue, check_tool_schema, copy_json
from ..tool import ToolDefinition, ToolOrigin, as_definition, collision_key
from .checks import SchemaCheck, check_definition
from .snapshot import RegisteredTool, ToolRegistry


class RegistryBuilder:
    """Collects checked tools; ``freeze()`` returns the immutable ``ToolRegistry`` to render and
    dispatch from (the builder stays usable, later registrations do not reach earlier snapshots)::

        builder = RegistryBuilder(operator=policy, hooks=audit.hooks())
        builder.register(word_count)
        registry = builder.freeze()

    ``schema_check(parameters, phase_usable=...)`` replaces ``check_tool_schema``; the plugin loader
    passes a cache of its results so a warm start skips the metaschema work.
    """

    def __init__(
        self,
        *,
        operator: gates.OperatorPolicy = gates.NO_POLICY,
        settings: Mapping[str, Any] | None = None,
        hooks: ToolCallHooks | None = None,
        schema_check: SchemaCheck | None = None,
    ) -> None:
        self.operator = operator
        self.hooks = hooks
        self._schema_check = schema_check or check_tool_schema
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
            warnings = check_definition(definition, self._schema_check)
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
        self._tools[definition.name] = RegisteredTool(definition, tuple(warnings))
        self._keys[key] = definition.name
        if original_name is not None and original_name != definition.name:
            self._original_names[definition.name] = original_name
        return definition

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
        )
