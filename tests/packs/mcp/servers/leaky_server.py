"""An MCP server (mcp SDK) that leaks the secret in ``$TOK`` in every encoding of ``$LEAK_FORMS``, for
the mcp pack's "no form of a secret reaches a model" tests. ``python leaky_server.py MODE``:

- ``start``: writes the forms to stderr, then exits with status 7 before the handshake;
- ``serve``: a working server whose tools leak on demand — ``crash`` writes the forms to stderr and
  dies mid-call; ``rpc_error`` answers a JSON-RPC error whose message and data hold the forms;
  ``ok`` answers normally (the positive control: the same server keeps working).
"""

from __future__ import annotations

import json
import os
import sys

# both come from the host's environment through the server's ``env`` (``${VAR}`` references)
TOKEN = os.environ["TOK"]
FORMS: dict[str, str] = json.loads(os.environ["LEAK_FORMS"])  # the test's secret_forms(TOKEN)


def leak() -> None:
    for name, value in FORMS.items():
        print(f"{name}: {value}", file=sys.stderr)
    half = len(TOKEN) // 2
    print(f"split: {TOKEN[:half]}\n{TOKEN[half:]}", file=sys.stderr, flush=True)


if __name__ == "__main__":
    mode = sys.argv[1] if len(sys.argv) > 1 else "start"
    if mode == "start":
        leak()
        sys.exit(7)

    from mcp.server.mcpserver import MCPServer
    from mcp.shared.exceptions import MCPError

    server = MCPServer("leaky")

    @server.tool()
    def ok(text: str = "fine") -> str:
        """Answer normally."""
        return text

    @server.tool()
    def crash() -> str:
        """Leak on stderr, then die mid-call."""
        leak()
        os._exit(5)

    @server.tool()
    def rpc_error() -> str:
        """Answer a JSON-RPC error carrying the secret."""
        raise MCPError(code=-32001, message="auth failed for " + " / ".join(FORMS.values()), data=FORMS)

    server.run()
