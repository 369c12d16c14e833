"""The one definition of a tool: ``ToolDefinition``, its gates, origin and name rules, and ``@tool``."""

from __future__ import annotations

import copy
import inspect
import re
import typing
import unicodedata
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal, final, overload

from .arguments_model import ArgumentsModel, schema_from_model
from .result_schema import return_schema

if TYPE_CHECKING:
    from pydantic import BaseModel

    from .context import ToolContext

NAME_PATTERN = r"^[a-zA-Z0-9_-]{1,64}$"
NAME_RE = re.compile(NAME_PATTERN)

Purity = Literal["read_only", "side_effect", "external"]
DispatchKind = Literal["inline", "deferred"]
GateValue = Literal["allow", "deny"]
PURITIES: tuple[str, ...] = ("read_only", "side_effect", "external")


_LIST_ITEM = re.compile(r"\s*(?:[-*+]|\d{1,3}[.)])\s")


def description_from_docstring(doc: str | None) -> str:
    """A tool description from a docstring: dedented, and each paragraph unwrapped into one line, so
    a model never reads a sentence broken by the source's line wrapping. Paragraphs stay separated
    by a blank line; list items, indented blocks and fenced code keep their own lines."""
    paragraphs: list[str] = []
    for block in re.split(r"\n[ \t]*\n", inspect.cleandoc(doc or "").strip()):
        lines = block.splitlines()
        keep = any(_LIST_ITEM.match(line) or line.startswith((" ", "\t", "```")) for line in lines)
        paragraphs.append("\n".join(lines) if keep else " ".join(line.strip() for line in lines))
    return "\n\n".join(p for p in paragraphs if p)


def summary_line(text: str) -> str:
    """The summary of a description: its first paragraph on one line ("" when there is none). It
    ends where the paragraph ends, never inside a sentence."""
    first = re.split(r"\n[ \t]*\n", text.strip(), maxsplit=1)[0]
    return " ".join(first.split())


def is_valid_tool_name(name: object) -> bool:
    """True when ``name`` is valid for every major provider: ``^[a-zA-Z0-9_-]{1,64}$``."""
    return isinstance(name, str) and NAME_RE.fullmatch(name) is not None


def refuse_subclassing(cls: type) -> None:
    """The ``__init_subclass__`` of Reyn's final classes (``ToolDefinition``, ``ToolGates``,
    ``ToolOrigin``, the policies, ``ToolRegistry``): what a registry snapshot decides once from them
    (gates, validators) must not be computed again by a subclass's property or ``__eq__``."""
    final_base = next(base for base in cls.__mro__[1:] if "__init_subclass__" in base.__dict__)
    raise TypeError(f"{final_base.__name__} is final and cannot be subclassed; compose it instead")


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


@final
@dataclass(frozen=True, slots=True)
class ToolGates:
    """Gate layer 1: the tool author's decision per surface, and whether the tool is offered while a
    plan step runs.

    ``plan_mode="deny"`` hides the tool, and refuses its calls, whenever the caller is in plan mode
    (``RouterCallerState(plan_mode=True)``): a tool that lays out plans denies it, so a plan's step
    cannot plan again. ``gates.check`` applies it in the call layer (rule ``plan_mode``)."""

    router: GateValue = "allow"
    phase: GateValue = "allow"
    plan_mode: GateValue = "allow"

    def __init_subclass__(cls, **kwargs: Any) -> None:
        refuse_subclassing(cls)

    def allows(self, surface: str) -> bool:
        """Whether the author allows ``surface``; ``mcp`` and ``cli`` follow the router gate."""
        if surface == "phase":
            return self.phase == "allow"
        return self.router == "allow"


@final
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

    def __init_subclass__(cls, **kwargs: Any) -> None:
        refuse_subclassing(cls)

    def describe(self) -> str:
        """A one-line human description, used in diagnostics."""
        if self.kind == "host":
            return "the host application"
        parts = [f"{self.kind} {self.plugin_id!r}"]
        if self.distribution:
            parts.append(f"from {self.distribution} {self.version or ''}".rstrip())
        return " ".join(parts)


