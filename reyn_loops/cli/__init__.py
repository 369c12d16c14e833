"""``reyn chat`` and ``reyn phase``: commands the ``loops`` plugin contributes to ``reyn`` through
the ``reyn_cli_commands`` hook (``reyn_loops.plugin``). Each is ``main(argv, loaded) -> int``: the
words after the command and the ``LoadResult`` of the profile ``reyn`` loaded for it; each builds
its parser with ``reyn_core.command_parser``, which declares the options ``reyn`` reads itself."""

from __future__ import annotations

EXIT_OK = 0
EXIT_FAILED = 1

__all__ = ["EXIT_FAILED", "EXIT_OK"]
