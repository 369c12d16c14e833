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
import time
from pathlib import Path

import pytest

from reyn_core.cli.render_inputs import RACY_NS

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
    """A working folder with a profile, a site folder with the probe, and the cache outside both.

    A declared file's ctime, which nothing can date back, must predate a run by two seconds for the
    run to be stored, so the first render waits until the world's files are that old (``age``)."""

    def __init__(self, root: Path) -> None:
        self.root, self.work, self.site = root, root / "work", root / "site"
        self.cache, self.mark = root / "cache", root / "imports.txt"
        self.work.mkdir()
        self.install()
        self.write("data.txt", "what to echo")
        self.write("reyn.toml", '[plugins]\nenable = ["probe"]\n')
        self.aged_at = time.time_ns() + RACY_NS + 50_000_000

    def age(self) -> None:
        """Wait until what was written so far may be stored (its ctime two seconds old)."""
        self.aged_at = time.time_ns() + RACY_NS + 50_000_000
        self.wait()

    def wait(self) -> None:
        left = self.aged_at - time.time_ns()
        if left > 0:
            time.sleep(left / 1e9)

    def install(
        self, *, description: str = "Echo the text.", version: str = "1.0", hook: str = DECLARES
    ) -> None:
        install_site_plugin(
            self.site, "probe", PROBE.format(description=description, hook=hook), version=version
        )
        self.settle(self.site)

    def write(self, name: str, text: str) -> None:
        """Write a file in the working folder and date it in the past, and the folder when the file
        is new (only then did the folder change)."""
        path = self.work / name
        new = not path.exists()
        path.write_text(text)
        for changed in (path, self.work) if new else (path,):
            os.utime(changed, ns=(OLD, OLD))

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
        self.wait()
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


def assert_same_as_uncached(
    world: World, proc: subprocess.CompletedProcess[str], *args: str, **env: str
) -> None:
    fresh = world.render(*args, **env, REYN_RENDER_CACHE="off")
    assert (proc.returncode, proc.stdout, traced(proc)[1]) == (fresh.returncode, fresh.stdout, fresh.stderr)


