"""Fixtures for the plugin loader tests: real plugin distributions installed into fresh venvs."""

from __future__ import annotations

import sys
from pathlib import Path

# Test modules (here and in tests/cli) import the distribution builder as a plain module.
sys.path.insert(0, str(Path(__file__).parent))
