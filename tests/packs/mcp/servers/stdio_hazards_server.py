"""Raw JSON-RPC stdio servers (no SDK) that stress the mcp pack's own stdio transport, for
test_mcp_stdio_hazards.py. ``python stdio_hazards_server.py MODE``; every process ends by itself
within ``ALARM_S`` (SIGALRM) at the latest:

- ``forks``: forks a child at start (same process group) that keeps stdout open after the server
  exits; the server answers ``ping`` and exits at the end of its stdin. The child writes a newline
  every 0.1 s once the server is gone and exits at the first write to a closed pipe.
- ``crash``: answers ``initialize``; at ``tools/list`` writes the start of an answer, no newline,
  and exits 1 (a crash mid-message).
- ``ping-flood``: answers ``initialize`` and ``tools/list`` (tool ``slow``); at the first
  ``tools/call`` of ``slow`` stops reading its stdin and writes server→client ``ping`` requests
  forever.
- ``stubborn DIR``: a server that will not be stopped gently: ``initialize`` answered after
  ``HAZARDS_SLOW_INIT`` seconds, ``SIGTERM`` ignored (a line ``term`` written to ``DIR/<pid>``),
  ``tools/call`` of ``hang`` never answered (nor stdin read any more); at the end of its stdin it
  writes ``eof`` and exits — or, with ``HAZARDS_LIVE_AFTER_EOF`` set, lives on.
- anything else: a well-behaved server (``initialize``, ``tools/list`` with ``add``, ``tools/call``).

Every mode but ``crash`` also lists ``pid``, whose call answers the server's process id. Slower,
for the deadline's tests: ``tools/list`` answered after ``HAZARDS_SLOW_LIST`` seconds, ``pid`` after
``HAZARDS_SLOW_PID``.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time

MODE = sys.argv[1] if len(sys.argv) > 1 else "fine"
ALARM_S = 30


def send(message: dict) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def child_holding_stdout(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(0.05)
    try:
        while True:
            os.write(1, b"\n")
            time.sleep(0.1)
    except OSError:
        os._exit(0)


def ping_flood() -> None:
    n = 10_000
    try:
        while True:
            n += 1
            sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": n, "method": "ping"}) + "\n")
            sys.stdout.flush()
    except OSError:
        os._exit(0)


def note(word: str) -> None:
    """``stubborn``: ``word`` on a line of ``DIR/<pid>``."""
    with open(os.path.join(sys.argv[2], str(os.getpid())), "a") as log:
        log.write(word + "\n")


def answer(message: dict) -> None:
    method, request_id = message.get("method"), message.get("id")
    if method == "initialize" and MODE == "stubborn":
        time.sleep(float(os.environ.get("HAZARDS_SLOW_INIT", "0")))
    if method == "initialize":
        version = message["params"]["protocolVersion"]
        info = {"name": "hazards", "version": "0"}
        send(
            {
                "jsonrpc": "2.0",
                "id": request_id,
                "result": {"protocolVersion": version, "capabilities": {"tools": {}}, "serverInfo": info},
            }
        )
    elif method == "tools/list" and MODE == "crash":
        sys.stdout.write('{"jsonrpc":"2.0","id":' + json.dumps(request_id) + ',"res')
        sys.stdout.flush()
        os._exit(1)
    elif method == "tools/list":
        time.sleep(float(os.environ.get("HAZARDS_SLOW_LIST", "0")))
        names = [{"ping-flood": "slow", "stubborn": "hang"}.get(MODE, "add"), "pid"]
        tools = [{"name": name, "inputSchema": {"type": "object"}} for name in names]
        send({"jsonrpc": "2.0", "id": request_id, "result": {"tools": tools}})
    elif method == "tools/call" and message["params"]["name"] == "slow":
        ping_flood()
    elif method == "tools/call" and message["params"]["name"] == "hang":
        time.sleep(ALARM_S)
    elif method == "tools/call":
        args = message["params"].get("arguments") or {}
        pid = message["params"]["name"] == "pid"
        if pid:
            time.sleep(float(os.environ.get("HAZARDS_SLOW_PID", "0")))
        text = str(os.getpid() if pid else args.get("a", 0) + args.get("b", 0))
        send({"jsonrpc": "2.0", "id": request_id, "result": {"content": [{"type": "text", "text": text}]}})
    else:
        send({"jsonrpc": "2.0", "id": request_id, "result": {}})


def main() -> None:
    signal.alarm(ALARM_S)
    if MODE == "forks" and os.fork() == 0:
        signal.alarm(ALARM_S)
        child_holding_stdout(os.getppid())
    if MODE == "stubborn":
        signal.signal(signal.SIGTERM, lambda *_: note("term"))
    for line in sys.stdin:
        try:
            message = json.loads(line)
        except ValueError:
            continue
        if message.get("id") is not None and "method" in message:
            answer(message)
    if MODE == "stubborn":
        note("eof")
        while os.environ.get("HAZARDS_LIVE_AFTER_EOF"):
            time.sleep(1)


if __name__ == "__main__":
    main()
