import pytest


@pytest.fixture
def reyn_plugin_id() -> str:
    """The plugin these tests are about (the entry-point name in pyproject.toml)."""
    return "example"
