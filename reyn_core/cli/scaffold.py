"""``scaffold_plugin``: a new, working Reyn plugin project (``reyn plugins new NAME``).

The project passes its own tests right after ``pip install -e '.[test]'`` (into an environment
that has reyn-core, or with ``--find-links`` to the wheelhouse): a ``pyproject.toml`` with
the ``reyn.plugins`` entry point, a ``src/`` package with one sample tool and a settings model, and
tests written with the reyn pytest kit (the reyn-testing distribution, in the test extra;
``pytest-asyncio`` in auto mode, so ``async def`` tests run as they are).
"""

from __future__ import annotations

import keyword
import re
import sys
from pathlib import Path

from ..errors import ReynError

NAME_RE = re.compile(r"^[a-z][a-z0-9_]{0,39}$")
# Names of Reyn itself. Ids of installed plugins are refused too, from discovery (metadata only), and
# so is a distribution name already installed (``pip install -e .`` would replace it). The core names
# no pack: a pack that is not installed here is not known here.
RESERVED = frozenset({"reyn", "reyn_core"})


class ScaffoldError(ReynError):
    """The plugin name is not usable, or the destination already holds files."""


def check_plugin_name(name: str) -> None:
    """Raise ``ScaffoldError`` unless ``name`` can be a plugin id, an import package and a cluster."""
    if not isinstance(name, str) or not NAME_RE.fullmatch(name):
        raise ScaffoldError(
            f"plugin name {name!r} is not usable: use 1-40 lowercase letters, digits and '_', "
            "starting with a letter (e.g. 'demo_plugin')"
        )
    if keyword.iskeyword(name) or name in sys.stdlib_module_names:
        raise ScaffoldError(
            f"plugin name {name!r} is a Python keyword or standard-library module; pick another"
        )
    if name in RESERVED:
        raise ScaffoldError(f"plugin name {name!r} is Reyn's own; pick another")
    from reyn_core.loading.step2_discovery.discovery import discover

    owners = sorted({c.distribution for c in discover().plugins if c.plugin_id == name})
    if owners:
        raise ScaffoldError(
            f"plugin name {name!r} is taken by the installed distribution {', '.join(owners)}: two "
            "distributions claiming one id are both refused at discovery; pick another"
        )
    dist = distribution_name(name)
    installed = _installed_distribution(dist)
    if installed is not None:
        raise ScaffoldError(
            f"plugin name {name!r} gives the distribution name {dist!r}, which is already installed "
            f"({installed}): `pip install -e .` would replace it; pick another"
        )


def _installed_distribution(dist: str) -> str | None:
    """``name version`` of the installed distribution ``dist`` (names compared normalised), or None."""
    from importlib import metadata

    try:
        found = metadata.distribution(dist)
    except metadata.PackageNotFoundError:
        return None
    return f"{found.metadata['Name']} {found.version}"


def distribution_name(name: str) -> str:
    """The distribution name for plugin ``name``: ``reyn-`` plus the name with dashes."""
    dashed = name.replace("_", "-")
    return dashed if dashed.startswith("reyn-") else f"reyn-{dashed}"


