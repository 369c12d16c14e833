"""Settings of the mcp pack: ``[plugins.mcp.settings]``. Unknown keys are errors.

``${VAR}`` in a server's ``args``, ``env`` values, ``url`` and ``headers`` values is replaced by the
environment variable when the settings are validated (at load time); ``$${`` writes a literal
``${``. A variable that is not set is a validation error naming it — never an empty string.
"""

from __future__ import annotations

import os
import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

SERVER_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,32}$")
_VAR = re.compile(r"\$\$\{|\$\{([^}]*)\}")
_VAR_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def expand_env(value: str, where: str, environ: Any = None) -> str:
    """Replace ``${VAR}`` in ``value``; raise ``ValueError`` naming the missing variable and ``where``."""
    env = os.environ if environ is None else environ

    def sub(match: re.Match[str]) -> str:
        if match.group(0) == "$${":
            return "${"
        name = match.group(1)
        if not _VAR_NAME.match(name or ""):
            raise ValueError(f"{where}: {match.group(0)!r} is not a valid ${{VAR}} reference")
        if name not in env:
            raise ValueError(f"{where}: environment variable {name!r} is not set (referenced as ${{{name}}})")
        return str(env[name])

    return _VAR.sub(sub, value)


class ServerConfig(BaseModel):
    """One MCP server: stdio (``command``, ``args``, ``env``, ``cwd``) or streamable HTTP (``url``,
    ``headers``). ``import_tools`` exposes its tools as registry tools named ``<prefix>__<tool>``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    command: str | None = None
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    cwd: str | None = None
    url: str | None = None
    headers: dict[str, str] = Field(default_factory=dict)
    timeout_s: float | None = Field(None, gt=0, le=3600)
    import_tools: bool = False
    prefix: str | None = None

    @model_validator(mode="after")
    def _one_transport(self) -> ServerConfig:
        if (self.command is None) == (self.url is None):
            raise ValueError("a server needs exactly one of `command` (stdio) or `url` (streamable HTTP)")
        if self.url is not None and (self.args or self.env or self.cwd):
            raise ValueError("`args`, `env` and `cwd` apply to stdio servers only (this one has a `url`)")
        if self.command is not None and self.headers:
            raise ValueError("`headers` apply to HTTP servers only (this one has a `command`)")
        if self.url is not None and not re.match(r"^https?://", self.url):
            raise ValueError(f"`url` must be an http:// or https:// URL, got {self.url!r}")
        if self.prefix is not None and not SERVER_NAME.match(self.prefix):
            raise ValueError(f"`prefix` {self.prefix!r} must match {SERVER_NAME.pattern}")
        return self

    @field_validator("args")
    @classmethod
    def _expand_args(cls, value: list[str]) -> list[str]:
        return [expand_env(v, f"args[{i}]") for i, v in enumerate(value)]

    @field_validator("env", "headers")
    @classmethod
    def _expand_mapping(cls, value: dict[str, str], info: Any) -> dict[str, str]:
        return {k: expand_env(v, f"{info.field_name}.{k}") for k, v in value.items()}

    @field_validator("url")
    @classmethod
    def _expand_url(cls, value: str | None) -> str | None:
        return None if value is None else expand_env(value, "url")

    @property
    def transport(self) -> str:
        """``stdio`` or ``http``."""
        return "stdio" if self.command is not None else "http"

    def source(self) -> str:
        """The command line or URL, for origins and listings (never env or header values)."""
        if self.command is not None:
            return " ".join([self.command, *self.args])
        return str(self.url)


class McpSettings(BaseModel):
    """``[plugins.mcp.settings]``: ``servers`` by name, timeouts, the per-agent server allowlist and
    the tools/list snapshot file used by import mode."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    servers: dict[str, ServerConfig] = Field(default_factory=dict)
    call_timeout_s: float = Field(60.0, gt=0, le=3600)
    connect_timeout_s: float = Field(30.0, gt=0, le=600)
    agent_servers: dict[str, list[str]] = Field(default_factory=dict)
    snapshot_file: str = ".reyn/mcp-tools.json"
    max_text_chars: int = Field(100_000, ge=100, le=10_000_000)

    @model_validator(mode="after")
    def _names(self) -> McpSettings:
        for name in self.servers:
            if not SERVER_NAME.match(name):
                raise ValueError(f"server name {name!r} must match {SERVER_NAME.pattern}")
        for agent, names in self.agent_servers.items():
            unknown = sorted(set(names) - set(self.servers))
            if unknown:
                raise ValueError(f"agent_servers.{agent} names unknown servers {unknown}; "
                                 f"configured: {sorted(self.servers)}")
        return self

    def servers_for(self, agent: str | None) -> list[str]:
        """The servers ``agent`` may use, sorted. With ``agent_servers`` empty every agent may use
        every server; otherwise an agent gets its own list, or the ``"*"`` list, or nothing."""
        if not self.agent_servers:
            return sorted(self.servers)
        allowed = self.agent_servers.get(agent or "", self.agent_servers.get("*", []))
        return sorted(set(allowed) & set(self.servers))


def coerce_settings(value: Any) -> McpSettings:
    """The validated settings whatever the host passed (a model, a mapping, or None)."""
    if isinstance(value, McpSettings):
        return value
    if value is None:
        return McpSettings()
    return McpSettings.model_validate(value)
