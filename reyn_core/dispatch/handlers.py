"""Handlers as the dispatcher calls them: lazy ``"module:attr"`` resolution and the ``CallShape``."""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from ..context import ToolContext
from ..errors import ToolRuntimeMissing
from ..tool import ToolDefinition, is_context_parameter, model_parameter, resolved_hints, signature_model


@dataclass(frozen=True, slots=True)
class CallShape:
    """How to call a resolved handler with validated arguments: one model argument or keywords."""

    fn: Callable[..., Any]
    model_param: str | None
    model: type[BaseModel] | None
    ctx_param: str | None
    is_async: bool

    def bind(self, args: Mapping[str, Any], ctx: ToolContext) -> tuple[tuple[Any, ...], dict[str, Any]]:
        """Positional and keyword arguments for ``fn``. Raises pydantic's ValidationError."""
        kwargs: dict[str, Any]
        # ``model_validate`` without its wrapper's frame; ``args`` is the call's own dict (validated
        # already), so it is not copied again.
        if self.model is not None and self.model_param is not None:
            kwargs = {self.model_param: self.model.__pydantic_validator__.validate_python(args)}
        elif self.model is not None:
            # Keyword handler: let pydantic convert each argument to its annotated type.
            validated = self.model.__pydantic_validator__.validate_python(args)
            kwargs = dict(validated.__dict__)
        else:
            kwargs = dict(args)
        if self.ctx_param is not None:
            kwargs[self.ctx_param] = ctx
        return (), kwargs


def call_shape(fn: Callable[..., Any]) -> CallShape:
    """Inspect ``fn`` once and describe how the dispatcher calls it."""
    hints = resolved_hints(fn)
    ctx_param = next(
        (p.name for p in inspect.signature(fn).parameters.values() if is_context_parameter(p, hints)), None
    )
    model_param, model = model_parameter(fn)
    if model is None:
        try:
            model = signature_model(fn)
        except (TypeError, ValueError):
            model = None  # untyped **kwargs handler: arguments pass through as validated by schema
    target: Any = fn
    if not inspect.isroutine(fn):  # a callable instance: its __call__ decides sync or async
        target = target.__call__
    return CallShape(
        fn=fn,
        model_param=model_param,
        model=model,
        ctx_param=ctx_param,
        is_async=inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(target),
    )


def resolve_reference(ref: str, *, tool: str | None = None) -> Callable[..., Any]:
    """Import a lazy ``"module:attr"`` handler. A ``ToolDefinition`` target yields its handler."""
    module_name, _, attr = ref.partition(":")
    try:
        obj: Any = importlib.import_module(module_name)
        for part in attr.split("."):
            obj = getattr(obj, part)
    except Exception as exc:
        raise ToolRuntimeMissing(
            f"the handler {ref!r} of tool {tool!r} cannot be imported ({type(exc).__name__}: {exc}); "
            "the tool is unavailable in this installation",
            tool=tool,
        ) from None
    if isinstance(obj, ToolDefinition):
        obj = obj.handler
    if not callable(obj):
        raise ToolRuntimeMissing(f"the handler {ref!r} of tool {tool!r} is not callable", tool=tool)
    return obj


def resolve_handler(tool: ToolDefinition) -> CallShape:
    """The call shape of ``tool``'s handler, importing a lazy reference. Raises ``ToolRuntimeMissing``."""
    handler = tool.handler
    if handler is None:
        raise ToolRuntimeMissing(f"tool {tool.name!r} has no handler in this installation", tool=tool.name)
    if isinstance(handler, str):
        handler = resolve_reference(handler, tool=tool.name)
    return call_shape(handler)
