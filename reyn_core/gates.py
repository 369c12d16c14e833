"""The one gate evaluation. Renderers use it to decide what a model sees; the dispatcher uses it
again before every call. There is no other implementation of these rules.

Layer 1 ``role``     — the tool author's ``ToolGates``.
Layer 2 ``operator`` — the profile: plugin tools master switch, per-plugin surfaces (and tool lists of
                       a registry a host assembled; ``load`` applies the profile's when it registers).
Layer 3 ``call``     — exclusions of this call, plan mode (tools whose author gates ``plan_mode="deny"``),
                       a plan step's tool list, phase ``allowed_ops``, the per-agent allowlists and
                       the tool's own ``available(ctx)``.
A tool whose handler is None is hidden on every surface (layer ``runtime``).

``check`` evaluates every layer. The layers a frozen registry fixes (role, operator, runtime:
``fixed_layers``) read only the tool and the snapshot's policy, all of final, frozen types, so a
``ToolRegistry`` decides them once per tool and surface and ``check`` asks it for that answer; the
call layer is evaluated on every call, in two parts: ``call_layer`` from the call's ``CallKey`` alone
(so ``ToolRegistry.visible`` may keep its answer per key) and the tool's own ``available(ctx)``.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, NamedTuple, Protocol

from . import operator_policy as _policy
from .context import SURFACES, ToolContext, as_names
from .moved import moved_attributes
from .own_check import CheckAnswer, CheckResultError, ask_all, check_name
from .remote_log import FailureLog
from .tool import ToolDefinition

Layer = Literal["role", "operator", "call", "runtime", ""]


@dataclass(frozen=True, slots=True)
class Decision:
    """The outcome of ``check``: allowed, or refused by ``layer`` for ``reason``.

    ``rule`` names which check of the layer refused, where a layer has several that an operator
    fixes differently (layer ``call``: ``excluded``, ``plan_mode``, ``step_tools``, ``allowed_ops``,
    ``agent_tools``, ``available``); "" otherwise."""

    allowed: bool
    layer: Layer = ""
    reason: str = ""
    rule: str = ""

    def __bool__(self) -> bool:
        return self.allowed


ALLOW = Decision(True)


# what ``available`` logs when no registry asks (each registry keeps its own: ``ToolRegistry.failures``)
PROCESS_FAILURES = FailureLog("available")


def op_matches(entry: str, tool: ToolDefinition) -> bool:
    """Whether one ``allowed_ops`` entry admits ``tool``: exact name, cluster name, or glob."""
    if entry == tool.name or entry == tool.cluster:
        return True
    if any(c in entry for c in "*?["):
        return fnmatch.fnmatchcase(tool.name, entry)
    return False


def ops_admit(allowed_ops: Iterable[str], tool: ToolDefinition) -> bool:
    """Whether any entry of ``allowed_ops`` admits ``tool``. An empty list admits nothing."""
    return any(op_matches(entry, tool) for entry in allowed_ops)


class GatePolicySource(Protocol):
    """What ``check`` reads from a registry: its operator policy, the context a tool's ``available``
    sees (with its plugin's settings), the answer of the layers it fixes (``fixed_layers`` of its
    policy, which a ``ToolRegistry`` decides once per tool, the plugins' own names for prefixed tools
    included) and where a failed ``available`` is logged."""

    @property
    def operator(self) -> _policy.OperatorPolicy: ...

    def context_for(self, tool: ToolDefinition, ctx: ToolContext) -> ToolContext: ...

    def fixed_layers(self, tool: ToolDefinition, surface: str) -> Decision | None: ...

    @property
    def failures(self) -> FailureLog: ...


def check(
    tool: ToolDefinition,
    surface: str,
    ctx: ToolContext,
    *,
    registry: GatePolicySource | None = None,
    operator: _policy.OperatorPolicy = _policy.NO_POLICY,
    exclude: Collection[str] = (),
    allowed_ops: Iterable[str] | None = None,
    original_names: Mapping[str, str] | None = None,
) -> Decision:
    """Decide whether ``tool`` may be shown to and called from ``surface`` in ``ctx``.

    ``exclude`` and ``allowed_ops`` add to what ``ctx`` already carries (``call_gates``,
    ``router_state.exclude``, ``phase_state.allowed_ops``); renderers and the dispatcher pass the
    same values, so what a model sees and what it may call cannot disagree. ``registry`` (a
    ``ToolRegistry``) supplies its operator policy, original names and the tool's plugin settings;
    without one, ``operator`` and ``original_names`` (a prefixed name → the plugin's own name, so
    ``tools.include`` / ``tools.exclude`` can use either) are used as given.
    """
    _require_known(surface)
    if registry is not None:
        if operator is not _policy.NO_POLICY or original_names is not None:
            raise TypeError("pass either registry= or operator=/original_names=, not both")
        operator = registry.operator
        ctx = registry.context_for(tool, ctx)
        refused = registry.fixed_layers(tool, surface)
        return decide(tool, surface, ctx, operator, refused, exclude, allowed_ops, registry.failures)
    refused = fixed_layers(tool, surface, operator, original_names)
    return decide(tool, surface, ctx, operator, refused, exclude, allowed_ops)


def decide(
    tool: ToolDefinition,
    surface: str,
    ctx: ToolContext,
    operator: _policy.OperatorPolicy,
    refused: Decision | None,
    exclude: Collection[str],
    allowed_ops: Iterable[str] | None,
    failures: FailureLog | None = None,
) -> Decision:
    """The end of ``check``, once the layers a snapshot fixes are known: ``refused`` is their answer
    (``fixed_layers``), ``ctx`` the context the tool sees (with its plugin's settings), ``surface``
    one of ``SURFACES``. ``check`` calls this with the answer it just asked for; the dispatcher with
    the answer its registry snapshot holds for the tool and surface (``PreparedTool.refusals``,
    filled by ``check`` itself), so a call does not look the tool up again. Not a second evaluator:
    every decision of every layer is made by the functions of this module, here or in ``check``."""
    key = _call_key(surface, ctx, operator, exclude, allowed_ops)
    if refused is not None:
        return refused
    decision = call_layer(tool, key)
    return decision if not decision.allowed or tool.available is None else available(tool, ctx, failures)


def _require_known(surface: str) -> None:
    if surface not in SURFACES:  # an unknown surface would skip the surface-specific layer-3 checks
        raise ValueError(f"unknown surface {surface!r}; use one of {list(SURFACES)}")


def fixed_layers(
    tool: ToolDefinition,
    surface: str,
    operator: _policy.OperatorPolicy,
    original_names: Mapping[str, str] | None,
) -> Decision | None:
    """The refusal of the layers fixed by the tool and the operator (role, operator, runtime), or
    None when they admit it. Reads nothing of the call, and only final, frozen values: a registry
    snapshot decides it once per tool and surface (``ToolRegistry.fixed_layers``). An unknown
    surface is refused here too, so no answer is ever kept for one."""
    _require_known(surface)
    # layer 1 — role
    if not tool.gates.allows(surface):
        return Decision(
            False, "role", f"tool {tool.name!r} is not offered on the {surface} surface by its author"
        )

    # layer 2 — operator
    plugin = tool.plugin_id
    if plugin is not None and tool.origin is not None and tool.origin.kind != "host":
        if not operator.plugins_enabled:
            return Decision(
                False, "operator", "plugin tools are switched off by the profile ([features] plugins = false)"
            )
        policy = operator.plugins.get(plugin)
        if policy is not None:
            if policy.surfaces is not None and surface not in policy.surfaces:
                return Decision(
                    False, "operator", f"the profile narrows plugin {plugin!r} to {sorted(policy.surfaces)}"
                )
            names = {tool.name, (original_names or {}).get(tool.name, tool.name)}
            if names & policy.exclude:
                return Decision(
                    False, "operator", f"the profile excludes {tool.name!r} (plugins.{plugin}.tools.exclude)"
                )
            if policy.include is not None and not names & policy.include:
                return Decision(False, "operator", f"{tool.name!r} is not in plugins.{plugin}.tools.include")
    if surface == "router" and tool.name in operator.router_exclude:
        return Decision(
            False,
            "operator",
            f"the profile excludes {tool.name!r} from the router ([surfaces.router] exclude)",
        )

    # runtime — nothing to run
    if tool.handler is None:
        return Decision(False, "runtime", f"tool {tool.name!r} has no handler in this installation")
    return None


class CallKey(NamedTuple):
    """Everything layer 3 reads from a call, except what a tool's own ``available(ctx)`` reads:
    the surface, the agent, the exclusions (the call's, ``call_gates``' and ``router_state``'s), a
    router step's ``allowed_tools``, a phase's resolved ``allowed_ops`` (the call's, else
    ``call_gates``', else ``phase_state``'s), the host's per-call allowlist (``ctx.agent_tools``),
    plan mode (``router_state.plan_mode``, on any surface) and the registry's list for the agent.

    ``call_layer`` reads nothing else, so two calls with equal keys get the same layer-3 answer for
    every tool without ``available``; a cache of what a caller may see (``ToolRegistry.visible``)
    keys on this and re-asks ``available(ctx)`` on every call. A new call-layer input must become a
    field here, or ``call_layer`` cannot read it. (A named tuple: made on every call, it costs a
    fraction of a frozen dataclass.)"""

    surface: str
    agent: str | None
    exclude: frozenset[str]
    allowed_tools: frozenset[str] | None
    allowed_ops: tuple[str, ...] | None
    agent_tools: frozenset[str] | None
    plan_mode: bool
    agent_list: frozenset[str] | None


def call_key(
    surface: str,
    ctx: ToolContext,
    operator: _policy.OperatorPolicy = _policy.NO_POLICY,
    *,
    exclude: Collection[str] = (),
    allowed_ops: Iterable[str] | None = None,
) -> CallKey:
    """The ``CallKey`` of a call on ``surface`` in ``ctx`` with ``exclude`` / ``allowed_ops`` added
    (as ``check`` takes them); a phase's ``allowed_ops`` resolved to the profile default when unset."""
    _require_known(surface)
    return _call_key(surface, ctx, operator, exclude, allowed_ops)


def _call_key(
    surface: str,
    ctx: ToolContext,
    operator: _policy.OperatorPolicy,
    exclude: Collection[str],
    allowed_ops: Iterable[str] | None,
) -> CallKey:
    """``call_key`` of a surface already known (``check`` asked ``_require_known`` first)."""
    ex = exclude if type(exclude) is frozenset else frozenset(as_names(exclude, "exclude"))
    carried = ctx.call_gates  # what the dispatcher was passed for this call (None: nothing)
    if carried is not None:
        ex, allowed_ops = ex | carried.exclude, carried.allowed_ops if allowed_ops is None else allowed_ops
    rs = ctx.router_state
    steps: frozenset[str] | None = None
    plan_mode = False
    if rs is not None:
        plan_mode = rs.plan_mode
        if surface == "router":
            ex = ex | rs.exclude if rs.exclude else ex
            steps = rs.allowed_tools
    ops: tuple[str, ...] | None = None
    if surface == "phase":
        chosen = allowed_ops
        if chosen is None and ctx.phase_state is not None:
            chosen = ctx.phase_state.allowed_ops
        ops = as_names(chosen if chosen is not None else operator.default_allowed_ops, "allowed_ops")
    agent = ctx.agent
    lists = operator.agent_tools
    listed = lists.get(agent) if lists and agent is not None else None
    # the tuple made directly: a named tuple's own ``__new__`` is a Python frame on every call
    return _new_key(CallKey, (surface, agent, ex, steps, ops, ctx.agent_tools, plan_mode, listed))


_new_key = tuple.__new__


def _call_refused(rule: str, reason: str) -> Decision:
    """A refusal by layer 3 (``call``) under its ``rule``."""
    return Decision(False, "call", reason, rule)


def call_layer(tool: ToolDefinition, key: CallKey) -> Decision:
    """Layer 3 from the call's ``key`` alone: everything but the tool's own ``available(ctx)``
    (``available``), which ``check`` asks after this admits the tool."""
    if tool.name in key.exclude:
        return _call_refused("excluded", f"tool {tool.name!r} is excluded for this call")
    # Plan mode is the caller's state, not the surface's: whatever surface a host renders or
    # dispatches for with it, a tool whose author denies plan mode is refused (anything but "allow").
    if key.plan_mode and tool.gates.plan_mode != "allow":
        return _call_refused(
            "plan_mode",
            f"tool {tool.name!r} is not offered in plan mode: a plan step may not use it "
            "(its author's plan_mode gate)",
        )
    if key.allowed_tools is not None and tool.name not in key.allowed_tools:
        return _call_refused(
            "step_tools",
            f"tool {tool.name!r} is not in this step's tool list {sorted(key.allowed_tools)}",
        )
    if key.allowed_ops is not None and not ops_admit(key.allowed_ops, tool):
        return _call_refused(
            "allowed_ops",
            f"op {tool.name!r} is not in this phase's allowed_ops {list(key.allowed_ops)}",
        )
    if key.agent_tools is not None and tool.name not in key.agent_tools:
        return _call_refused(
            "agent_tools",
            f"agent {key.agent!r} may not use {tool.name!r} (per-agent allowlist)",
        )
    if key.agent_list is not None and tool.name not in key.agent_list:
        return _call_refused(
            "agent_tools",
            f"agent {key.agent!r} may not use {tool.name!r}: it is not in the agent's tool list "
            f"([agents.{key.agent}] tools in the profile, else the agent's own declaration)",
        )
    return ALLOW


def available(tool: ToolDefinition, ctx: ToolContext, failures: FailureLog | None = None) -> Decision:
    """The tool's own ``available(ctx)`` as a decision, asked strictly (``own_check.ask_all``:
    only ``True`` admits; a result that is not a bool, or an exception, hides the tool).
    ``ctx`` is the context the tool sees (with its plugin's settings: ``ToolRegistry.context_for``)."""
    return available_each([(tool, ctx)], failures)[0]


def available_each(
    asked: Sequence[tuple[ToolDefinition, ToolContext]], failures: FailureLog | None = None
) -> list[Decision]:
    """``available`` for each tool and its ``ctx`` of a listing: asked at once, within one deadline
    in all (``own_check.ask_all``)."""
    return _decided(asked, ask_all(asked), failures)


def _decided(
    asked: Sequence[tuple[ToolDefinition, ToolContext]],
    answers: Sequence[CheckAnswer],
    failures: FailureLog | None,
) -> list[Decision]:
    """The decisions of ``answers``; a failed ask (tools sharing a check share its one answer) is
    logged once for all the tools it answered (``failure_reference``), not once per tool."""
    shared: dict[int, tuple[BaseException, list[ToolDefinition]]] = {}
    for (tool, _), answer in zip(asked, answers, strict=True):
        if answer.failure is not None:
            shared.setdefault(id(answer), (answer.failure, []))[1].append(tool)
    log = failures or PROCESS_FAILURES
    refs = {key: failure_reference(tools, failure, log) for key, (failure, tools) in shared.items()}
    return [_own_decision(t.name, a, refs.get(id(a), "")) for (t, _), a in zip(asked, answers, strict=True)]


def _own_decision(name: str, answer: CheckAnswer, ref: str) -> Decision:
    if answer.allowed:
        return ALLOW
    if answer.failure is not None:
        return _check_failed(name, ref)
    if answer.reason is not None:
        return _call_refused("available", answer.reason)
    return _call_refused("available", f"tool {name!r} is not available in this context")


CITED_TOOLS = 5
"""How many of the tools a failed check answered its record names (the rest are counted)."""


def failure_reference(
    tools: Sequence[ToolDefinition], failure: BaseException | str, failures: FailureLog
) -> str:
    """Where the operator finds what failed in the availability check ``tools`` share (one ask), as
    the refusal cites it: ``failures`` (the registry's) writes it once per check (the function
    object, named in the record by its module-qualified name and plugin) and kind of failure, not on
    every listing nor once per tool; the record counts the tools and names the first ``CITED_TOOLS``.
    What failed (an exception, or the text a plugin's worker sent) may carry a secret: logged only."""
    first = tools[0]
    name = check_name(first.available)
    names = ", ".join(repr(t.name) for t in tools[:CITED_TOOLS])
    more = f" and {len(tools) - CITED_TOOLS} more" if len(tools) > CITED_TOOLS else ""
    what = (
        f"the availability check {name} (plugin {first.plugin_id!r}) failed; it answers "
        f"{len(tools)} tool(s) of this listing: {names}{more}"
    )
    kind = failure.kind if isinstance(failure, CheckResultError) else None
    return failures.log((first.plugin_id, name, id(first.available)), what, failure, kind)


def failed_check(tool: ToolDefinition, failure: BaseException | str, failures: FailureLog) -> Decision:
    """The refusal of ``tool`` whose availability check failed, in fixed words (``RT011``) citing the
    operator's log (``failure_reference``). The one place an ``RT011`` is worded: a check that failed
    in process (``available``) and one that failed in an isolated plugin's worker at call time (the
    dispatcher, on the worker's ``CheckFailed``) alike."""
    return _check_failed(tool.name, failure_reference([tool], failure, failures))


def _check_failed(name: str, ref: str) -> Decision:
    return _call_refused(
        "available", f"tool {name!r} is unavailable: its availability check failed (RT011); {ref}"
    )


# the operator's policy types moved to ``reyn_core.operator_policy``: their old names here say so
__getattr__ = moved_attributes(__name__)
