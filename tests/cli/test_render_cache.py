"""The render cache (cli/render_cache.py), through real ``python -m reyn_core tools render`` runs.

A probe plugin installed in a site folder on ``PYTHONPATH`` notes each import of its module in a
file, so a replay (no import) and a fresh load (one import) are told apart by what happened, not by
timing; ``REYN_RENDER_CACHE=trace`` says what the cache did. Every replay must print exactly what
an uncached run prints, and every input a render depends on must make the next run load again.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "plugins"))
from site_plugin import install_site_plugin

PROBE = """\
import os
from pathlib import Path

from reyn_core import ToolRuntimeMissing, hookimpl, tool

REYN_API = 1
with open(os.environ["PROBE_MARK"], "a") as mark:
    mark.write("imported\\n")


def _flag_on(ctx):
    if os.environ.get("PROBE_FLAG") != "on":
        raise ToolRuntimeMissing("PROBE_FLAG is not on")
    return True


def _data(params, ctx):
    params["properties"]["text"]["description"] = Path("data.txt").read_text()
    return params


@tool(cluster="probe", purity="read_only", schema_enricher=_data)
def probe_echo(text: str) -> str:
    \"\"\"{description}\"\"\"
    return text


@tool(cluster="probe", purity="read_only", available=_flag_on)
def probe_flagged() -> str:
    \"\"\"Only there while PROBE_FLAG is on.\"\"\"
    return "on"


