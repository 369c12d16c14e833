"""Which calls need a person's approval: ``ApprovalPolicy`` (the profile's ``[approvals]``) and its rules.

A rule names tools, plugins, clusters and purities; it matches a call when every selector it gives
matches (a selector it leaves out matches everything; within one selector any listed value does).
``unless_within`` narrows a rule by the call's path arguments: the rule does not apply when those
arguments give at least one path and every one resolves inside one of the roots
(``approvals.paths``: as the file pack resolves them). A path argument that is not a string, or a
list of strings, fails closed (the rule applies). The first matching rule decides who may approve.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from ..context import frozen_names
from ..tool import ToolDefinition
from .paths import within

Approver = Literal["user", "operator"]
APPROVERS: tuple[Approver, ...] = ("user", "operator")


@dataclass(frozen=True, slots=True)
class PathCondition:
    """``unless_within``: the top-level ``arguments`` that hold paths, and the ``roots`` (relative to
    the workspace) inside which a call needs no approval."""

    arguments: tuple[str, ...]
    roots: tuple[str, ...]

    def all_within(self, arguments: Mapping[str, Any], workspace: Path) -> bool:
        """Whether the named arguments give at least one path and every one resolves inside a root
        (fail closed: a value that is not a string or a list of strings is outside, and a call that
        gives no path at all — a tool without the argument, an empty list — is not exempt)."""
        seen = 0
        for name in self.arguments:
            if name not in arguments:
                continue
            value = arguments[name]
            values: Iterable[Any] = value if isinstance(value, list) else (value,)
            for item in values:
                if not isinstance(item, str) or not within(item, self.roots, workspace):
                    return False
                seen += 1
        return seen > 0


@dataclass(frozen=True, slots=True)
class ApprovalRule:
    """One ``[[approvals.rules]]`` entry (see the module docstring)."""

    tools: frozenset[str] | None = None
    plugins: frozenset[str] | None = None
    clusters: frozenset[str] | None = None
    purity: frozenset[str] | None = None
    unless_within: PathCondition | None = None
    approvers: tuple[Approver, ...] = APPROVERS

    def __post_init__(self) -> None:
        for name in ("tools", "plugins", "clusters", "purity"):
            object.__setattr__(self, name, frozen_names(getattr(self, name), f"ApprovalRule({name}=...)"))
        unknown = [a for a in self.approvers if a not in APPROVERS]
        if unknown or not self.approvers:
            raise ValueError(f"ApprovalRule(approvers=...) takes some of {', '.join(APPROVERS)}")

    def selects(self, tool: ToolDefinition) -> bool:
        """Whether the rule's selectors name ``tool`` (the path condition aside)."""
        origin = tool.origin
        plugin = origin.plugin_id if origin is not None else None
        return (
            (self.tools is None or tool.name in self.tools)
            and (self.plugins is None or plugin in self.plugins)
            and (self.clusters is None or tool.cluster in self.clusters)
            and (self.purity is None or tool.purity in self.purity)
        )

    def applies(self, tool: ToolDefinition, arguments: Mapping[str, Any], workspace: Path) -> bool:
        """Whether this call needs approval under this rule."""
        if not self.selects(tool):
            return False
        return self.unless_within is None or not self.unless_within.all_within(arguments, workspace)


@dataclass(frozen=True, slots=True)
class ApprovalPolicy:
    """The rules, how long a request or an approval lasts (``ttl_s``), and the store's location."""

    rules: tuple[ApprovalRule, ...] = ()
    ttl_s: float = 3600.0
    store: str | None = None

    def rule_for(
        self, tool: ToolDefinition, arguments: Mapping[str, Any], workspace: Path
    ) -> ApprovalRule | None:
        """The first rule that makes this call need approval, or None."""
        for rule in self.rules:
            if rule.applies(tool, arguments, workspace):
                return rule
        return None

    def may_apply(self, tool: ToolDefinition) -> bool:
        """Whether any rule selects ``tool`` at all (a call of any other tool skips the check)."""
        return any(rule.selects(tool) for rule in self.rules)