def scaffold_plugin(name: str, dest: Path) -> Path:
    """Create a plugin project for plugin id ``name`` in ``dest / name`` and return that folder.

    Raises ``ScaffoldError`` for an unusable name or a destination folder that is not empty; writes
    nothing in that case.
    """
    check_plugin_name(name)
    root = Path(dest) / name
    if root.exists() and (not root.is_dir() or any(root.iterdir())):
        raise ScaffoldError(f"{root} already exists and is not empty; choose another name or folder")
    files = _files(name)
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def next_steps(root: Path, name: str) -> str:
    """What to do after ``reyn plugins new``: printed by the CLI.

    ``reyn-core`` and ``reyn-testing`` (the test extra's kit) are on no package index, so a bare
    ``pip install -e '.[test]'`` works only where both are already installed. The first command is
    the pip of the interpreter running this ``reyn`` (which has reyn-core); the second is for a fresh
    venv. Both add ``--find-links`` to the wheelhouse (``make dist``, which holds reyn-testing
    beside reyn-core) when the running reyn-core says where it came from."""
    import shlex

    python = shlex.quote(sys.executable)
    house = wheelhouse()
    links = f"--find-links {shlex.quote(str(house))} " if house is not None else ""
    fresh = (
        f"  pip install {links}-e '.[test]'"
        if house is not None
        else "  pip install --find-links DIST -e '.[test]'   # DIST: the wheel folder `make dist` wrote"
    )
    return "\n".join(
        [
            f"created {root}",
            "",
            "next steps:",
            f"  cd {shlex.quote(str(root))}",
            f"  {python} -m pip install {links}-e '.[test]'",
            "      # the plugin (editable) with reyn-testing, pytest and pytest-asyncio, into the",
            "      # environment this reyn runs from (reyn-core and reyn-testing are on no package index)",
            "  pytest                      # the tests load the installed plugin through Reyn's loader",
            f"  reyn plugins list           # {name}: discovered, not enabled",
            "in a fresh venv instead, install reyn-core from the wheelhouse with it:",
            fresh,
            f'then enable it in a profile (reyn.toml):  [plugins] enable = ["{name}"]',
        ]
    )


def wheelhouse() -> Path | None:
    """The folder of Reyn wheels the running reyn-core can be installed from again, or None.

    From reyn-core's PEP 610 record (``direct_url.json``): installed from a wheel file → that
    file's folder; from a checkout (editable or not) → the checkout's ``dist/`` (``make dist``),
    when it holds a reyn-core wheel. Installed by name (``pip install --find-links DIST reyn-core``)
    pip records no location, so None."""
    from importlib import metadata

    from reyn_core.loading.step3_provenance.direct_url import file_url_path, source_of

    try:
        source = source_of(metadata.distribution("reyn-core"))
    except metadata.PackageNotFoundError:
        return None
    path = file_url_path(source.url)
    if path is None:
        return None
    folder = path.parent if source.kind == "wheel" else path / "dist"
    return folder if any(folder.glob("reyn_core-*.whl")) else None


def _files(name: str) -> dict[str, str]:
    values = {"name": name, "dist": distribution_name(name), "tool": f"{name}_greet"}
    return {_fill(path, values): _fill(text, values) for path, text in _TEMPLATES.items()}


def _fill(template: str, values: dict[str, str]) -> str:
    # ``{{key}}`` placeholders: the templates are full of Python/TOML braces, so no str.format.
    return re.sub(r"\{\{(\w+)\}\}", lambda m: values[m.group(1)], template)


