"""The model call both surfaces make: ``LLMRequest`` in, ``LLMReply`` out, through an ``LLMClient``.

``LiteLLMClient`` is the real one (litellm ``acompletion``, streaming optional); ``ReplayClient``
(``reyn_loops.replay``) records and replays it. litellm is imported only when a call is made,
never when this module is imported. ``ModelLoop`` is what both loops hold to make the call.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from reyn_core import ReynError, canonical_json
from reyn_core.host import describe_exception, escape_lone_surrogates
from reyn_loops.errors import LLMCallError
from reyn_loops.llm_faults import got_response, retry_delay, retryable, unsendable

if TYPE_CHECKING:
    from reyn_core.host import ToolRegistry
    from reyn_loops.events import EventCallback

DeltaCallback = Callable[[str], None]


@dataclass(frozen=True)
class LLMRequest:
    """One chat-completions request, provider-neutral (OpenAI message and tool format)."""

    model: str
    messages: Sequence[Mapping[str, Any]]
    tools: Sequence[Mapping[str, Any]] | None = None
    tool_choice: str | Mapping[str, Any] | None = None
    response_format: Mapping[str, Any] | None = None
    stream: bool = False

    def key(self) -> str:
        """``sha256:`` of model, messages, tools and tool_choice (the replay fixture key)."""
        payload = {
            "model": self.model,
            "messages": list(self.messages),
            "tools": list(self.tools or []) or None,
            "tool_choice": self.tool_choice,
        }
        return (
            "sha256:" + hashlib.sha256(canonical_json(payload).encode("utf-8", "surrogatepass")).hexdigest()
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe form (used by replay fixtures)."""
        return {
            "model": self.model,
            "messages": [dict(m) for m in self.messages],
            "tools": [dict(t) for t in self.tools] if self.tools else None,
            "tool_choice": self.tool_choice,
            "response_format": self.response_format,
            "stream": self.stream,
        }


@dataclass(frozen=True)
class ToolCallRequest:
    """One tool call the model asked for: its id, the tool name and the raw JSON arguments."""

    id: str
    name: str
    arguments: str


@dataclass(frozen=True)
class LLMReply:
    """The assistant's turn: ``message`` in OpenAI form, plus finish reason and usage."""

    message: Mapping[str, Any]
    finish_reason: str | None = None
    usage: Mapping[str, Any] = field(default_factory=dict)

    @property
    def text(self) -> str | None:
        """The assistant's text, if any."""
        content = self.message.get("content")
        return content if isinstance(content, str) else None

    @property
    def tool_calls(self) -> tuple[ToolCallRequest, ...]:
        """The tool calls of this turn, in the model's order."""
        out = []
        for i, call in enumerate(self.message.get("tool_calls") or []):
            fn = call.get("function") or {}
            args = fn.get("arguments")
            text = args if isinstance(args, str) else json.dumps(args or {})
            out.append(
                ToolCallRequest(
                    id=str(call.get("id") or f"call_{i}"), name=str(fn.get("name") or ""), arguments=text
                )
            )
        return tuple(out)

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe form (used by replay fixtures)."""
        return {"message": dict(self.message), "finish_reason": self.finish_reason, "usage": dict(self.usage)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> LLMReply:
        """Inverse of ``to_dict``."""
        return cls(
            message=dict(data.get("message") or {}),
            finish_reason=data.get("finish_reason"),
            usage=dict(data.get("usage") or {}),
        )


class LLMClient(Protocol):
    """What a surface needs from a model: one completion per call."""

    async def complete(self, request: LLMRequest, *, on_delta: DeltaCallback | None = None) -> LLMReply:
        """Run ``request``; stream text pieces to ``on_delta`` when ``request.stream`` is set."""
        ...


def import_litellm() -> Any:
    """Import litellm for a surface run (offline-safe: local model cost map). Clear error if absent."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    # litellm's typed dicts trigger a pydantic notice on first streaming use; it is noise for users.
    warnings.filterwarnings(
        "ignore", message=r"Item .* is using the `ReadOnly` qualifier", category=UserWarning
    )
    try:
        import litellm
    except ImportError:
        raise ReynError(
            "the LLM surfaces need litellm, a dependency of reyn-loops that is missing here: "
            "pip install 'litellm>=1.50'"
        ) from None
    litellm.suppress_debug_info = True
    return litellm


