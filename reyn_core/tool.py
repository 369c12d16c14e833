"""The one definition of a tool: ``ToolDefinition``, its gates and origin, and the ``@tool`` decorator."""

from __future__ import annotations

import inspect
import re
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Literal, overload

from pydantic import BaseModel, ConfigDict, PydanticUserError, create_model

if TYPE_CHECKING:
    from .context import ToolContext

NAME_PATTERN = r"^[a-zA-Z0-9_-]{1,64}$"
NAME_RE = re.compile(NAME_PATTERN)

Purity = Literal["read_only", "side_effect", "external"]
DispatchKind = Literal["inline", "deferred"]
GateValue = Literal["allow", "deny"]
PURITIES: tuple[str, ...] = ("read_only", "side_effect", "external")


def summary_line(text: str) -> str:
    """The first non-blank line of a description, stripped ("" when there is none)."""
    return next((line.strip() for line in text.splitlines() if line.strip()), "")


def is_valid_tool_name(name: object) -> bool:
    """True when ``name`` is valid for every major provider: ``^[a-zA-Z0-9_-]{1,64}$``."""
    return isinstance(name, str) and NAME_RE.fullmatch(name) is not None


@dataclass(frozen=True, slots=True)
class ToolGates:
    """Gate layer 1: the tool author's decision per surface."""

    router: GateValue = "allow"
    phase: GateValue = "allow"

    def allows(self, surface: str) -> bool:
        """Whether the author allows ``surface``; ``mcp`` and ``cli`` follow the router gate."""
        if surface == "phase":
            return self.phase == "allow"
        return self.router == "allow"


@dataclass(frozen=True, slots=True)
class ToolOrigin:
    """Where a tool came from. Host-only metadata: never rendered to a model.

    Stamped by the loader (kind ``plugin``), the host (kind ``host``) or an importer such as the mcp
    pack (kind ``mcp``); a definition's own ``origin`` from a plugin is never trusted.
    """

    kind: Literal["plugin", "host", "mcp"] = "host"
    plugin_id: str | None = None
    entry_point: str | None = None
    distribution: str | None = None
    version: str | None = None
    source_kind: str | None = None  # index | wheel | directory | editable | vcs | mcp-stdio | mcp-http
    source_url: str | None = None
    commit: str | None = None
    artifact_sha256: str | None = None
    tree_digest: str | None = None
    api_version: int | None = None

    def describe(self) -> str:
        """A one-line human description, used in diagnostics."""
        if self.kind == "host":
            return "the host application"
        parts = [f"{self.kind} {self.plugin_id!r}"]
        if self.distribution:
            parts.append(f"from {self.distribution} {self.version or ''}".rstrip())
        return " ".join(parts)


@dataclass(frozen=True, slots=True)
class ToolDefinition:
    """One capability, rendered to every surface from this single definition.

    ``handler`` is a callable, a lazy ``"module:attr"`` reference (imported on first call, so listing
    and rendering never import a tool's heavy dependencies), or None (runtime missing: the tool is
    inspectable but hidden from both surfaces). Handlers take their arguments as keyword arguments,
    or as one pydantic model parameter, and may ask for the ``ToolContext`` by naming a parameter
    ``ctx`` or annotating it ``ToolContext``. Sync handlers run in a worker thread.
    """

    name: str
    description: str
    parameters: Mapping[str, Any]
    handler: Callable[..., Any] | str | None
    gates: ToolGates = ToolGates()
    cluster: str = "default"
    purity: Purity = "side_effect"
    dispatch_kind: DispatchKind = "inline"
    schema_enricher: Callable[[dict[str, Any], ToolContext], dict[str, Any]] | None = None
    available: Callable[[ToolContext], bool] | None = None
    timeout_s: float | None = None
    origin: ToolOrigin | None = None

    def with_origin(self, origin: ToolOrigin) -> ToolDefinition:
        """A copy stamped with ``origin``."""
        return replace(self, origin=origin)

    def renamed(self, name: str) -> ToolDefinition:
        """A copy with another name (the profile's ``prefix`` uses this)."""
        return replace(self, name=name)

    @property
    def summary(self) -> str:
        """The first line of the description (listings and the phase prompt use it)."""
        return summary_line(self.description)

    @property
    def plugin_id(self) -> str | None:
        """The owning plugin's id, or None for host tools."""
        return self.origin.plugin_id if self.origin else None


