"""Handlers as the dispatcher calls them: lazy ``"module:attr"`` resolution and the ``CallShape``."""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..arguments_model import ArgumentsModel
from ..context import ToolContext
from ..errors import ToolRuntimeMissing
from ..tool import ToolDefinition, is_context_parameter, model_parameter, resolved_hints, signature_model

if TYPE_CHECKING:
    from pydantic import BaseModel


@dataclass(frozen=True, slots=True)
class CallShape:
    """How to call a resolved handler with validated arguments: one model argument or keywords."""

    fn: Callable[..., Any]
    model_param: str | None
    model: type[BaseModel] | None
    ctx_param: str | None
    is_async: bool
    # the model with the schema derived from it, when known (``@tool`` carries it; else derived here)
    arguments: ArgumentsModel | None = None

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


def call_shape(fn: Callable[..., Any], known: ArgumentsModel | None = None) -> CallShape:
    """Inspect ``fn`` once and describe how the dispatcher calls it. ``known``: the model ``@tool``
    derived the tool's schema from (a keyword handler's signature model is then not built again)."""
    hints = resolved_hints(fn)
    ctx_param = next(
        (p.name for p in inspect.signature(fn).parameters.values() if is_context_parameter(p, hints)), None
    )
    model_param, model = model_parameter(fn)
    if model is None and known is not None and known.keywords:
        model = known.model
    elif model is None:
        try:
            model = signature_model(fn)
        except (TypeError, ValueError):
            model = None  # untyped **kwargs handler: arguments pass through as validated by schema
    if known is not None and known.model is not model:
        known = None  # not this handler's model
    target: Any = fn
    if not inspect.isroutine(fn):  # a callable instance: its __call__ decides sync or async
        target = target.__call__
    return CallShape(
        fn=fn,
        model_param=model_param,
        model=model,
        ctx_param=ctx_param,
        is_async=inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(target),
        arguments=known,
    )


def _resolved(ref: str, tool: str | None) -> tuple[Callable[..., Any], ArgumentsModel | None]:
    """The handler ``ref`` names, and the model its ``@tool`` definition carries (if it names one).
    An import that raises — ``SystemExit`` too: a module must not end the host — is
    ``ToolRuntimeMissing`` in fixed words that reach the model; what was raised (it may name host
    paths) goes to the operator's log, which the message cites (``log_failure``). ``KeyboardInterrupt``
    and a task's cancellation propagate."""
    known: ArgumentsModel | None = None
    module_name, _, attr = ref.partition(":")
    try:
        obj: Any = importlib.import_module(module_name)
        for part in attr.split("."):
            obj = getattr(obj, part)
    except (Exception, SystemExit) as exc:  # a module that exits at import must not end the host
        from ..remote_log import log_failure

        what = f"the handler {ref!r} of tool {tool!r} cannot be imported"
        raise ToolRuntimeMissing(
            f"{what}; the tool is unavailable in this installation; {log_failure('handlers', what, exc)}",
            tool=tool,
        ) from None
    if isinstance(obj, ToolDefinition):
        obj, known = obj.handler, obj.arguments_model
    if not callable(obj):
        raise ToolRuntimeMissing(f"the handler {ref!r} of tool {tool!r} is not callable", tool=tool)
    return obj, known


def resolve_handler(tool: ToolDefinition) -> CallShape:
    """The call shape of ``tool``'s handler, importing a lazy reference. Raises ``ToolRuntimeMissing``."""
    handler = tool.handler
    if handler is None:
        raise ToolRuntimeMissing(f"tool {tool.name!r} has no handler in this installation", tool=tool.name)
    known = tool.arguments_model
    if isinstance(handler, str):
        handler, known = _resolved(handler, tool.name)
    return call_shape(handler, known)
