"""``reyn mcp install CLIENT``: write an MCP client's configuration so it launches ``reyn mcp serve``.

What is written launches exactly this environment's ``reyn`` by absolute path, with the profile and
workspace as absolute paths (``--profile-file``, ``--workspace``): an MCP client starts servers from
``/`` or the home directory, with no ``cwd`` and a bare environment, so nothing may depend on either.

The entry is **merged** into the client's existing file: every other key and server is kept, an entry
of the same name is refused unless ``--force`` (an identical one is left as it is), a file that is not
a JSON object is refused and left untouched, and the result is written atomically (a crash leaves the
old file or the new one, never half of one). ``--print`` prints the snippet and writes nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reyn_core import command_parser
from reyn_core.host import atomic_write_bytes, parse_json

DEFAULT_NAME = "reyn"
# A client's file bigger than this is not an MCP configuration we should rewrite.
MAX_CONFIG_BYTES = 8 * 1024 * 1024


class InstallError(Exception):
    """Why the configuration was not written (one line for the user)."""


def _claude_desktop_file(workspace: Path) -> Path:
    home = Path.home()
    if sys.platform == "darwin":
        return home / "Library" / "Application Support" / "Claude" / "claude_desktop_config.json"
    if sys.platform == "win32":
        return (
            Path(os.environ.get("APPDATA") or home / "AppData" / "Roaming")
            / "Claude"
            / "claude_desktop_config.json"
        )
    config = Path(os.environ.get("XDG_CONFIG_HOME") or home / ".config")
    return config / "Claude" / "claude_desktop_config.json"


@dataclass(frozen=True)
class Client:
    """One MCP client: where its file is, which key holds the servers, and whether entries carry
    ``"type": "stdio"``."""

    name: str
    title: str
    config_file: Callable[[Path], Path]
    servers_key: str = "mcpServers"
    typed: bool = False


CLIENTS: dict[str, Client] = {
    c.name: c
    for c in (
        Client("claude-desktop", "Claude Desktop", _claude_desktop_file),
        # Claude Code's project scope: `.mcp.json` at the project root, shared with the team.
        Client("claude-code", "Claude Code", lambda ws: ws / ".mcp.json", typed=True),
        Client("cursor", "Cursor", lambda ws: Path.home() / ".cursor" / "mcp.json"),
        # VS Code's workspace file: "servers" (not "mcpServers"), each with a "type".
        Client(
            "vscode", "VS Code", lambda ws: ws / ".vscode" / "mcp.json", servers_key="servers", typed=True
        ),
        Client("mcp-json", "your MCP client (mcp.json)", lambda ws: ws / "mcp.json"),
    )
}


def reyn_executable() -> Path:
    """This environment's ``reyn`` console script, by absolute path (the one running now)."""
    bin_dir = Path(sys.executable).parent
    for candidate in (bin_dir / "reyn", bin_dir / "reyn.exe"):
        if candidate.is_file():
            return candidate.absolute()
    argv0 = Path(sys.argv[0])
    if argv0.name.startswith("reyn") and argv0.is_file():
        return argv0.absolute()
    raise InstallError(f"cannot find this environment's reyn command next to {sys.executable}")


def server_entry(
    client: Client, *, reyn: Path, profile_file: Path, workspace: Path, profile: str | None, agent: str | None
) -> dict[str, Any]:
    """The server entry for ``client``: absolute command, profile and workspace, no ``cwd``."""
    args = ["mcp", "serve", "--profile-file", str(profile_file), "--workspace", str(workspace)]
    if profile:
        args += ["--profile", profile]
    if agent:
        args += ["--agent", agent]
    entry: dict[str, Any] = {"type": "stdio"} if client.typed else {}
    entry.update(command=str(reyn), args=args)
    return entry


def read_config(path: Path) -> dict[str, Any]:
    """The client's file as a JSON object ({} when it does not exist); ``InstallError`` otherwise."""
    try:
        with path.open("rb") as f:
            data = f.read(MAX_CONFIG_BYTES + 1)
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise InstallError(f"cannot read {path}: {exc.strerror or exc}") from None
    if len(data) > MAX_CONFIG_BYTES:
        raise InstallError(f"{path} is over {MAX_CONFIG_BYTES} bytes; not an MCP configuration to rewrite")
    if not data.strip():
        return {}
    try:
        config = parse_json(data)  # the user's own file, bounded in bytes; NaN is not JSON
    except (ValueError, RecursionError) as exc:
        raise InstallError(
            f"{path} is not valid JSON ({exc}); fix it, or use --print and add the entry by hand"
        ) from None
    if not isinstance(config, dict):
        raise InstallError(f"{path} holds a JSON {type(config).__name__}, not an object; left untouched")
    return config


