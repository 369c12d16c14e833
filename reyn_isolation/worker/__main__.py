"""Entry point of the isolated plugin worker (see ``reyn_isolation.worker``)."""

from __future__ import annotations

import os
import sys


def main() -> int:
    """Keep the protocol pipes private, load the plugin, serve calls; the exit status says why it ended."""
    # The protocol gets its own descriptors; what the plugin prints (fd 1) goes to stderr, and it
    # reads nothing from fd 0.
    proto_in, proto_out = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)
    from reyn_isolation.worker.serve import run

    return run(proto_in, proto_out)


if __name__ == "__main__":
    sys.exit(main())