def supports_structured_output(model: str) -> bool:
    """Whether litellm says ``model`` accepts a JSON-schema ``response_format``."""
    litellm = import_litellm()
    try:
        return bool(litellm.supports_response_schema(model=model))
    except Exception:
        return False


def missing_api_keys(model: str, *, api_key: str | None = None, api_base: str | None = None) -> list[str]:
    """The environment variables holding an API key that ``model`` needs and that are not set
    (litellm's ``validate_environment``); empty when a key is given or litellm cannot tell."""
    if api_key:
        return []
    litellm = import_litellm()
    try:
        found = litellm.validate_environment(model=model, api_base=api_base)
    except Exception:
        return []
    if found.get("keys_in_environment"):
        return []
    return [str(k) for k in found.get("missing_keys") or () if "KEY" in str(k).upper()]


def _message_dict(message: Any) -> dict[str, Any]:
    """An OpenAI-form assistant message from litellm's ``Message`` (only the fields we send back)."""
    data = message.model_dump() if hasattr(message, "model_dump") else dict(message)
    # What the model sent is sent back on the next turn, as UTF-8: a lone surrogate in it (JSON's
    # "\ud800" decodes to one) is written as its escape — in the arguments' JSON text the same JSON
    # string, in the content the message's text — or the next request could not be encoded.
    out: dict[str, Any] = {"role": "assistant", "content": _carried(data.get("content"))}
    calls = []
    for call in data.get("tool_calls") or []:
        fn = call.get("function") or {}
        calls.append(
            {
                "id": call.get("id"),
                "type": "function",
                "function": {
                    "name": _carried(fn.get("name")),
                    "arguments": _carried(fn.get("arguments") or "{}"),
                },
            }
        )
    if calls:
        out["tool_calls"] = calls
    return out


def _carried(text: Any) -> Any:
    """``text`` with its lone surrogates as escapes (a non-string as it is)."""
    return escape_lone_surrogates(text) if isinstance(text, str) else text


def _usage_dict(usage: Any) -> dict[str, Any]:
    if usage is None:
        return {}
    data = usage.model_dump() if hasattr(usage, "model_dump") else dict(usage)
    return {k: data[k] for k in ("prompt_tokens", "completion_tokens", "total_tokens") if k in data}


