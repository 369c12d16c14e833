"""Diagnostics: what went wrong while finding, checking, loading or registering plugins and tools.

Every diagnostic has a stable ``code`` (``CODES``, docs/diagnostics.md), a severity, the plugin and
tool concerned, a message saying what was wrong and a hint saying how to fix it. Code families:

``RS…`` parameters schema (``schema.py``), ``RT…`` registration (``registry/``), ``RD…`` discovery
and selection, ``RI…`` import and plugin API, ``RC…`` settings and profile, ``RP…`` provenance,
``RL…`` lock, ``RJ…`` permissions and isolated plugins (those the core reports are here; the
isolation backend, reyn-isolation, words its own from its ``codes``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

Severity = Literal["error", "warning", "info"]


@dataclass(frozen=True, slots=True)
class CodeInfo:
    """What a code means: its severity, a short title, and the generic fix."""

    severity: Severity
    title: str
    hint: str


CODES: dict[str, CodeInfo] = {
    # ---- schema (reyn_core/schema.py)
    "RS001": CodeInfo(
        "error",
        "parameters are not a JSON object",
        'give the tool a JSON Schema object with a "type": "object" root',
    ),
    "RS002": CodeInfo(
        "error",
        "schema too large or too deep",
        "keep tool schemas under 64 KiB and 32 levels; split the tool or simplify the schema",
    ),
    "RS003": CodeInfo(
        "error",
        "schema root is not an object",
        'tool arguments are a JSON object: use {"type": "object", "properties": {...}}',
    ),
    "RS004": CodeInfo(
        "error",
        "non-local $ref, $dynamicRef or embedded $id",
        "use only local '#/$defs/...' references; inline anything remote",
    ),
    "RS005": CodeInfo(
        "error",
        "not a valid JSON Schema 2020-12",
        "fix the keyword the message points at (JSON pointer given)",
    ),
    "RS006": CodeInfo(
        "error",
        "phase-usable tool has a 'kind' parameter",
        'rename the parameter, or deny the phase gate with ToolGates(phase="deny")',
    ),
    "RS007": CodeInfo(
        "error",
        "unsafe or invalid regex pattern",
        "use a pattern that compiles, is under 1000 characters and has no nested quantifiers",
    ),
    "RS101": CodeInfo(
        "warning",
        "schema cannot be OpenAI strict",
        "close every object (additionalProperties: false) and avoid unsupported keywords if you need strict "
        "mode",
    ),
    "RS102": CodeInfo(
        "warning",
        "keyword unsupported by Gemini",
        "avoid the keyword if the tool must work with Gemini models",
    ),
    "RS103": CodeInfo(
        "warning",
        "unknown JSON Schema keyword",
        "fix the spelling: JSON Schema ignores unknown keywords, so a misspelt constraint has no effect",
    ),
    # ---- registration (reyn_core/registry/ and the loader)
    "RT001": CodeInfo(
        "error",
        "registered object is not a tool",
        "pass register() a ToolDefinition or a function decorated with @reyn_core.tool",
    ),
    "RT002": CodeInfo(
        "error",
        "invalid tool name",
        "use ^[a-zA-Z0-9_-]{1,64}$: letters, digits, '_' and '-', at most 64 characters (a prefix counts)",
    ),
    "RT003": CodeInfo(
        "error",
        "tool has no description",
        "write a docstring or pass description=; models choose tools by it",
    ),
    "RT004": CodeInfo(
        "error",
        "tool name collision",
        "give one plugin a `prefix`, or add the tool to its `tools.exclude`, in the profile",
    ),
    "RT005": CodeInfo("error", "invalid handler", "point handler at a callable or a 'module:attr' string"),
    "RT006": CodeInfo(
        "error",
        "invalid definition field",
        "use gates 'allow'/'deny', a known purity and dispatch_kind, a non-empty cluster, a positive "
        "timeout_s",
    ),
    "RT007": CodeInfo(
        "error",
        "tool definition could not be checked",
        "simplify the definition; the message names what broke the check",
    ),
    "RT008": CodeInfo(
        "warning",
        "lazy handler module not found",
        "install the plugin's missing part (an optional dependency?) or fix the 'module:attr' reference; "
        "the tool is hidden until then",
    ),
    "RT010": CodeInfo(
        "error",
        "tool description is too long",
        "keep the description to what choosing and calling the tool needs (at most 16,384 characters)",
    ),
    "RT009": CodeInfo(
        "error",
        "tool claims another plugin's cluster",
        "use a cluster of your own (your plugin id is a good choice); a cluster named like an installed "
        "plugin or a registered tool belongs to it",
    ),
    # ---- discovery and selection
    "RD001": CodeInfo(
        "error",
        "enabled plugin is not installed",
        "install the distribution that provides it, or remove it from plugins.enable",
    ),
    "RD002": CodeInfo(
        "error",
        "plugin id provided by several distributions",
        'name the one to use: [plugins.<id>] distribution = "<name>"',
    ),
    "RD003": CodeInfo(
        "error",
        "named distribution does not provide the plugin",
        "fix plugins.<id>.distribution, or install that distribution",
    ),
    "RD004": CodeInfo(
        "error",
        "malformed entry point",
        "the entry point in group reyn.plugins must name a module ('pkg.module') or object "
        "('pkg.module:attr')",
    ),
    "RD005": CodeInfo(
        "warning",
        "entry-point group is a near miss of reyn.plugins",
        'rename the group to exactly [project.entry-points."reyn.plugins"] and reinstall the distribution',
    ),
    "RD006": CodeInfo(
        "warning",
        "an extension entry point from a distribution not allowed to provide it was ignored",
        "uninstall that distribution (a plugin or another distribution claiming reyn-isolation's, "
        "reyn-otel's or an approval store's entry point); it was never imported",
    ),
    # ---- import and plugin API
    "RI001": CodeInfo(
        "error",
        "plugin failed to import",
        "fix the import error in the plugin, or install its missing dependency",
    ),
    "RI002": CodeInfo(
        "error", "plugin does not declare REYN_API", "add `REYN_API = 1` at module level of the plugin"
    ),
    "RI003": CodeInfo(
        "error",
        "plugin API version not supported",
        "install a plugin release written for this reyn-core's API version",
    ),
    "RI004": CodeInfo(
        "error",
        "invalid hook implementation",
        "check hook names and argument names against reyn_core.hookspecs",
    ),
    "RI005": CodeInfo(
        "error", "plugin hook raised", "fix the plugin; the message names the hook and the exception"
    ),
    "RI006": CodeInfo(
        "error",
        "settings model is not a pydantic model",
        "return a pydantic BaseModel subclass from reyn_settings_model()",
    ),
    "RI007": CodeInfo(
        "warning",
        "plugin CLI command not usable",
        "return {name: fn(argv, loaded) -> int} from reyn_cli_commands(), with names that do not shadow "
        'built-in commands, each declared as NAME = "<plugin id>" under '
        '[project.entry-points."reyn.commands"]',
    ),
    "RI008": CodeInfo(
        "warning",
        "plugin diagnostics hook misbehaved",
        "return a list of {code, severity, message, hint?, tool?} mappings from reyn_diagnostics(), and do "
        "not raise",
    ),
    "RI009": CodeInfo(
        "error",
        "plugin module would be imported from outside its distribution",
        "remove or rename the shadowing file or folder the message names (often in the working "
        "directory or on PYTHONPATH), or run from another directory; a plugin is only imported "
        "from the files its digest covers",
    ),
    "RI011": CodeInfo(
        "warning",
        "plugin implements a retired hook",
        "delete the function the message names; it is ignored now and refused as an unknown hook "
        "(RI004) from reyn-core 0.2",
    ),
    "RI012": CodeInfo(
        "warning",
        "plugin agent tool lists hook misbehaved",
        "return {agent name: [tool names]} from reyn_agent_tools(), and do not raise",
    ),
    # ---- settings and profile
    "RC001": CodeInfo("error", "plugin settings invalid", "fix [plugins.<id>.settings] as the message says"),
    "RC002": CodeInfo(
        "error",
        "settings given to a plugin without settings",
        "remove [plugins.<id>.settings]; this plugin takes none",
    ),
    "RC003": CodeInfo("error", "profile invalid", "fix the key the message names in the file it names"),
    "RC004": CodeInfo(
        "warning",
        "configuration for a plugin that is not enabled",
        "add the plugin to plugins.enable, or remove its [plugins.<id>] table",
    ),
    "RC005": CodeInfo(
        "warning",
        "tools.include/tools.exclude names an unknown tool",
        "use the plugin's own tool names (see `reyn plugins show <id>`)",
    ),
    "RC006": CodeInfo(
        "error",
        "audit log not writable",
        "point [audit] log at a writable file; until then every tool call is refused (fail closed)",
    ),
    "RC007": CodeInfo(
        "warning",
        "a surface list names no loaded tool",
        "fix the name in [surfaces.router] exclude or [surfaces.phase] default_allowed_ops (see `reyn tools "
        "list`)",
    ),
    "RC008": CodeInfo(
        "warning",
        "unknown plugin setting ignored",
        "fix the key in [plugins.<id>.settings]; the message lists the settings the plugin takes",
    ),
    "RC009": CodeInfo(
        "error",
        "an approval rule names no loaded tool, plugin or cluster",
        "fix the name in [[approvals.rules]] (see `reyn tools list`): a typo holds no call for approval",
    ),
    "RC010": CodeInfo(
        "warning",
        "an agent's tool list names no loaded tool",
        "fix the name in the agent's tool list ([agents.<name>] tools, or the agent's own file), or enable "
        "the plugin that has it (see `reyn tools list`)",
    ),
    "RC011": CodeInfo(
        "error",
        "the approval store cannot be set up",
        "install the distribution that provides [approvals] backend, or fix [approvals.settings] as the "
        "message says; until then every call that needs approval is refused (fail closed)",
    ),
    "RC012": CodeInfo(
        "error", "tracing is on but no add-on makes spans", "install reyn-otel (see the message)"
    ),
    # ---- provenance
    "RP001": CodeInfo(
        "error",
        "digest pin mismatch",
        "reinstall the pinned artifact, or update plugins.<id>.digest after reviewing the change",
    ),
    "RP002": CodeInfo(
        "error",
        "installed files differ from RECORD",
        "the installed files were modified after install: reinstall the distribution",
    ),
    "RP003": CodeInfo(
        "error",
        "editable or directory install refused",
        "install from a wheel or index, or set provenance.allow_editable = true",
    ),
    "RP004": CodeInfo(
        "error",
        "provenance could not be computed",
        "reinstall the distribution; its metadata or files cannot be read",
    ),
    "RP005": CodeInfo(
        "warning",
        "digest may not cover all plugin code",
        "reinstall the distribution (a wheel install has a complete RECORD); fatal when the plugin is "
        "pinned or the lock is enforced",
    ),
    # ---- lock
    "RL001": CodeInfo(
        "error",
        "plugin drifted from the lock",
        "review the change, then run `reyn plugins lock` to accept it",
    ),
    "RL002": CodeInfo("error", "plugin not in the lock", "run `reyn plugins lock` to add it, or disable it"),
    "RL003": CodeInfo(
        "error",
        "lock missing or unreadable while enforcing",
        "run `reyn plugins lock`, or set [lock] enforce = false",
    ),
    "RL004": CodeInfo(
        "error",
        "lock written in an older format",
        "review the installed plugins, then re-run `reyn plugins lock` to write the current format; "
        "while [lock] enforce = true every enabled plugin is refused until then",
    ),
    "RL005": CodeInfo("warning", "[lock] verify is ignored", "delete verify from [lock]; it changes nothing"),
    # ---- permissions and isolation (the rest of RJ… is reyn-isolation's: reyn_isolation/codes.py)
    "RJ001": CodeInfo(
        "error",
        "malformed permission declaration",
        "fix reyn_permissions.toml in the plugin's package (docs/writing-a-plugin.md#declaring-permissions)",
    ),
    "RJ006": CodeInfo(
        "warning",
        "grants without isolation are not enforced",
        'add isolation = "process" to [plugins.<id>], or remove [plugins.<id>.grants]',
    ),
    "RJ012": CodeInfo(
        "error",
        "isolation is asked for but no verified isolation backend is installed",
        "pip install --find-links DIST reyn-isolation (DIST: the wheelhouse `make dist` fills; it brings "
        "reyn-sandbox), or reinstall it if its files differ from its RECORD; never loaded in process instead",
    ),
}


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """One finding: stable ``code``, ``severity``, ``message`` (what was wrong), ``hint`` (the fix),
    and the ``plugin`` / ``tool`` concerned, when there is one. ``traceback`` is the full Python
    traceback of an exception behind it (``RI001``), shown only on request (``reyn --traceback``,
    ``REYN_DEBUG=1``): the message already names the failing file and line."""

    code: str
    severity: Severity
    message: str
    hint: str
    plugin: str | None = None
    tool: str | None = None
    traceback: str | None = field(default=None, compare=False, repr=False)

    @classmethod
    def make(
        cls,
        code: str,
        message: str,
        *,
        hint: str | None = None,
        plugin: str | None = None,
        tool: str | None = None,
        severity: Severity | None = None,
        traceback: str | None = None,
    ) -> Diagnostic:
        """A diagnostic whose severity and hint default to the code's entry in ``CODES``."""
        info = CODES.get(code)
        severity = severity or (info.severity if info else "error")
        hint = hint if hint else (info.hint if info else "")
        return cls(code, severity, message, hint, plugin, tool, traceback)

    @property
    def is_error(self) -> bool:
        """True for severity ``error``."""
        return self.severity == "error"

    def render(self) -> str:
        """``CODE severity [plugin/tool]: message (hint: …)`` on one line."""
        where = "/".join(x for x in (self.plugin, self.tool) if x)
        where = f" [{where}]" if where else ""
        hint = f" — fix: {self.hint}" if self.hint else ""
        return f"{self.code} {self.severity}{where}: {self.message}{hint}"

    def to_json(self) -> dict[str, Any]:
        """A JSON-safe dict of every field (``traceback`` only when there is one)."""
        data: dict[str, Any] = {
            "code": self.code,
            "severity": self.severity,
            "plugin": self.plugin,
            "tool": self.tool,
            "message": self.message,
            "hint": self.hint,
        }
        if self.traceback is not None:
            data["traceback"] = self.traceback
        return data