@hookimpl
def reyn_register_tools(register, settings):
    register(probe_echo)
    register(probe_flagged)
{hook}
"""
DECLARES = (
    "\n\n@hookimpl\ndef reyn_load_inputs(settings):\n"
    "    return {'env': ['PROBE_FLAG'], 'paths': ['data.txt']}\n"
)
OLD = 1_000_000_000  # a timestamp long past: inputs written by a test are not "just changed"


class World:
    """A working folder with a profile, a site folder with the probe, and the cache outside both."""

    def __init__(self, root: Path) -> None:
        self.root, self.work, self.site = root, root / "work", root / "site"
        self.cache, self.mark = root / "cache", root / "imports.txt"
        self.work.mkdir()
        self.install()
        self.write("data.txt", "what to echo")
        self.write("reyn.toml", '[plugins]\nenable = ["probe"]\n')

    def install(
        self, *, description: str = "Echo the text.", version: str = "1.0", hook: str = DECLARES
    ) -> None:
        install_site_plugin(
            self.site, "probe", PROBE.format(description=description, hook=hook), version=version
        )
        self.settle(self.site)

    def write(self, name: str, text: str) -> None:
        (self.work / name).write_text(text)
        self.settle(self.work)

    def settle(self, folder: Path) -> None:
        """Date a folder and its files in the past, as files not touched for a while are."""
        for path in [folder, *folder.rglob("*")]:
            os.utime(path, ns=(OLD, OLD))

    def env(self, **extra: str) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("REYN_", "PYTHON", "PROBE_"))}
        env.update(
            PYTHONPATH=str(self.site),
            PYTHONDONTWRITEBYTECODE="1",  # no __pycache__ appears in the site folder
            REYN_CACHE_DIR=str(self.cache),
            XDG_CONFIG_HOME=str(self.root / "xdg"),
            REYN_RENDER_CACHE="trace",
            PROBE_MARK=str(self.mark),
        )
        env.update(extra)
        return env

    def render(self, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
        argv = [sys.executable, "-m", "reyn_core", "tools", "render", "--surface", "router", *args]
        return subprocess.run(
            argv, cwd=self.work, env=self.env(**env), capture_output=True, text=True, timeout=180
        )

    def imports(self) -> int:
        return len(self.mark.read_text().splitlines()) if self.mark.exists() else 0

    def entries(self) -> list[Path]:
        return sorted((self.cache / "renders").glob("*.json"))


def traced(proc: subprocess.CompletedProcess[str]) -> tuple[str, str]:
    """(what the cache did, stderr without the trace line)."""
    lines = proc.stderr.splitlines(keepends=True)
    notes = [line for line in lines if line.startswith("reyn: render cache: ")]
    assert len(notes) == 1, proc.stderr
    return notes[0].removeprefix("reyn: render cache: ").strip(), "".join(x for x in lines if x not in notes)


def assert_same_as_uncached(world: World, proc: subprocess.CompletedProcess[str], **env: str) -> None:
    fresh = world.render(**env, REYN_RENDER_CACHE="off")
    assert (proc.returncode, proc.stdout, traced(proc)[1]) == (fresh.returncode, fresh.stdout, fresh.stderr)


@pytest.fixture
def world(tmp_path: Path) -> World:
    return World(tmp_path)


def names(proc: subprocess.CompletedProcess[str]) -> list[str]:
    return [t["function"]["name"] for t in json.loads(proc.stdout)]


def test_a_second_render_replays_the_first_byte_for_byte_without_importing_the_plugin(world):
    first = world.render()
    assert traced(first)[0].startswith("loaded; stored ") and first.returncode == 0
    assert world.imports() == 1 and len(world.entries()) == 1
    second = world.render()
    assert traced(second)[0].startswith("replayed ")
    assert world.imports() == 1
    assert (second.stdout, traced(second)[1]) == (first.stdout, traced(first)[1])
    assert_same_as_uncached(world, second)
    assert names(second) == ["probe_echo"]


def test_the_six_packs_replay_byte_for_byte_and_follow_a_declared_variable(world):
    world.write(
        "reyn.toml",
        '[plugins]\nenable = ["file", "shell", "web", "mcp", "memory", "catalog"]\n\n'
        '[plugins.web.settings.search]\nbackend = "brave"\n',
    )
    assert traced(world.render())[0].startswith("loaded; stored ")
    again = world.render()
    assert traced(again)[0].startswith("replayed ") and "web_search" not in names(again)
    assert_same_as_uncached(world, again)
    keyed = world.render(BRAVE_API_KEY="k3y")
    assert traced(keyed)[0].startswith("loaded; stored ") and "web_search" in names(keyed)
    assert_same_as_uncached(world, keyed, BRAVE_API_KEY="k3y")
    assert "k3y" not in world.entries()[0].read_text()


def test_editing_the_profile_loads_afresh(world):
    world.render()
    world.write("reyn.toml", '[plugins]\nenable = ["probe"]\n\n[surfaces.router]\nexclude = ["probe_echo"]\n')
    after = world.render()
    assert traced(after)[0].startswith("loaded; stored ") and world.imports() == 2
    assert names(after) == []
    assert_same_as_uncached(world, after)


def test_a_changed_plugin_file_changes_its_digest_and_loads_afresh(world):
    world.render()
    world.install(description="Echo the text back, unchanged.")
    after = world.render()
    assert traced(after)[0].startswith("loaded; stored ") and world.imports() == 2
    assert json.loads(after.stdout)[0]["function"]["description"] == "Echo the text back, unchanged."
    assert_same_as_uncached(world, after)


def test_bytes_replaced_under_a_kept_size_and_mtime_still_load_afresh(world):
    # The digest cache trusts (size, mtime_ns), so the loader itself reports the old digest here and
    # imports the new bytes; the cache must not replay the old output: the file's ctime moved.
    world.render()
    module = world.site / "reyn_site_probe.py"
    module.write_text(module.read_text().replace("Echo the text.", "Echo the txet."))
    os.utime(module, ns=(OLD, OLD))  # the folder is untouched: the file was rewritten in place
    after = world.render()
    assert traced(after)[0].startswith("loaded; stored ") and world.imports() == 2
    assert json.loads(after.stdout)[0]["function"]["description"] == "Echo the txet."


def test_a_new_plugin_version_loads_afresh(world):
    world.render()
    world.install(version="2.0")
    assert traced(world.render())[0].startswith("loaded; stored ") and world.imports() == 2


def test_installing_another_plugin_loads_afresh(world):
    world.render()
    install_site_plugin(world.site, "other", "REYN_API = 1\n")
    world.settle(world.site)
    assert traced(world.render())[0].startswith("loaded; stored ")


def test_a_module_shadowing_the_plugin_in_the_working_folder_loads_afresh_and_is_refused(world):
    world.render()
    world.write("reyn_site_probe.py", "raise SystemExit('the shadow ran')\n")
    after = world.render()
    assert traced(after)[0].startswith("loaded; not stored: ") and "RI009" in after.stderr
    assert names(after) == []


def test_a_declared_environment_variable_loads_afresh_when_it_changes(world):
    world.render()
    on = world.render(PROBE_FLAG="on")
    assert traced(on)[0].startswith("loaded; stored ") and names(on) == ["probe_echo", "probe_flagged"]
    assert_same_as_uncached(world, on, PROBE_FLAG="on")
    assert traced(world.render(PROBE_FLAG="on"))[0].startswith("replayed ")
    assert traced(world.render(PROBE_FLAG="off"))[0].startswith("loaded; stored ")


def test_a_reyn_environment_variable_loads_afresh_when_it_changes(world):
    world.write(
        "reyn.toml",
        '[plugins]\nenable = ["probe"]\n\n[profiles.quiet.surfaces.router]\nexclude = ["probe_echo"]\n',
    )
    world.render()
    quiet = world.render(REYN_PROFILE="quiet")
    assert traced(quiet)[0].startswith("loaded; stored ") and names(quiet) == []
    assert_same_as_uncached(world, quiet, REYN_PROFILE="quiet")


def test_a_declared_file_loads_afresh_when_it_changes(world):
    world.render()
    world.write("data.txt", "something else to echo")
    after = world.render()
    assert traced(after)[0].startswith("loaded; stored ")
    assert json.loads(after.stdout)[0]["function"]["parameters"]["properties"]["text"]["description"] == (
        "something else to echo"
    )
    assert_same_as_uncached(world, after)


def test_a_file_changed_less_than_two_seconds_ago_is_not_stored(world):
    (world.work / "data.txt").write_text("just written")
    assert traced(world.render())[0].endswith("data.txt changed less than two seconds ago")
    assert world.entries() == []


def test_a_plugin_that_declares_nothing_is_never_cached(world):
    world.install(hook="")
    for _ in range(2):
        note = traced(world.render())[0]
        assert (
            note
            == "loaded; not stored: plugin(s) probe did not load or declare their inputs (reyn_load_inputs)"
        )
    assert world.imports() == 2 and world.entries() == []


def test_output_written_around_sys_stderr_is_never_cached(world):
    world.install(hook=DECLARES + "\n\nimport sys\nos.write(sys.stderr.fileno(), b'straight to the fd\\n')\n")
    proc = world.render()
    assert "straight to the fd" in proc.stderr
    assert traced(proc)[0] == (
        "loaded; not stored: something wrote to stdout or stderr around sys.stdout / sys.stderr"
    )


def test_an_audit_log_in_the_profile_is_never_cached(world):
    world.write("reyn.toml", '[plugins]\nenable = ["probe"]\n\n[audit]\nlog = "audit.jsonl"\n')
    assert "not stored: the profile has an [audit] log" in traced(world.render())[0]


@pytest.mark.parametrize(
    "damage",
    [
        lambda text: text[: len(text) // 2],
        lambda text: "not json at all",
        lambda text: json.dumps({**json.loads(text), "format": "someone-else-v9"}),
        lambda text: json.dumps({**json.loads(text), "stdout": "[]\n"}),
        lambda text: json.dumps({**json.loads(text), "plugins": [["probe", "reyn-site-gone"]]}),
    ],
    ids=["truncated", "not-json", "foreign", "altered-output", "unknown-plugin"],
)
def test_a_corrupt_or_foreign_entry_is_ignored_and_replaced(world, damage):
    first = world.render()
    (entry,) = world.entries()
    entry.write_text(damage(entry.read_text()))
    again = world.render()
    assert again.returncode == 0 and traced(again)[0].startswith("loaded; stored ")
    assert again.stdout == first.stdout and world.imports() == 2
    assert traced(world.render())[0].startswith("replayed ")


def test_the_key_covers_the_reyn_core_and_python_versions(world):
    code = (
        "import sys, reyn_core\n"
        "from reyn_core.cli.render_inputs import world\n"
        "before = world(['tools', 'render'], None)\n"
        "reyn_core.__version__ = '99.0'\n"
        "newer_core = world(['tools', 'render'], None)\n"
        "reyn_core.__version__ = before['reyn_core']\n"
        "sys.version = '3.99.0 (elsewhere)'\n"
        "print(newer_core != before, world(['tools', 'render'], None) != before)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code],
        cwd=world.work,
        env=world.env(),
        capture_output=True,
        text=True,
        check=True,
    )
    assert proc.stdout.split() == ["True", "True"]


def test_switched_off_nothing_is_read_or_written(world):
    for _ in range(2):
        proc = world.render(REYN_RENDER_CACHE="off")
        assert proc.returncode == 0 and "render cache" not in proc.stderr
    world.render("--no-cache")
    assert world.imports() == 3 and world.entries() == []


def test_the_cache_lives_under_xdg_cache_home_without_reyn_cache_dir(world, tmp_path):
    env = world.env(XDG_CACHE_HOME=str(tmp_path / "xdg-cache"))
    del env["REYN_CACHE_DIR"]
    argv = [sys.executable, "-m", "reyn_core", "tools", "render", "--surface", "router"]
    subprocess.run(argv, cwd=world.work, env=env, capture_output=True, text=True, timeout=180, check=True)
    assert len(list((tmp_path / "xdg-cache" / "reyn" / "renders").glob("*.json"))) == 1