_TEMPLATES: dict[str, str] = {
    "pyproject.toml": """\
[build-system]
requires = ["setuptools>=68"]
build-backend = "setuptools.build_meta"

[project]
name = "{{dist}}"
version = "0.1.0"
description = "A Reyn tool plugin."
readme = "README.md"
requires-python = ">=3.10"
dependencies = ["reyn-core>=0.1,<0.2", "pydantic>=2.6"]

[project.optional-dependencies]
# reyn-testing: the reyn pytest kit (fixtures reyn_call, reyn_registry, ...), beside reyn-core.
test = ["reyn-testing>=0.1,<0.2", "pytest>=8", "pytest-asyncio>=0.23"]

# Entry-point name = plugin id; value = the module with the hooks. Installing makes the plugin
# discoverable; a profile must still enable it: [plugins] enable = ["{{name}}"].
[project.entry-points."reyn.plugins"]
{{name}} = "{{name}}.plugin"

[tool.setuptools.packages.find]
where = ["src"]

[tool.pytest.ini_options]
testpaths = ["tests"]
# `async def` tests run as they are (pytest-asyncio, from the test extra).
asyncio_mode = "auto"
asyncio_default_fixture_loop_scope = "function"
""",
    "README.md": """\
# {{dist}}

A Reyn tool plugin with plugin id `{{name}}`.

```sh
pip install -e '.[test]'    # where reyn-core and reyn-testing are installed; else add --find-links DIST
pytest                      # the tests load the installed plugin through Reyn's real loader
reyn plugins list           # shows `{{name}}` as discovered
```

Enable it in a profile (`reyn.toml`):

```toml
[plugins]
enable = ["{{name}}"]

[plugins.{{name}}.settings]
greeting = "Hello"
```

then `reyn tools render --surface router` shows `{{tool}}`. Add tools in `src/{{name}}/plugin.py`:
a typed function decorated with `@tool`, registered in `reyn_register_tools`.
""",
    ".gitignore": "__pycache__/\n*.egg-info/\nbuild/\ndist/\n.venv/\n",
    "src/{{name}}/__init__.py": '"""The {{name}} Reyn plugin."""\n',
    "src/{{name}}/plugin.py": '''\
"""The ``{{name}}`` Reyn plugin: its settings model, its tools and the hooks that register them."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from reyn_core import ToolContext, hookimpl, settings_as, tool

REYN_API = 1


class Settings(BaseModel):
    """``[plugins.{{name}}.settings]`` in a profile. Unknown keys are errors."""

    model_config = ConfigDict(extra="forbid")

    greeting: str = Field("Hello", min_length=1, description="The word {{tool}} greets with.")


class GreetArgs(BaseModel):
    """Arguments of ``{{tool}}``: a pydantic model becomes the tool's JSON Schema."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, max_length=100, description="Who to greet.")


@tool(name="{{tool}}", cluster="{{name}}", purity="read_only")
def greet(args: GreetArgs, ctx: ToolContext) -> str:
    """Greet someone by name."""
    return f"{settings_as(ctx, Settings).greeting}, {args.name}!"


@hookimpl
def reyn_settings_model() -> type[Settings]:
    """The model of ``[plugins.{{name}}.settings]``."""
    return Settings


@hookimpl
def reyn_register_tools(register: Any, settings: Settings) -> None:
    """Register this plugin's tools."""
    register(greet)
''',
    "tests/conftest.py": '''\
import pytest


@pytest.fixture
def reyn_plugin_id() -> str:
    """The plugin under test, for the reyn pytest kit's fixtures (reyn_call, reyn_registry, ...)."""
    return "{{name}}"
''',
    "tests/test_plugin.py": '''\
"""Tests with the reyn pytest kit: the installed plugin is loaded through Reyn's real loader with a
profile that enables only it, and tools are called through the real dispatcher."""

import pytest


def test_the_tool_is_offered_on_both_surfaces(reyn_call):
    assert reyn_call.router_tools() == ["{{tool}}"]
    assert reyn_call.phase_ops(["{{name}}"]) == ["{{tool}}"]


def test_greets_by_name(reyn_call):
    assert reyn_call.router("{{tool}}", {"name": "Ada"}).unwrap() == "Hello, Ada!"


def test_runs_as_a_phase_op(reyn_call):
    assert reyn_call.phase("{{tool}}", {"name": "Ada"}).unwrap() == "Hello, Ada!"


@pytest.mark.reyn_plugin("{{name}}", settings={"greeting": "Hi"})
def test_the_greeting_comes_from_the_settings(reyn_call):
    assert reyn_call.router("{{tool}}", {"name": "Ada"}).unwrap() == "Hi, Ada!"


def test_an_empty_name_is_refused(reyn_call):
    result = reyn_call.router("{{tool}}", {"name": ""})
    assert result.error_kind == "invalid_arguments"
    assert result["error"]["errors"][0]["path"] == "/name"


async def test_async_tests_run_as_they_are(reyn_call):
    # asyncio_mode = "auto" in pyproject.toml: no marker needed. Await the dispatcher directly.
    result = await reyn_call.arouter("{{tool}}", {"name": "Ada"})
    assert result.unwrap() == "Hello, Ada!"
''',
}