# --------------------------------------------------------------------------- handler call shape


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
        if self.model is not None and self.model_param is not None:
            kwargs = {self.model_param: self.model.model_validate(dict(args))}
        elif self.model is not None:
            # Keyword handler: let pydantic convert each argument to its annotated type.
            validated = self.model.model_validate(dict(args))
            kwargs = {k: getattr(validated, k) for k in type(validated).model_fields}
        else:
            kwargs = dict(args)
        if self.ctx_param is not None:
            kwargs[self.ctx_param] = ctx
        return (), kwargs


def _is_context_annotation(annotation: Any) -> bool:
    if annotation is inspect.Parameter.empty:
        return False
    if isinstance(annotation, str):
        return annotation.split(".")[-1] in ("ToolContext", "ToolContext | None")
    from .context import ToolContext

    return annotation is ToolContext


def _resolved_hints(fn: Callable[..., Any]) -> dict[str, Any]:
    """The parameters' annotations, evaluated. When one cannot be (typically ``ctx: ToolContext``
    imported only under ``TYPE_CHECKING``), the others are still resolved one by one and the
    unresolvable one stays a string, which is enough to recognise a ``ToolContext``."""
    try:
        return typing.get_type_hints(fn)
    except Exception:
        pass
    target = inspect.unwrap(fn)
    namespace = dict(getattr(target, "__globals__", {}))
    hints: dict[str, Any] = {}
    try:
        parameters = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return hints
    for p in parameters:
        annotation = p.annotation
        if isinstance(annotation, str):
            try:
                annotation = eval(annotation, namespace)  # what get_type_hints does, per parameter
            except Exception:
                pass
        if annotation is not inspect.Parameter.empty:
            hints[p.name] = annotation
    return hints


def _model_param(fn: Callable[..., Any]) -> tuple[str | None, type[BaseModel] | None]:
    hints = _resolved_hints(fn)
    params = [p for p in inspect.signature(fn).parameters.values() if not _is_ctx_param(p, hints)]
    if len(params) == 1:
        ann = hints.get(params[0].name, params[0].annotation)
        if inspect.isclass(ann) and issubclass(ann, BaseModel):
            return params[0].name, ann
    return None, None


def _is_ctx_param(p: inspect.Parameter, hints: Mapping[str, Any]) -> bool:
    return p.name == "ctx" or _is_context_annotation(hints.get(p.name, p.annotation))


def call_shape(fn: Callable[..., Any]) -> CallShape:
    """Inspect ``fn`` once and describe how the dispatcher calls it."""
    hints = _resolved_hints(fn)
    ctx_param = next(
        (p.name for p in inspect.signature(fn).parameters.values() if _is_ctx_param(p, hints)), None
    )
    model_param, model = _model_param(fn)
    if model is None:
        try:
            model = _signature_model(fn)
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


# --------------------------------------------------------------------------- @tool


def _first_paragraph(doc: str | None) -> str:
    return inspect.cleandoc(doc or "").strip()


_SUPPORTED_TYPES = (
    "str, int, float, bool, None, list[...], dict[str, ...], tuple[...], Literal[...], Enum, "
    "datetime/date, Path, pydantic models and Optional/Union of these"
)


def _signature_model(fn: Callable[..., Any], *, strict: bool = False) -> type[BaseModel]:
    """A pydantic model built from ``fn``'s typed parameters (``ctx`` excluded).

    With ``strict`` (what ``@tool`` uses) a parameter without an annotation, or with a type pydantic
    cannot describe as JSON Schema, is a ``TypeError`` naming the tool, the parameter and the types
    that work: an unannotated parameter would render as ``{}`` and tell the model nothing.
    """
    hints = _resolved_hints(fn)
    fields: dict[str, Any] = {}
    for p in inspect.signature(fn).parameters.values():
        if _is_ctx_param(p, hints):
            continue
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            raise TypeError(f"@tool cannot describe *args/**kwargs of {fn.__qualname__}")
        if strict and p.name not in hints and p.annotation is p.empty:
            raise TypeError(
                f"@tool {fn.__qualname__}: parameter {p.name!r} has no type annotation, so the model "
                f"would not know what to send; annotate it (e.g. `{p.name}: str`); types that work: "
                f"{_SUPPORTED_TYPES}"
            )
        ann = hints.get(p.name, Any if p.annotation is p.empty else p.annotation)
        default = ... if p.default is p.empty else p.default
        fields[p.name] = (ann, default)
    model_name = f"{fn.__name__}_args"
    try:
        model = create_model(model_name, __config__=ConfigDict(extra="forbid"), **fields)
        if strict:
            model.model_json_schema()
    except PydanticUserError:
        if not strict:
            raise
        for field_name, spec in fields.items():  # find the parameter pydantic cannot describe
            try:
                create_model(model_name, **{field_name: spec}).model_json_schema()
            except PydanticUserError:
                raise TypeError(
                    f"@tool {fn.__qualname__}: parameter {field_name!r} has type "
                    f"{getattr(spec[0], '__name__', spec[0])!s}, which has no JSON Schema a model could "
                    f"fill in; use one of: {_SUPPORTED_TYPES}"
                ) from None
        raise
    return model


