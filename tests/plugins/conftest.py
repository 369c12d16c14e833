"""Fixtures for the plugin loader tests: real plugin distributions installed into fresh venvs."""

from __future__ import annotations
