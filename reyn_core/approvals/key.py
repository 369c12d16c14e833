"""An approval's key: the exact call, as the handler will receive it and the code that will run it.

``CallKey`` holds one digest per component — the tool's name, the validated arguments as bound for
the handler (defaults filled, as canonical JSON), the tool's definition digest, its plugin's tree
digest, the lock the load was checked against, the agent and the entry point — and ``digest`` is
the digest of all of them. Arguments are only ever kept as a keyed hash (``argument_hash`` with the
installation's key), so the store holds no argument a guess could recover; what an approver is
shown is a redacted copy (``request_view``). The arguments component covers both the bound form and
the validated arguments it was bound from, since the bound form's JSON may be lossy. ``drift`` names
what differs between two keys, in the words a refusal gives the model.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from typing import Any

from ..context import ToolContext
from ..definition_digest import definition_digest
from ..jsondata import to_jsonable
from ..tool import ToolDefinition

Hasher = Callable[[Any], str]
"""A keyed digest of JSON data (``reyn_core.dispatch.argument_hash`` with the installation's key)."""

# component -> (the refusal's reason code, what drifted, in words)
_DRIFT: dict[str, tuple[str, str]] = {
    "tool": ("tool_differs", "it was approved for another tool"),
    "arguments": ("arguments_differ", "the arguments differ from the approved call"),
    "definition": ("definition_changed", "the tool's definition changed since it was approved"),
    "plugin": ("plugin_changed", "the plugin's files changed since it was approved (tree digest)"),
    "lock": ("lock_changed", "the lock changed since it was approved"),
    "agent": ("agent_differs", "it was approved for another agent"),
    "entry": ("entry_differs", "it was approved for another entry point"),
}


@dataclass(frozen=True, slots=True)
class CallArguments:
    """A call's arguments as its key covers them: ``bound``, what the handler receives as JSON data,
    and ``given``, the validated arguments that were bound. The bound form alone can be lossy (a
    pydantic ``SecretStr`` dumps as "**********", an infinite float as null), so two different calls
    could share it; the same given arguments bound by the same code (definition and tree digests)
    are the same handler arguments."""

    bound: Any
    given: Any


def handler_arguments(
    kwargs: Mapping[str, Any], model_param: str | None, ctx_param: str | None, given: Any
) -> CallArguments:
    """The bound arguments as JSON data, shaped like the tool's schema: what the handler receives,
    defaults filled by the binding (a pydantic model's fields, a typed signature's defaults); the
    context is not an argument. ``given``: the validated arguments they were bound from."""
    if model_param is not None:
        return CallArguments(to_jsonable(kwargs[model_param]), given)
    return CallArguments(to_jsonable({k: v for k, v in kwargs.items() if k != ctx_param}), given)


@dataclass(frozen=True, slots=True)
class CallKey:
    """One digest per component of the exact call (see the module docstring)."""

    tool: str
    arguments: str
    definition: str
    plugin: str | None
    lock: str | None
    agent: str | None
    entry: str

    @classmethod
    def of(
        cls,
        tool: ToolDefinition,
        arguments: CallArguments,
        ctx: ToolContext,
        *,
        lock: str | None,
        hasher: Hasher,
    ) -> CallKey:
        origin = tool.origin
        return cls(
            tool=tool.name,
            arguments=hasher({"bound": arguments.bound, "given": arguments.given}),
            definition=definition_digest(tool),
            plugin=origin.tree_digest if origin is not None else None,
            lock=lock,
            agent=ctx.agent,
            entry=ctx.entry or ctx.surface,
        )

    def components(self) -> dict[str, str | None]:
        return asdict(self)

    def digest(self, hasher: Hasher) -> str:
        """The key's one digest: the hasher over every component."""
        return hasher(self.components())

    def drift(self, approved: Mapping[str, Any]) -> tuple[str, str] | None:
        """``(reason code, words)`` of the first component that differs from ``approved`` (a stored
        key's components), or None when the call is the approved one."""
        mine = self.components()
        for name, (code, words) in _DRIFT.items():
            if approved.get(name) != mine[name]:
                return code, words
        return None