@pytest.fixture(scope="module")
def worlds(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> list[World]:
    """A world for each test of this module that asks for one, all made at once so that they age
    together: the first render waits two seconds, not every test's."""
    wanted = [i for i in request.session.items if i.module is request.module and "world" in i.fixturenames]
    return [World(tmp_path_factory.mktemp("world")) for _ in wanted]


@pytest.fixture
def world(worlds: list[World], tmp_path_factory: pytest.TempPathFactory) -> World:
    return worlds.pop() if worlds else World(tmp_path_factory.mktemp("world"))


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
    # The digest cache trusts (size, mtime_ns), so the loader itself reports the old digest here; the
    # render cache must not replay the old output (the file's ctime moved), and the new bytes are not
    # run either: the import hashes what it compiles and refuses bytes the digest did not cover
    # (issue 21), so the load is fresh, the plugin fails and nothing is stored.
    world.render()
    module = world.site / "reyn_site_probe.py"
    module.write_text(module.read_text().replace("Echo the text.", "Echo the txet."))
    os.utime(module, ns=(OLD, OLD))  # the folder is untouched: the file was rewritten in place
    after = world.render()
    assert traced(after)[0].startswith("loaded; not stored") and world.imports() == 1
    assert "(RI001)" in after.stderr and json.loads(after.stdout) == []


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
    assert traced(after)[0].startswith("loaded; ") and world.imports() == 2
    assert json.loads(after.stdout)[0]["function"]["parameters"]["properties"]["text"]["description"] == (
        "something else to echo"
    )
    assert_same_as_uncached(world, after)


def test_a_file_changed_less_than_two_seconds_ago_is_not_stored(world):
    (world.work / "data.txt").write_text("just written")
    assert traced(world.render())[0].endswith(
        "data.txt changed while the render ran or less than two seconds before"
    )
    assert world.entries() == []


def test_a_file_copied_in_with_an_old_mtime_just_now_is_not_stored(world):
    world.write("data.txt", "copied in with its mtime kept (cp -p, rsync -t, an archive)")
    assert traced(world.render())[0].endswith(
        "data.txt changed while the render ran or less than two seconds before"
    )
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


@pytest.mark.parametrize(
    "around",
    [
        "os.write(sys.stderr.fileno(), b'straight to the fd\\n')",
        "sys.__stderr__.write('straight to the fd\\n')",
    ],
    ids=["its-file-descriptor", "sys.__stderr__"],
)
def test_output_written_around_sys_stderr_is_never_cached(world, around):
    world.install(hook=DECLARES + f"\n\nimport sys\n{around}\n")
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
        lambda text: json.dumps({**json.loads(text), "writes": [[0, "[]\n"]]}),
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


WRITES_WHILE_RENDERING = PROBE.replace(
    '    params["properties"]["text"]["description"] = Path("data.txt").read_text()\n',
    '    params["properties"]["text"]["description"] = Path("data.txt").read_text()\n'
    '    if os.environ.get("PROBE_WRITE") == "removed":  # another process removes the file just read\n'
    '        os.remove("data.txt")\n'
    '    elif os.environ.get("PROBE_WRITE"):  # another process writes the file the render just read\n'
    '        Path("data.txt").write_text("written while the render ran")\n'
    '        if os.environ["PROBE_WRITE"] == "mtime-kept":\n'
    '            os.utime("data.txt", ns=(1_000_000_000, 1_000_000_000))\n'
    "        else:  # a render that takes more than two seconds after the write\n"
    "            import time\n"
    "            time.sleep(2.2)\n",
)


@pytest.mark.parametrize("how", ["mtime-kept", "slow-render"])
def test_a_declared_file_changed_while_the_render_ran_is_not_stored(world, how):
    # The declared paths are stat-ed after the run: the output of the old bytes must not be stored
    # under the new file's stat, however long the render took and whatever mtime the new file has.
    install_site_plugin(
        world.site, "probe", WRITES_WHILE_RENDERING.format(description="Echo.", hook=DECLARES)
    )
    world.settle(world.site)
    first = world.render(PROBE_WRITE=how)
    assert traced(first)[0].endswith("data.txt changed while the render ran or less than two seconds before")
    after = world.render()
    assert traced(after)[0].startswith("loaded; ") and world.imports() == 2
    assert json.loads(after.stdout)[0]["function"]["parameters"]["properties"]["text"]["description"] == (
        "written while the render ran"
    )


def test_a_declared_file_removed_while_the_render_ran_is_not_stored(world):
    # An absent path has no ctime: the folder it was removed from has. (The file is in a folder of
    # its own: the working folder is on the import path of `python -m`, compared before and after.)
    (world.work / "sub").mkdir()
    (world.work / "data.txt").rename(world.work / "sub" / "data.txt")
    world.settle(world.work)
    source = WRITES_WHILE_RENDERING.format(description="Echo.", hook=DECLARES).replace(
        "data.txt", "sub/data.txt"
    )
    install_site_plugin(world.site, "probe", source)
    world.settle(world.site)
    first = world.render(PROBE_WRITE="removed")
    assert traced(first)[0].endswith("sub changed while the render ran or less than two seconds before")
    after = world.render()
    assert traced(after)[0].startswith("loaded; ") and world.imports() == 2
    assert_same_as_uncached(world, after)


@pytest.mark.parametrize(
    "given",
    [
        ["--profile-file", "../conf/a.toml", "--profile-file", "../conf/b.toml"],
        ["--profile-f", "../conf/b.toml"],
    ],
    ids=["repeated", "abbreviated"],
)
def test_a_profile_file_argparse_reads_otherwise_than_the_key_is_never_stored(world, given):
    # argparse takes the last --profile-file and expands abbreviations; the key's fast reading of the
    # command line takes the first and knows no abbreviation, so it hashed another file's bytes.
    conf = world.root / "conf"
    conf.mkdir()
    for name in ("a.toml", "b.toml"):
        (conf / name).write_text('[plugins]\nenable = ["probe"]\n')
    first = world.render(*given)
    assert names(first) == ["probe_echo"]
    assert "not stored: the load read the profile " in traced(first)[0] and world.entries() == []
    (conf / "b.toml").write_text(
        '[plugins]\nenable = ["probe"]\n\n[surfaces.router]\nexclude = ["probe_echo"]\n'
    )
    after = world.render(*given)
    assert names(after) == [] and world.imports() == 2
    assert_same_as_uncached(world, after, *given)


def test_a_profile_reached_through_a_swapped_link_loads_afresh(world):
    # Same path, same bytes, but its lock resolves against the folder the link now points to, whose
    # missing lock refuses the plugin ([lock] enforce).
    text = '[plugins]\nenable = ["probe"]\n\n[lock]\nenforce = true\n'
    for folder in ("a", "b"):
        (world.root / folder).mkdir()
        (world.root / folder / "reyn.toml").write_text(text)
    conf = world.root / "conf"
    conf.symlink_to(world.root / "a")
    given = ("--profile-file", "../conf/reyn.toml")
    lock = [sys.executable, "-m", "reyn_core", "plugins", "lock", *given]
    subprocess.run(lock, cwd=world.work, env=world.env(), capture_output=True, timeout=180, check=True)
    world.age()
    first = world.render(*given)
    assert traced(first)[0].startswith("loaded; stored ") and names(first) == ["probe_echo"]
    conf.unlink()
    conf.symlink_to(world.root / "b")
    after = world.render(*given)
    assert names(after) == [] and "RL003" in after.stderr and world.imports() == 2
    assert_same_as_uncached(world, after, *given)


def test_an_abbreviated_no_cache_turns_the_cache_off(world):
    for _ in range(2):
        proc = world.render("--no-cach")
        assert proc.returncode == 0 and "render cache" not in proc.stderr
    assert world.imports() == 2 and world.entries() == []


FORGE = """\
import json, sys
from pathlib import Path
from reyn_core.cli import render_cache
from reyn_core.cli.render_inputs import world

entry = Path(sys.argv[1])
data = json.loads(entry.read_text())
current = render_cache._current(world(sys.argv[2:], None), data["plugins"], data["env"], data["paths"])
data["writes"] = [[0, '[{"type": "function", "function": {"name": "forged"}}]\\n']]
data["digest"] = render_cache._digest(data["salt"], current, data["writes"])
entry.write_text(json.dumps(data))
"""


def _another_user(entry: Path) -> None:
    os.chown(entry, 54321, 54321)


def _writable_by_others(entry: Path) -> None:
    entry.chmod(0o666)


def _a_link(entry: Path) -> None:
    elsewhere = entry.parent.parent / "planted.json"
    entry.rename(elsewhere)
    entry.symlink_to(elsewhere)


@pytest.mark.parametrize("plant", [_another_user, _writable_by_others, _a_link], ids=lambda f: f.__name__[1:])
def test_an_entry_someone_else_could_have_written_is_not_replayed(world, plant):
    # The digest is no signature: anyone who can write the entry and read the inputs can recompute
    # it for any output (here with the cache's own functions). Only a private entry is replayed.
    if plant is _another_user and os.geteuid() != 0:
        pytest.skip("giving a file to another user needs root")
    world.render()
    (entry,) = world.entries()
    argv = ["tools", "render", "--surface", "router"]
    forge = [sys.executable, "-c", FORGE, str(entry), *argv]
    subprocess.run(forge, cwd=world.work, env=world.env(), capture_output=True, timeout=180, check=True)
    plant(entry)
    after = world.render()
    assert "forged" not in after.stdout and names(after) == ["probe_echo"] and world.imports() == 2
    why = {
        "another_user": "is owned by uid 54321",
        "writable_by_others": "is writable by group and others",
        "a_link": "is a symbolic link",
    }
    assert f"(not replayed: {entry} {why[plant.__name__[1:]]}" in traced(after)[0]


def test_a_forged_entry_this_user_wrote_is_what_a_private_entry_means(world):
    # The counterpart of the test above: the same forgery, left private, is replayed — the check is
    # who could write the entry, nothing else.
    world.render()
    (entry,) = world.entries()
    forge = [sys.executable, "-c", FORGE, str(entry), "tools", "render", "--surface", "router"]
    subprocess.run(forge, cwd=world.work, env=world.env(), capture_output=True, timeout=180, check=True)
    assert names(world.render()) == ["forged"] and world.imports() == 1


def test_a_memory_store_changed_only_in_its_write_ahead_log_loads_afresh(world):
    # While another process has the store open, a commit (here a schema from a newer pack) lands in
    # memory.db-wal and leaves memory.db as it was.
    import sqlite3

    world.write("reyn.toml", '[plugins]\nenable = ["memory"]\n')
    (world.work / ".reyn").mkdir()
    db = world.work / ".reyn" / "memory.db"
    with sqlite3.connect(db) as conn:
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA user_version = 1")
    conn.close()
    world.settle(world.work)
    world.render()  # its read-only look at the store creates memory.db-wal, so this run is not stored
    world.age()
    note = traced(world.render())[0]
    if os.geteuid() == 0:
        # SQLite running as root gives the log to the store's owner on every open (fchown), which
        # moves the log's ctime while the render runs: such a render is never stored.
        assert note.endswith("memory.db-wal changed while the render ran or less than two seconds before")
    else:
        assert note.startswith("loaded; stored ")
    writer = sqlite3.connect(db)
    try:
        writer.execute("PRAGMA user_version = 999")
        writer.commit()
        after = world.render()
        assert traced(after)[0].startswith("loaded; ") and "RY003" in after.stderr
        assert_same_as_uncached(world, after)
    finally:
        writer.close()


def _render_on_a_terminal(world: World) -> str:
    """A render whose stderr is a terminal (a pseudo-terminal); what that terminal showed."""
    import pty

    leader, follower = pty.openpty()
    argv = [sys.executable, "-m", "reyn_core", "tools", "render", "--surface", "router"]
    world.wait()
    try:
        subprocess.run(
            argv,
            cwd=world.work,
            env=world.env(),
            stdout=subprocess.PIPE,
            stderr=follower,
            timeout=180,
            check=True,
        )
    finally:
        os.close(follower)
    shown = b""
    try:
        while chunk := os.read(leader, 65536):
            shown += chunk
    except OSError:  # the terminal is gone once everything was read
        pass
    finally:
        os.close(leader)
    return shown.decode()


def test_output_for_a_terminal_is_not_replayed_into_a_pipe(world):
    world.install(
        hook=DECLARES
        + "\n\nimport sys\nsys.stderr.write('to a terminal\\n' if sys.stderr.isatty() else 'to a pipe\\n')\n"
    )
    shown = _render_on_a_terminal(world)
    assert "to a terminal" in shown and "loaded; stored " in shown
    piped = world.render()
    assert "to a pipe" in piped.stderr and world.imports() == 2
    assert_same_as_uncached(world, piped)
    # Each keeps its entry: the terminal's render is replayed, not overwritten by the pipe's.
    again = _render_on_a_terminal(world)
    assert "to a terminal" in again and "replayed " in again
    assert world.imports() == 3  # the terminal's load, the pipe's, and the uncached run


def test_stdout_and_stderr_merged_into_one_file_replay_in_the_order_they_were_written(world):
    # A load error's warning goes to stderr before the tools go to stdout: `2>&1` keeps that order.
    world.write("reyn.toml", '[plugins]\nenable = ["probe"]\n\n[surfaces.router]\nexclude = ["nope"]\n')
    argv = [sys.executable, "-m", "reyn_core", "tools", "render", "--surface", "router"]
    merged = []
    for _ in range(2):
        world.wait()
        proc = subprocess.run(
            argv,
            cwd=world.work,
            env=world.env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            timeout=180,
        )
        lines = proc.stdout.decode().splitlines(keepends=True)
        merged.append("".join(line for line in lines if not line.startswith("reyn: render cache: ")))
    assert merged[0].startswith("reyn: warning: 1 load error(s) (RC007)") and world.imports() == 1
    assert merged[1] == merged[0]
