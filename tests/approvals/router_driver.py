"""A host process for the router approval tests: ``run`` starts a conversation against the scripted
server and saves the run; ``resume`` loads a saved run in a fresh process and resumes it. Each prints
the run's JSON. Arguments: the command, the server's base URL, the state file."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

from reyn_core import ToolContext
from reyn_core.host import load, load_profile
from reyn_loops import LiteLLMClient, RouterLoop, RouterResult

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")


async def main(command: str, base_url: str, state: Path) -> None:
    result = load(load_profile())
    client = LiteLLMClient(api_base=base_url, api_key="test-key", num_retries=0, timeout_s=30)
    ctx = ToolContext(surface="router", agent="writer", workspace=Path.cwd())
    loop = RouterLoop(result.registry, model="openai/scripted", ctx=ctx, client=client)
    if command == "run":
        run = await loop.run("write the note, then read it")
    else:
        run = await loop.resume(RouterResult.from_json(json.loads(state.read_text())), {})
    state.write_text(json.dumps(run.as_json()))
    print(json.dumps({"status": run.status, "text": run.text, "pending": [vars(p) for p in run.pending]}))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], Path(sys.argv[3])))
