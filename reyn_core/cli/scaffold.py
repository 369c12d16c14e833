"""``scaffold_plugin``: a new, working Reyn plugin project (``reyn plugins new NAME``).

The project passes its own tests right after ``pip install -e '.[test]'`` (into an environment
that has reyn-core, or with ``--find-links`` to the wheelhouse): a ``pyproject.toml`` with
the ``reyn.plugins`` entry point, a ``src/`` package with one sample tool and a settings model, and
tests written with the reyn pytest kit (the reyn-testing distribution, in the test extra;
``pytest-asyncio`` in auto mode, so ``async def`` tests run as they are).
"""

from __future__ import annotations

import importlib.util
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
    found = importlib.util.find_spec(name)  # whatever this environment imports under that name
    if found is not None:
        where = found.origin or ", ".join(found.submodule_search_locations or ()) or "built in"
        raise ScaffoldError(
            f"plugin name {name!r} is already importable here ({where}): the plugin's package would "
            "shadow it or be shadowed by it; pick another"
        )
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
    """The project's files, relative path → text: the ``plugin_template`` folder shipped beside this
    module (package data), each ``NAME.tmpl`` written as ``NAME`` (``dot_NAME`` as ``.NAME``) with its
    ``{{key}}`` placeholders filled in, in its path too (``src/{{name}}/plugin.py``)."""
    from importlib.resources import files

    values = {"name": name, "dist": distribution_name(name), "tool": f"{name}_greet"}
    out: dict[str, str] = {}
    pending = [(files("reyn_core.cli") / "plugin_template", "")]
    while pending:
        folder, prefix = pending.pop()
        for entry in folder.iterdir():
            if entry.is_dir():
                pending.append((entry, f"{prefix}{entry.name}/"))
            elif entry.name.endswith(_SUFFIX):
                relative = prefix + re.sub(r"^dot_", ".", entry.name.removesuffix(_SUFFIX))
                out[_fill(relative, values)] = _fill(entry.read_text(encoding="utf-8"), values)
    return out


_SUFFIX = ".tmpl"  # not ``.py``: the templates are not modules of reyn_core (nor linted or imported as such)


def _fill(template: str, values: dict[str, str]) -> str:
    # ``{{key}}`` placeholders: the templates are full of Python/TOML braces, so no str.format.
    return re.sub(r"\{\{(\w+)\}\}", lambda m: values[m.group(1)], template)
