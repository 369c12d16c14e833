"""Settings of the mcp pack: ``[plugins.mcp.settings]``. Unknown keys are errors.

``${VAR}`` in a server's ``command``, ``args``, ``env`` values, ``cwd``, ``url`` and ``headers``
values names an environment variable; ``$${`` writes a literal ``${``. A variable that is not set is
a validation error naming it (at load time) — never an empty string. The settings keep the RAW,
unexpanded strings: everything displayed or stored (``source()``, error messages, the snapshot file,
the tool origin in ``reyn.lock``) shows ``${VAR}``, never its value. Only ``resolved()`` — used to
spawn the process or open the HTTP connection — holds the expanded values, and ``redact()`` puts
``${VAR}`` back into any message that might echo one.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from reyn_sandbox import GRANT_KEYS

from .sandbox import ServerGrants

SERVER_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,32}$")
_VAR = re.compile(r"\$\$\{|\$\{([^}]*)\}")
_VAR_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
DEFAULT_MAX_MESSAGE_BYTES = 16 * 1024 * 1024
DEFAULT_MAX_MESSAGE_VALUES = 200_000
"""Parsing costs per JSON value, not per byte: at this bound a message of tiny values costs the host
tens of MB and a tenth of a second, where 16 MiB of them cost ~700 MB and over a second
(docs/decisions.md); a table of 50,000 cells as objects is about 105,000 values."""


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


@dataclass(frozen=True)
class ResolvedServer:
    """A server's settings with ``${VAR}`` expanded: only for spawning / connecting."""

    command: str | None
    args: list[str]
    env: dict[str, str]
    cwd: str | None
    url: str | None
    headers: dict[str, str]


class ServerConfig(ServerGrants):
    """One MCP server: stdio (``command``, ``args``, ``env``, ``cwd``) or streamable HTTP (``url``,
    ``headers``). ``import_tools`` exposes its tools as registry tools named ``<prefix>__<tool>``.
    A stdio server runs in the kernel sandbox under the grant keys of ``ServerGrants``
    (``read_roots``, ``write_roots``, ``network``, ``hide``, limits, ``sandbox``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    command: str | None = None
    args: list[str] = []
    env: dict[str, str] = {}
    cwd: str | None = None
    url: str | None = None
    headers: dict[str, str] = {}
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
        granted = sorted(set(GRANT_KEYS) & self.model_fields_set)
        if self.url is not None and granted:
            raise ValueError(
                f"{granted} are sandbox grants of stdio servers; an HTTP server ({self.url!r}) runs "
                "elsewhere and is not confined by Reyn"
            )
        if self.url is not None and not re.match(r"^https?://", expand_env(self.url, "url")):
            raise ValueError(f"`url` must be an http:// or https:// URL, got {self.url!r}")
        if self.prefix is not None and not SERVER_NAME.match(self.prefix):
            raise ValueError(f"`prefix` {self.prefix!r} must match {SERVER_NAME.pattern}")
        return self

    @field_validator("command", "cwd")
    @classmethod
    def _check_text(cls, value: str | None, info: Any) -> str | None:
        if value is not None:
            expand_env(value, str(info.field_name))  # a missing variable is a settings error
        return value

    @field_validator("args")
    @classmethod
    def _check_args(cls, value: list[str]) -> list[str]:
        for i, v in enumerate(value):
            expand_env(v, f"args[{i}]")
        return value

    @field_validator("env", "headers")
    @classmethod
    def _check_mapping(cls, value: dict[str, str], info: Any) -> dict[str, str]:
        for k, v in value.items():
            expand_env(v, f"{info.field_name}.{k}")
        return value

    def resolved(self, environ: Any = None) -> ResolvedServer:
        """The expanded values, for the process spawn / HTTP request only — never display them.
        Raises ``ValueError`` naming a variable that is no longer set."""
        env = os.environ if environ is None else environ
        return ResolvedServer(
            command=None if self.command is None else expand_env(self.command, "command", env),
            args=[expand_env(v, f"args[{i}]", env) for i, v in enumerate(self.args)],
            env={k: expand_env(v, f"env.{k}", env) for k, v in self.env.items()},
            cwd=None if self.cwd is None else expand_env(self.cwd, "cwd", env),
            url=None if self.url is None else expand_env(self.url, "url", env),
            headers={k: expand_env(v, f"headers.{k}", env) for k, v in self.headers.items()},
        )

    def referenced_variables(self) -> list[str]:
        """The names of every ``${VAR}`` this server's settings reference."""
        texts = [
            self.command or "",
            *self.args,
            *self.env.values(),
            self.cwd or "",
            self.url or "",
            *self.headers.values(),
        ]
        return sorted({m.group(1) for t in texts for m in _VAR.finditer(t) if m.group(1)})

    def redact(self, text: str, environ: Any = None) -> str:
        """``text`` with the value of every referenced variable replaced by ``${VAR}`` (longest first;
        values shorter than 4 characters are left alone: too common to be secrets, too noisy)."""
        env = os.environ if environ is None else environ
        values = sorted(
            ((str(env[n]), n) for n in self.referenced_variables() if len(str(env.get(n, ""))) >= 4),
            key=lambda vn: -len(vn[0]),
        )
        for value, name in values:
            text = text.replace(value, "${" + name + "}")
        return text

    @property
    def transport(self) -> str:
        """``stdio`` or ``http``."""
        return "stdio" if self.command is not None else "http"

    def source(self) -> str:
        """The command line or URL as written (``${VAR}`` unexpanded), for origins and listings."""
        if self.command is not None:
            return " ".join([self.command, *self.args])
        return str(self.url)


