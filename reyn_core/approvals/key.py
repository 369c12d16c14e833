"""An approval's key: the exact call, as the approver is shown it, the handler will receive it and
the code that will run it.

The key is **derived from the approver's view** (``request_view``: the tool, its plugin and version,
the redacted arguments, the workspace, what the call can touch, the session, agent, entry point and
surface, the rule that held it): ``CallKey.shown`` holds a keyed digest of *every* field of that view,
so whatever an approver is shown is bound, and a field added to the view later is bound with no
change here. Beside it the key pins what the view cannot show exactly: the validated arguments as
bound for the handler (defaults filled, as canonical JSON, with the validated arguments they were
bound from, since the bound form's JSON may be lossy), the tool's definition digest, its plugin's
tree digest and the lock the load was checked against. ``digest`` is the digest of all of it.

Arguments are only ever kept as a keyed hash (``argument_hash`` with the installation's key), so
the store holds no argument a guess could recover; the view holds them redacted. ``drift`` names
what differs between two keys, in the words a refusal gives the model. A key of an earlier format
(``KEY_FORMAT``) never matches: its approval is refused, and voided, saying so.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from typing import Any, NamedTuple

from ..context import ToolContext
from ..definition_digest import definition_digest
from ..jsondata import to_jsonable
from ..redaction import redact
from ..tool import ToolDefinition
from .paths import workspace_root

Hasher = Callable[[Any], str]
"""A keyed digest of JSON data (``reyn_core.dispatch.argument_hash`` with the installation's key)."""

KEY_FORMAT = 2
"""The key's format: 2 binds every field of the approver's view (1, before 2026-12-07, bound only
the tool, arguments, definition, plugin, lock, agent and entry point)."""


class Drift(NamedTuple):
    """Why a key does not match an approved one: the refusal's reason ``code``, its ``words``, and
    whether the approval is voided (False: it still holds for the caller it was given to)."""

    code: str
    words: str
    voids: bool = True


# the pinned components, checked first, in this order: component -> what its drift says
_PINNED: dict[str, Drift] = {
    "format": Drift(
        "key_format_changed",
        "it was approved under an earlier key format, which did not bind the workspace, surface and "
        "what the call can touch; ask for approval again",
    ),
    "tool": Drift("tool_differs", "it was approved for another tool"),
    "arguments": Drift("arguments_differ", "the arguments differ from the approved call"),
    "definition": Drift("definition_changed", "the tool's definition changed since it was approved"),
    "plugin": Drift("plugin_changed", "the plugin's files changed since it was approved (tree digest)"),
    "lock": Drift("lock_changed", "the lock changed since it was approved"),
    "agent": Drift("agent_differs", "it was approved for another agent"),
    "entry": Drift("entry_differs", "it was approved for another entry point"),
}

# words for some fields of the view; any other field that differs is ``request_differs``, naming it
_SHOWN: dict[str, Drift] = {
    "workspace": Drift("workspace_differs", "it was approved for another workspace"),
    "surface": Drift("surface_differs", "it was approved on another surface"),
    "can_touch": Drift(
        "reach_changed", "what the call can touch (its sandbox and grants) changed since it was approved"
    ),
    "rule": Drift("rule_changed", "the rule that holds it changed since it was approved"),
    # a standing approval asked from a session is still the operator's for calls from a session
    "session": Drift("session_differs", "it was approved for a call from a session, or from none", False),
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


def request_view(
    tool: ToolDefinition,
    arguments: CallArguments,
    ctx: ToolContext,
    surface: str,
    *,
    rule: str,
    reach: Mapping[str, Any],
) -> dict[str, Any]:
    """What an approver is shown of a call (``ApprovalRecord.request``), as JSON data; the key binds
    every field of it (``CallKey.of``). ``rule``: the rule that held the call, in words; ``reach``:
    what the call can touch (its plugin's sandbox and grants, names only, never a secret)."""
    origin = tool.origin
    return {
        "tool": tool.name,
        "description": tool.description[:500],
        "purity": tool.purity,
        "plugin": origin.plugin_id if origin else None,
        "distribution": origin.distribution if origin else None,
        "version": origin.version if origin else None,
        "source": origin.source_kind if origin else None,
        # secret properties (writeOnly / format: password) are never shown or stored
        "arguments": redact(arguments.bound, tool.parameters),
        # where relative paths resolve: the workspace with its links resolved, as the file pack's
        "workspace": str(workspace_root(ctx.workspace)),
        "can_touch": to_jsonable(dict(reach)),
        "session": ctx.session is not None,
        "agent": ctx.agent,
        "entry": ctx.entry or ctx.surface,
        "surface": surface,
        "rule": rule,
    }


@dataclass(frozen=True, slots=True)
class CallKey:
    """The exact call (see the module docstring): the pinned components, one value or digest each,
    and ``shown``, a keyed digest of each field of the approver's view."""

    tool: str
    arguments: str
    definition: str
    plugin: str | None
    lock: str | None
    agent: str | None
    entry: str
    shown: Mapping[str, str] = field(default_factory=dict)
    format: int = KEY_FORMAT

    @classmethod
    def of(
        cls,
        tool: ToolDefinition,
        arguments: CallArguments,
        view: Mapping[str, Any],
        *,
        lock: str | None,
        hasher: Hasher,
    ) -> CallKey:
        """The key of a call whose approver's view is ``view`` (``request_view``): every field of
        the view bound by its keyed digest, and the pinned components beside them."""
        origin = tool.origin
        return cls(
            tool=tool.name,
            arguments=hasher({"bound": arguments.bound, "given": arguments.given}),
            definition=definition_digest(tool),
            plugin=origin.tree_digest if origin is not None else None,
            lock=lock,
            agent=view["agent"],
            entry=view["entry"],
            shown={name: hasher({name: value}) for name, value in view.items()},
        )

    def components(self) -> dict[str, Any]:
        """The components as JSON data (what a store keeps, and the digest covers)."""
        # shallow: every component is a string, None or an int, and ``shown`` a flat mapping of strings
        return {f.name: getattr(self, f.name) for f in fields(self)} | {"shown": dict(self.shown)}

    def digest(self, hasher: Hasher) -> str:
        """The key's one digest: the hasher over every component."""
        return hasher(self.components())

    def drift(self, approved: Mapping[str, Any]) -> Drift | None:
        """Why this call is not the one of ``approved`` (a stored key's components): the first
        pinned component that differs, else a field of the view that does (in the view's order, one
        that voids the approval first); None when the call is the approved one."""
        mine = self.components()
        for name, drift in _PINNED.items():
            if approved.get(name) != mine[name]:
                return drift
        theirs = approved.get("shown")
        theirs = theirs if isinstance(theirs, Mapping) else {}
        names = [*self.shown, *(name for name in theirs if name not in self.shown)]
        drifts = [
            _SHOWN.get(name, Drift("request_differs", f"what its approver was shown differs ({name})"))
            for name in names
            if theirs.get(name) != self.shown.get(name)
        ]
        # one that voids first: a call that differs in more than the session is not the approved one
        return min(drifts, key=lambda d: not d.voids) if drifts else None