def _drop_titles(schema: dict[str, Any]) -> None:
    """Remove pydantic's generated ``title`` keywords from a schema and its properties (noise for a model)."""
    schema.pop("title", None)
    for prop in schema.get("properties", {}).values():
        if isinstance(prop, dict):
            prop.pop("title", None)


def schema_from_model(model: type[BaseModel]) -> dict[str, Any]:
    """The JSON Schema of a pydantic model, tidied for tool use: object root, no title noise,
    ``additionalProperties: false`` unless the model allows extra fields."""
    schema = model.model_json_schema()
    _drop_titles(schema)
    for sub in schema.get("$defs", {}).values():  # nested models: same tidying
        if isinstance(sub, dict):
            _drop_titles(sub)
    if model.model_config.get("extra") != "allow":
        schema.setdefault("additionalProperties", False)
    schema.setdefault("properties", {})
    return schema


@overload
def tool(fn: Callable[..., Any], /) -> ToolDefinition: ...


@overload
def tool(
    *,
    name: str | None = None,
    description: str | None = None,
    gates: ToolGates = ...,
    cluster: str = ...,
    purity: Purity = ...,
    dispatch_kind: DispatchKind = ...,
    schema_enricher: Callable[[dict[str, Any], ToolContext], dict[str, Any]] | None = ...,
    available: Callable[[ToolContext], bool] | None = ...,
    timeout_s: float | None = ...,
) -> Callable[[Callable[..., Any]], ToolDefinition]: ...


def tool(
    fn: Callable[..., Any] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    gates: ToolGates = ToolGates(),
    cluster: str = "default",
    purity: Purity = "side_effect",
    dispatch_kind: DispatchKind = "inline",
    schema_enricher: Callable[[dict[str, Any], ToolContext], dict[str, Any]] | None = None,
    available: Callable[[ToolContext], bool] | None = None,
    timeout_s: float | None = None,
) -> ToolDefinition | Callable[[Callable[..., Any]], ToolDefinition]:
    """Build a ``ToolDefinition`` from a typed function.

    Parameters come from a single pydantic-model parameter, or else from the signature; the
    description is the docstring; the name is the function's name. ``ctx`` (or a parameter annotated
    ``ToolContext``) receives the call's context and is not part of the schema::

        @tool(cluster="text", purity="read_only")
        def word_count(text: str) -> int:
            \"\"\"Count the words in a text.\"\"\"
            return len(text.split())
    """

    def build(f: Callable[..., Any]) -> ToolDefinition:
        _, model = _model_param(f)
        schema = schema_from_model(model if model is not None else _signature_model(f, strict=True))
        desc = description if description is not None else _first_paragraph(f.__doc__)
        return ToolDefinition(
            name=name or f.__name__,
            description=desc,
            parameters=schema,
            handler=f,
            gates=gates,
            cluster=cluster,
            purity=purity,
            dispatch_kind=dispatch_kind,
            schema_enricher=schema_enricher,
            available=available,
            timeout_s=timeout_s,
        )

    if fn is not None:
        return build(fn)
    return build


def as_definition(obj: object) -> ToolDefinition:
    """Accept a ``ToolDefinition`` or a plain typed function (wrapped with ``@tool`` defaults)."""
    if isinstance(obj, ToolDefinition):
        return obj
    if callable(obj) and (inspect.isfunction(obj) or inspect.ismethod(obj)):
        return tool(obj)
    raise TypeError(f"expected a ToolDefinition or a typed function, got {type(obj).__name__}: {obj!r:.80}")
