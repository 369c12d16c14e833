"""reyn-loops' testing kit: LLM record/replay for pytest and a scripted model server.

- ``reyn_loops.testing.replay`` — the ``llm_replay`` fixture and marker (a pytest plugin, entry
  point ``pytest11: reyn_loops``, so it is there in every suite once reyn-loops is installed).
- ``reyn_loops.testing.scripted_server`` — ``ScriptedModelServer``, a real OpenAI-compatible HTTP
  server on 127.0.0.1 answering from a script (``ScriptedReply``), for end-to-end tests and the demo;
  also ``python -m reyn_loops.testing.scripted_server SCRIPT.json``.
"""
