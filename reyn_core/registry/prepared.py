"""``PreparedTool``: one tool as a frozen registry snapshot prepared it for calls, owned by the snapshot.

Everything here is decided once, from final, frozen values (``ToolDefinition``, the policies, the
snapshot itself), so nothing a later call brings can change it: the layers of the gates the snapshot
fixes, per surface; whether the tool's plugin has settings; the one validator of its registered
schema; its definition digest; the optional properties whose ``null`` means "not given"; and (filled
by the dispatcher at the first call that resolves it) the handler's call shape. The call layer of
the gates is still evaluated on every call, by ``gates.check``."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any, final

from .. import gates
from ..tool import ToolDefinition, refuse_subclassing

if TYPE_CHECKING:
    from ..validation import SchemaValidator


@final
class PreparedTool:
    """One tool of one snapshot, prepared for the dispatcher (made at the tool's first call)."""

    __slots__ = (
        "_digest",
        "_lock",
        "_null_optionals",
        "_validator",
        "definition",
        "plain",
        "refusals",
        "shape",
    )

    def __init__(self, definition: ToolDefinition, plain: bool) -> None:
        self.definition = definition
        # surface -> the refusal of the layers the snapshot fixes (None: they admit it), filled by
        # ``ToolRegistry.fixed_layers`` as each surface is first asked about
        self.refusals: dict[str, gates.Decision | None] = {}
        self.plain = plain
        self.shape: Any = None  # the dispatcher's CallShape, once the handler resolves
        self._validator: SchemaValidator | None = None
        self._null_optionals: frozenset[str] | None = None
        self._digest: str | None = None
        self._lock = threading.Lock()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        refuse_subclassing(cls)

    @property
    def validator(self) -> SchemaValidator:
        """The one validator of the registered schema: compiled on the first call, once (the
        registration already compiled it once to refuse a schema the library cannot compile)."""
        validator = self._validator
        if validator is None:
            with self._lock:
                validator = self._validator
                if validator is None:
                    from ..validation import compile_validator

                    validator = self._validator = compile_validator(self.definition.parameters)
        return validator

    @property
    def digest(self) -> str:
        """``definition_digest`` of this definition, computed once (the audit log records it on every
        line; a canonical JSON of the whole definition is too much work to repeat per call)."""
        digest = self._digest
        if digest is None:
            from ..definition_digest import definition_digest

            digest = self._digest = definition_digest(self.definition)
        return digest

    @property
    def null_optionals(self) -> frozenset[str]:
        """Top-level properties that are optional and do not admit ``null`` (OpenAI strict mode)."""
        names = self._null_optionals
        if names is None:
            from ..validation import optional_non_nullable

            names = self._null_optionals = optional_non_nullable(self.definition.parameters)
        return names
