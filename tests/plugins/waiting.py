"""Waiting for another thread in a test: a condition polled, never a timing that decides a pass."""

from __future__ import annotations

import time
from collections.abc import Callable


def until(condition: Callable[[], bool]) -> bool:
    """Whether ``condition`` became true within 30 s (a wait for another thread, not a timing)."""
    end = time.monotonic() + 30
    while not condition():
        if time.monotonic() > end:
            return False
        time.sleep(0.01)
    return True