class McpSettings(BaseModel):
    """``[plugins.mcp.settings]``: ``servers`` by name, timeouts, the per-agent server allowlist and
    the tools/list snapshot file used by import mode."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    servers: dict[str, ServerConfig] = {}
    call_timeout_s: float = Field(default=60.0, gt=0, le=3600)
    connect_timeout_s: float = Field(default=30.0, gt=0, le=600)
    agent_servers: dict[str, list[str]] = {}
    snapshot_file: str = Field(default=".reyn/mcp-tools.json", min_length=1)
    max_text_chars: int = Field(default=100_000, ge=100, le=10_000_000)
    max_message_bytes: int = Field(default=DEFAULT_MAX_MESSAGE_BYTES, ge=64 * 1024, le=1024 * 1024 * 1024)
    """The largest JSON-RPC message an upstream server may send (one stdio line, one HTTP body or
    SSE event); a longer one is a transport fault of that connection, read in time linear in it."""
    max_message_values: int = Field(default=DEFAULT_MAX_MESSAGE_VALUES, ge=1_000, le=100_000_000)
    """The most JSON values (every scalar, container and key) one such message may hold, counted
    before it is parsed; a message with more is a transport fault of that connection, as over
    ``max_message_bytes``."""

    @model_validator(mode="after")
    def _names(self) -> McpSettings:
        for name in self.servers:
            if not SERVER_NAME.match(name):
                raise ValueError(f"server name {name!r} must match {SERVER_NAME.pattern}")
        for agent, names in self.agent_servers.items():
            unknown = sorted(set(names) - set(self.servers))
            if unknown:
                raise ValueError(
                    f"agent_servers.{agent} names unknown servers {unknown}; "
                    f"configured: {sorted(self.servers)}"
                )
        return self

    def snapshot_path(self, workspace: Path) -> Path:
        """The snapshot file: ``snapshot_file`` with ``~`` expanded, relative to ``workspace`` unless
        absolute (like the memory pack's store). Loading passes the directory it runs in — the
        workspace of the ``reyn`` CLI — and ``reyn mcp`` its ``--workspace`` (default: the same)."""
        p = Path(self.snapshot_file).expanduser()
        return p if p.is_absolute() else workspace / p

    def servers_for(self, agent: str | None) -> list[str]:
        """The servers ``agent`` may use, sorted. With ``agent_servers`` empty every agent may use
        every server; otherwise an agent gets its own list, or the ``"*"`` list, or nothing."""
        if not self.agent_servers:
            return sorted(self.servers)
        allowed = self.agent_servers.get(agent or "", self.agent_servers.get("*", []))
        return sorted(set(allowed) & set(self.servers))