@final
@dataclass(frozen=True, slots=True)
class ToolDefinition:
    """One capability, rendered to every surface from this single definition.

    ``handler`` is a callable, a lazy ``"module:attr"`` reference (imported on first call, so listing
    and rendering never import a tool's heavy dependencies), or None (runtime missing: the tool is
    inspectable but hidden from both surfaces). Handlers take their arguments as keyword arguments,
    or as one pydantic model parameter, and may ask for the ``ToolContext`` by naming a parameter
    ``ctx`` or annotating it ``ToolContext``. Sync handlers run in a worker thread. ``returns`` is
    the JSON Schema of the result (``@tool`` derives it from the return annotation; None: unknown).
    ``arguments_model``: the model ``@tool`` derived ``parameters`` from (host-side, never served).
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
    returns: Mapping[str, Any] | None = None
    arguments_model: ArgumentsModel | None = field(default=None, compare=False, repr=False)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        refuse_subclassing(cls)

    def renamed(self, name: str) -> ToolDefinition:
        """A copy with another name (the profile's ``prefix`` uses this)."""
        return replace(self, name=name)

    @property
    def summary(self) -> str:
        """The description's first paragraph on one line (listings and the phase prompt use it)."""
        return summary_line(self.description)

    @property
    def plugin_id(self) -> str | None:
        """The owning plugin's id, or None for host tools."""
        return self.origin.plugin_id if self.origin else None


# --------------------------------------------------------------------------- handler signatures


def _is_context_annotation(annotation: Any) -> bool:
    if annotation is inspect.Parameter.empty:
        return False
    if isinstance(annotation, str):
        return annotation.split(".")[-1] in ("ToolContext", "ToolContext | None")
    from .context import ToolContext

    return annotation is ToolContext


def resolved_hints(fn: Callable[..., Any]) -> dict[str, Any]:
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


def model_parameter(fn: Callable[..., Any]) -> tuple[str | None, type[BaseModel] | None]:
    """The name and model of ``fn``'s single pydantic-model parameter (``ctx`` aside), else
    ``(None, None)``."""
    # pydantic is imported where a model is made or recognised, so that `import reyn_core` never pays
    # for pydantic's model machinery.
    from pydantic import BaseModel

    hints = resolved_hints(fn)
    params = [p for p in inspect.signature(fn).parameters.values() if not is_context_parameter(p, hints)]
    if len(params) == 1:
        ann = hints.get(params[0].name, params[0].annotation)
        if inspect.isclass(ann) and issubclass(ann, BaseModel):
            return params[0].name, ann
    return None, None


def is_context_parameter(p: inspect.Parameter, hints: Mapping[str, Any]) -> bool:
    """Whether ``p`` receives the ``ToolContext`` (named ``ctx`` or annotated ``ToolContext``)."""
    return p.name == "ctx" or _is_context_annotation(hints.get(p.name, p.annotation))


# --------------------------------------------------------------------------- @tool


_SUPPORTED_TYPES = (
    "str, int, float, bool, None, list[...], dict[str, ...], tuple[...], Literal[...], Enum, "
    "datetime/date, Path, pydantic models and Optional/Union of these"
)


def signature_model(fn: Callable[..., Any], *, strict: bool = False) -> type[BaseModel]:
    """A pydantic model built from ``fn``'s typed parameters (``ctx`` excluded).

    With ``strict`` (what ``@tool`` uses) a parameter without an annotation, or with a type pydantic
    cannot describe as JSON Schema, is a ``TypeError`` naming the tool, the parameter and the types
    that work: an unannotated parameter would render as ``{}`` and tell the model nothing.
    """
    from pydantic import ConfigDict, PydanticUserError, create_model

    hints = resolved_hints(fn)
    fields: dict[str, Any] = {}
    for p in inspect.signature(fn).parameters.values():
        if is_context_parameter(p, hints):
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
        _, model = model_parameter(f)
        keywords = model is None
        model = model if model is not None else signature_model(f, strict=True)
        schema = schema_from_model(model)
        derived = ArgumentsModel(model, copy.deepcopy(schema), keywords)  # a private copy
        desc = description if description is not None else description_from_docstring(f.__doc__)
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
            returns=return_schema(f),
            arguments_model=derived,
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
