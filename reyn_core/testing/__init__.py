"""Testing kit for Reyn plugin authors (fixtures and helpers)."""
