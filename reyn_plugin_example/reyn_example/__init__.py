"""Example Reyn tool plugin: unit conversion and text statistics (pure, no network)."""

__version__ = "0.1.0"
