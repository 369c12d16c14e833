"""The ``loops`` plugin (entry point ``loops`` in group ``reyn.plugins``): it registers no tools and
contributes ``reyn chat`` and ``reyn phase`` through the ``reyn_cli_commands`` hook, as any pack adds
a command. Enable it like any plugin (``[plugins] enable = ["loops", ...]``).

Nothing heavy is imported here: each command imports its module (and litellm, on the first model
call) when it runs.
"""

from __future__ import annotations

from typing import Any

from reyn_core import hookimpl

REYN_API = 1
PLUGIN_ID = "loops"


@hookimpl
def reyn_cli_commands() -> dict[str, Any]:
    """``reyn chat`` (an interactive router session) and ``reyn phase run FILE`` (one phase)."""
    return {"chat": chat_command, "phase": phase_command}


def chat_command(argv: list[str], loaded: Any) -> int:
    from .cli.chat import main

    return main(argv, loaded)


def phase_command(argv: list[str], loaded: Any) -> int:
    from .cli.phase import main

    return main(argv, loaded)
