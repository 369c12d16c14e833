"""The offline demo behind ``reyn demo`` (see ``runner.run_demo``).

Its data lives next to this file: ``profile.toml`` (the profile template), ``workspace/`` (the notes,
skill and agent copied into a temporary folder), ``mcp_server.py`` (a stdio MCP server written with
the ``mcp`` SDK) and ``script.py`` (the scripted model's turns).
"""
