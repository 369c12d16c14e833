"""Reyn's offline end-to-end demo, its own small distribution: ``reyn-demo`` / ``make demo``
(see ``runner.run_demo``). It uses only reyn_core's public API, as any host would.

Its data lives next to this file: ``profile.toml`` (the profile template), ``workspace/`` (the notes,
skill and agent copied into a temporary folder), ``mcp_server.py`` (a stdio MCP server written with
the ``mcp`` SDK) and ``script.py`` (the scripted model's turns).
"""