def merged(
    config: Mapping[str, Any], client: Client, name: str, entry: dict[str, Any], *, force: bool
) -> tuple[dict[str, Any], bool]:
    """``config`` with ``entry`` as server ``name`` (every other key and server kept) and whether it
    changed. A different entry of that name is refused without ``force``."""
    out = dict(config)
    servers = out.get(client.servers_key, {})
    if not isinstance(servers, dict):
        raise InstallError(
            f"{client.servers_key!r} in the file is a JSON {type(servers).__name__}, not an object"
        )
    existing = servers.get(name)
    if existing == entry:
        return out, False
    if existing is not None and not force:
        raise InstallError(
            f"{client.title} already has an MCP server named {name!r} (a different one); pass --force "
            "to replace it, or --name NAME to add this one beside it"
        )
    out[client.servers_key] = {**servers, name: entry}
    return out, True


def install(
    client: Client,
    entry: dict[str, Any],
    *,
    name: str,
    path: Path,
    force: bool,
) -> bool:
    """Merge ``entry`` into ``path`` and write it atomically; returns whether the file changed."""
    config, changed = merged(read_config(path), client, name, entry, force=force)
    if changed:
        path.parent.mkdir(parents=True, exist_ok=True)
        text = json.dumps(config, indent=2, ensure_ascii=False) + "\n"
        try:
            atomic_write_bytes(path, text.encode("utf-8"), through_link=True)  # the config read above
        except OSError as exc:
            raise InstallError(f"cannot write {path}: {exc.strerror or exc}") from None
    return changed


def parser() -> argparse.ArgumentParser:
    """The options of ``reyn mcp install``."""
    p = command_parser(
        "reyn mcp install",
        description="Add `reyn mcp serve` to an MCP client's configuration, merged into the client's "
        "existing file (other servers kept; a same-name entry needs --force), with absolute paths to "
        "this environment's reyn, the profile and the workspace.",
        option_help={
            "--workspace": "workspace root the tools work in (default: the current directory; / and the "
            "home directory are refused)"
        },
    )
    p.add_argument("client", choices=sorted(CLIENTS), help="the MCP client to configure")
    p.add_argument(
        "--name", default=DEFAULT_NAME, help=f"the server's name in the client (default {DEFAULT_NAME!r})"
    )
    p.add_argument("--agent", help="the calling agent the gates see (default: reyn mcp serve's)")
    p.add_argument("--config", help="the client's configuration file (default: where the client reads it)")
    p.add_argument("--force", action="store_true", help="replace an entry of the same name")
    p.add_argument("--print", action="store_true", dest="print_only", help="print the entry; write nothing")
    return p


def main(argv: list[str], loaded: Any) -> int:
    """Entry point of ``reyn mcp install``. Exit 0 written (or already there), 2 refused."""
    from reyn_core import ReynError
    from reyn_core.host import choose_workspace

    args = parser().parse_args(argv)
    client = CLIENTS[args.client]
    try:
        workspace = choose_workspace(args.workspace)
        source = loaded.profile.source if loaded is not None else None
        if not source:
            raise InstallError(
                "no profile file was found, so the server would enable nothing: run from the folder of "
                "your reyn.toml or pass --profile-file FILE"
            )
        entry = server_entry(
            client,
            reyn=reyn_executable(),
            profile_file=Path(source).resolve(),
            workspace=workspace,
            profile=loaded.profile.name,  # the one reyn loaded: --profile anywhere, or $REYN_PROFILE
            agent=args.agent,
        )
        path = Path(args.config).expanduser().absolute() if args.config else client.config_file(workspace)
        snippet = {client.servers_key: {args.name: entry}}
        if args.print_only:
            print(json.dumps(snippet, indent=2))
            return 0
        changed = install(client, entry, name=args.name, path=path, force=args.force)
    except (InstallError, ReynError) as exc:
        print(f"reyn mcp install: error: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps({"client": client.name, "file": str(path), "changed": changed, **snippet}, indent=2))
    elif changed:
        print(f"added MCP server {args.name!r} to {client.title}: {path}")
        print(f"restart {client.title} (or reload its MCP servers) to see the tools")
    else:
        print(f"{client.title} already has this MCP server {args.name!r}: {path}")
    return 0


__all__ = ["CLIENTS", "Client", "InstallError", "install", "main", "merged", "read_config", "server_entry"]