class LiteLLMClient:
    """The real client: ``litellm.acompletion``.

    ``api_base`` / ``api_key`` point at any OpenAI-compatible endpoint (e.g. a local server with model
    ``"openai/<name>"``); ``num_retries`` is how often a call is retried after a rate limit (429), a
    timeout (408), a conflict (409), a server error (5xx) or no answer at all — never after another
    client error, which would only fail again. The retries are ours, not litellm's: litellm's own
    policy changes with what else is installed (with tenacity present it retries every error), so
    litellm and its HTTP client are told not to retry. ``options`` are passed through to
    ``acompletion`` (temperature, timeout…).
    """

    def __init__(
        self,
        *,
        api_base: str | None = None,
        api_key: str | None = None,
        num_retries: int = 2,
        timeout_s: float = 120.0,
        options: Mapping[str, Any] | None = None,
    ) -> None:
        self.api_base = api_base
        self.api_key = api_key
        self.num_retries = num_retries
        self.timeout_s = timeout_s
        self.options = dict(options or {})

    def _kwargs(self, request: LLMRequest) -> dict[str, Any]:
        kwargs: dict[str, Any] = {
            "model": request.model,
            "messages": [dict(m) for m in request.messages],
            "num_retries": 0,
            "max_retries": 0,
            "timeout": self.timeout_s,
            **self.options,
        }
        if request.tools:
            kwargs["tools"] = [dict(t) for t in request.tools]
            if request.tool_choice is not None:
                kwargs["tool_choice"] = request.tool_choice
        if request.response_format is not None:
            kwargs["response_format"] = dict(request.response_format)
        if self.api_base:
            kwargs["api_base"] = self.api_base
        if self.api_key:
            kwargs["api_key"] = self.api_key
        return kwargs

    async def complete(self, request: LLMRequest, *, on_delta: DeltaCallback | None = None) -> LLMReply:
        """Call the model; raise ``LLMCallError`` (after litellm's retries) when the provider fails."""
        litellm = import_litellm()
        kwargs = self._kwargs(request)
        why = unsendable(kwargs)
        if why is not None:  # a local fault: sent again it fails again, and no provider saw it
            raise LLMCallError(
                f"the request to model {request.model!r} cannot be sent: {why}; nothing was sent",
                model=request.model,
                kind="UnsendableRequest",
            )
        missing = missing_api_keys(request.model, api_key=self.api_key, api_base=self.api_base)
        if missing:  # fail at once: litellm would retry a call that cannot leave this machine
            raise LLMCallError(
                f"model {request.model!r} needs an API key: set {' or '.join(missing)} in the environment "
                "(or pass api_key=...; the reyn commands take --api-key-env VAR)",
                model=request.model,
                kind="MissingAPIKey",
            )
        attempt = 0
        while True:
            streamed: list[str] = []
            try:
                if request.stream:
                    return await self._stream(litellm, kwargs, on_delta, streamed)
                response = await litellm.acompletion(**kwargs)
                break
            except ReynError:
                raise
            except Exception as exc:
                # A stream that already showed text cannot be replayed to the listener: no retry.
                if attempt >= self.num_retries or streamed or not retryable(exc):
                    raise self._error(exc, request.model, attempt) from None
                attempt += 1
                await asyncio.sleep(retry_delay(exc, attempt))
        choice = response.choices[0]
        return LLMReply(
            _message_dict(choice.message),
            getattr(choice, "finish_reason", None),
            _usage_dict(getattr(response, "usage", None)),
        )

    async def _stream(
        self, litellm: Any, kwargs: dict[str, Any], on_delta: DeltaCallback | None, streamed: list[str]
    ) -> LLMReply:
        chunks = []
        stream = await litellm.acompletion(stream=True, **kwargs)
        async for chunk in stream:
            chunks.append(chunk)
            if on_delta is not None and chunk.choices:
                piece = getattr(chunk.choices[0].delta, "content", None)
                if piece:
                    streamed.append(piece)
                    on_delta(piece)
        built = litellm.stream_chunk_builder(chunks, messages=kwargs["messages"])
        if built is None or not built.choices:
            raise LLMCallError(f"the model {kwargs['model']!r} sent an empty stream", model=kwargs["model"])
        choice = built.choices[0]
        return LLMReply(
            _message_dict(choice.message),
            getattr(choice, "finish_reason", None),
            _usage_dict(getattr(built, "usage", None)),
        )

    def _error(self, exc: Exception, model: str, retries: int) -> LLMCallError:
        status = getattr(exc, "status_code", None) if got_response(exc) else None
        retried = f" after {retries} retr{'y' if retries == 1 else 'ies'}" if retries else ""
        where = f" at {self.api_base}" if self.api_base else ""
        code = f" (HTTP {status})" if isinstance(status, int) else " (no response from the provider)"
        return LLMCallError(
            f"the call to model {model!r}{where} failed{retried}{code}: {describe_exception(exc, 400)}",
            model=model,
            kind=type(exc).__name__,
            status_code=status if isinstance(status, int) else None,
        )


def default_client(client: LLMClient | None) -> LLMClient:
    """``client``, or a new ``LiteLLMClient`` when none was given (litellm is imported on its first
    call): what the loops and the replay client use when the caller passed no client."""
    return client if client is not None else LiteLLMClient()


def at_least_one(name: str, value: int) -> int:
    """``value``, or ``ValueError`` when it is below 1 (a loop's bound on the model calls of a run)."""
    if value < 1:
        raise ValueError(f"{name} must be at least 1")
    return value


class ModelLoop:
    """What ``RouterLoop`` and ``PhaseRunner`` are built on: the registry whose tools they offer, the
    model, its client and the callback that receives their events."""

    def __init__(
        self,
        registry: ToolRegistry,
        *,
        model: str,
        client: LLMClient | None,
        on_event: EventCallback | None,
    ) -> None:
        self.registry = registry
        self.model = model
        self.on_event = on_event
        self._client = client

    @property
    def client(self) -> LLMClient:
        """The model client (a ``LiteLLMClient`` unless one was given)."""
        self._client = default_client(self._client)
        return self._client
