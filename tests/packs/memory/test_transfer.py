"""``reyn memory export`` / ``import``: Markdown files with front matter, one per entry — on every
backend (the ``target`` fixtures), and from one backend to the other."""

from __future__ import annotations

import inspect
import json
import os

import pytest
from reyn_tools_memory.cli import memory_command
from reyn_tools_memory.plugin import reyn_cli_commands, run_memory_command

from reyn_core.cli import main


def fill(store):
    store.put(
        "shared",
        "",
        "release",
        name="Release checklist",
        description='Steps: "tag", then push',
        type="project",
        body="1. tag\n2. push\n---\nnot front matter\r\nkept as is",
    )
    store.put("agent", "ann", "style", name="Style", description="ann's style", type="feedback", body="short")
    store.put("agent", "../evil", "x", name="X", description="d", type="user", body="")
    return store


@pytest.fixture
def filled(target):
    fill(target.store)
    return target


def test_the_plugin_contributes_the_memory_command_taking_argv_and_the_load():
    assert reyn_cli_commands() == {"memory": run_memory_command}
    assert list(inspect.signature(run_memory_command).parameters) == ["argv", "loaded"]


def test_export_writes_one_readable_file_per_entry(filled, tmp_path, capsys):
    out = tmp_path / "export"
    assert memory_command([*filled.cli, "export", str(out)], None) == 0
    files = sorted(p.relative_to(out).as_posix() for p in out.rglob("*.md"))
    assert files == ["agents/%2E.%2Fevil/x.md", "agents/ann/style.md", "shared/release.md"]
    text = (out / "shared" / "release.md").read_text()
    assert text.startswith('---\nslug: "release"\nname: "Release checklist"\n')
    assert 'description: "Steps: \\"tag\\", then push"' in text
    assert "exported 3 entries" in capsys.readouterr().out


def test_export_then_import_reproduces_every_entry_exactly(filled, target_factory, tmp_path):
    out = tmp_path / "export"
    assert memory_command([*filled.cli, "export", str(out)], None) == 0
    copy = target_factory()
    assert memory_command([*copy.cli, "import", str(out)], None) == 0
    assert copy.store.all_entries() == filled.store.all_entries()


def test_importing_twice_updates_instead_of_duplicating(filled, tmp_path, capsys):
    out = tmp_path / "export"
    memory_command([*filled.cli, "export", str(out)], None)
    assert memory_command([*filled.cli, "--json", "import", str(out)], None) == 0
    assert json.loads(capsys.readouterr().out.splitlines()[-1]) == {"imported": 3, "created": 0, "updated": 3}
    assert len(filled.store.all_entries()) == 3


def test_an_import_that_overflows_a_layer_writes_nothing(target_factory, tmp_path):
    from reyn_tools_memory import MemoryStoreError
    from reyn_tools_memory.transfer import import_folder

    folder = tmp_path / "in"
    folder.mkdir()
    for slug in ("a", "b", "c"):
        (folder / f"{slug}.md").write_text(
            f"---\nslug: {slug}\nname: n\ndescription: d\ntype: user\nlayer: shared\n---\n"
        )
    small = target_factory(max_entries_per_layer=2)
    store = small.store
    store.put("shared", "", "kept", name="n", description="d", type="user", body="b")
    with pytest.raises(MemoryStoreError, match="already holds 2 entries, the limit"):
        import_folder(store, folder, small.settings)
    assert [e.slug for e in store.all_entries()] == ["kept"]


def test_hand_written_files_with_plain_values_import(target, tmp_path):
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "tea.md").write_text(
        "---\n# a comment\nslug: tea\nname: Tea preference\ndescription: how ann likes tea\n"
        "type: user\nlayer: agent\nagent: ann\n---\nGreen, no sugar.\n"
    )
    assert memory_command([*target.cli, "import", str(folder)], None) == 0
    e = target.store.get("agent", "ann", "tea")
    assert e is not None and e.body == "Green, no sugar.\n" and e.created == e.updated


BROKEN = {
    "no front matter": ("just text\n", ":1: the file must start with a front-matter block"),
    "unclosed": ("---\nslug: a\n", "is not closed by a line '---'"),
    "unknown key": ("---\nslgu: a\n---\n", ":2: unknown key 'slgu'"),
    "duplicate key": ("---\nslug: a\nslug: b\n---\n", ":3: key 'slug' appears twice"),
    "not key value": ("---\nslug a\n---\n", ":2: expected 'key: value'"),
    "bad quote": ('---\nslug: "a\n---\n', ":2: malformed quoted value"),
    "yaml list": ("---\nslug: [a, b]\n---\n", ":2: unsupported value syntax"),
    "missing keys": ("---\nslug: a\n---\n", "missing front-matter keys: name, description, type, layer"),
    "hostile slug": (
        "---\nslug: ../x\nname: n\ndescription: d\ntype: user\nlayer: shared\n---\n",
        "looks like a path",
    ),
    "bad type": (
        "---\nslug: a\nname: n\ndescription: d\ntype: secret\nlayer: shared\n---\n",
        "type 'secret' is not one of",
    ),
    "agent without name": (
        "---\nslug: a\nname: n\ndescription: d\ntype: user\nlayer: agent\n---\n",
        "needs a valid 'agent'",
    ),
    "shared with agent": (
        "---\nslug: a\nname: n\ndescription: d\ntype: user\nlayer: shared\nagent: x\n---\n",
        "must not name an agent",
    ),
    "NUL in the body": (
        "---\nslug: a\nname: n\ndescription: d\ntype: user\nlayer: shared\n---\nab\x00c",
        "the body contains a NUL character at position 2",
    ),
    "bad timestamp": (
        "---\nslug: a\nname: n\ndescription: d\ntype: user\nlayer: shared\ncreated: yesterday\n---\n",
        "created 'yesterday' is not an ISO 8601 timestamp",
    ),
}


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_an_invalid_file_is_reported_and_nothing_is_imported(target, tmp_path, capsys, name):
    text, message = BROKEN[name]
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "good.md").write_text(
        "---\nslug: good\nname: n\ndescription: d\ntype: user\nlayer: shared\n---\nok"
    )
    (folder / "bad.md").write_text(text)
    assert memory_command([*target.cli, "import", str(folder)], None) == 1
    err = capsys.readouterr().err
    assert f"{folder / 'bad.md'}" in err and message in err
    assert "nothing was imported" in err
    assert target.store.all_entries() == []


def test_an_oversized_body_in_a_file_is_refused(tmp_path, capsys):
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "big.md").write_text(
        "---\nslug: big\nname: n\ndescription: d\ntype: user\nlayer: shared\n---\n" + "x" * (64 * 1024 + 1)
    )
    assert memory_command(["--db", str(tmp_path / "m.db"), "import", str(folder)], None) == 1
    assert "over the limit of 65,536 bytes" in capsys.readouterr().err


def test_the_same_entry_in_two_files_is_refused(tmp_path, capsys):
    folder = tmp_path / "in"
    (folder / "x").mkdir(parents=True)
    text = "---\nslug: a\nname: n\ndescription: d\ntype: user\nlayer: shared\n---\n"
    (folder / "a.md").write_text(text)
    (folder / "x" / "a.md").write_text(text)
    assert memory_command(["--db", str(tmp_path / "m.db"), "import", str(folder)], None) == 1
    assert "the same entry as" in capsys.readouterr().err


def test_check_validates_without_writing(target, tmp_path, capsys):
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "a.md").write_text("---\nslug: a\nname: n\ndescription: d\ntype: user\nlayer: shared\n---\n")
    assert memory_command([*target.cli, "import", "--check", str(folder)], None) == 0
    assert "1 entries in" in capsys.readouterr().out
    assert not target.store.exists()


@pytest.mark.parametrize(
    "argv,code,message",
    [
        (["export"], 2, "the following arguments are required: dir"),
        (["frobnicate", "x"], 2, "invalid choice: 'frobnicate'"),
        (["import", "/definitely/not/here"], 2, "is not a folder"),
    ],
)
def test_usage_errors_exit_2_with_one_line(tmp_path, capsys, monkeypatch, argv, code, message):
    # As a user runs it: `reyn memory ...` (argparse's errors are reyn's to report, as a built-in's are).
    (tmp_path / "reyn.toml").write_text('[plugins]\nenable = ["memory"]\n')
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("REYN_CACHE_DIR", str(tmp_path / "cache"))
    for key in ("REYN_PROFILE_FILE", "REYN_PROFILE"):
        monkeypatch.delenv(key, raising=False)
    assert main(["memory", "--db", str(tmp_path / "m.db"), *argv]) == code
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_exporting_a_missing_store_says_so(target, tmp_path, capsys):
    assert memory_command([*target.cli, "export", str(tmp_path / "out")], None) == 2
    err = capsys.readouterr().err
    assert f"no memory store at {target.store.location}" in err
    assert "pw-" not in err  # the test server's password never appears


def test_db_and_postgres_together_are_refused(tmp_path, capsys):
    assert memory_command(["--db", "x.db", "--postgres", "SOME_ENV", "export", str(tmp_path)], None) == 2
    assert "give one" in capsys.readouterr().err


def _texts(**kw):
    from hypothesis import strategies as st

    # Every character a store can hold: no lone surrogates, no NUL (refused on every backend).
    return st.text(st.characters(exclude_categories=("Cs",), exclude_characters="\x00"), **kw)


def _entries():
    from hypothesis import strategies as st

    return st.fixed_dictionaries(
        {
            "slug": st.from_regex(r"\A[a-z0-9](?:[a-z0-9_-]{0,10}[a-z0-9])?\Z").filter(
                lambda s: s not in ("con", "nul")
            ),
            "name": _texts(min_size=1, max_size=40),
            "description": _texts(max_size=60),
            "type": st.sampled_from(["user", "feedback", "project", "reference"]),
            "body": _texts(max_size=200),
            "agent": st.one_of(
                st.none(),
                _texts(min_size=1, max_size=12).filter(
                    lambda a: a.strip() and not any(ord(c) < 32 or c == "\x7f" for c in a)
                ),
            ),
        }
    )


def _put(store, e):
    layer = "agent" if e["agent"] is not None else "shared"
    kw = {k: e[k] for k in ("name", "description", "type", "body")}
    store.put(layer, e["agent"] or "", e["slug"], **kw)


def test_any_entry_survives_export_and_import_exactly(target_factory, tmp_path_factory):
    from hypothesis import HealthCheck, given, settings

    @settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(_entries())
    def roundtrip(e):
        root = tmp_path_factory.mktemp("rt")
        source, copy = target_factory(), target_factory()
        _put(source.store, e)
        assert memory_command([*source.cli, "export", str(root / "out")], None) == 0
        assert memory_command([*copy.cli, "import", str(root / "out")], None) == 0
        assert copy.store.all_entries() == source.store.all_entries()

    roundtrip()


def test_a_store_moves_from_sqlite_to_postgres_and_back_exactly(pg_server, tmp_path_factory, monkeypatch):
    """``reyn memory --db FILE export DIR`` then ``reyn memory --postgres ENV import DIR`` (and back):
    every entry, its timestamps and the order of the store survive both moves."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st
    from reyn_tools_memory import MemoryStore, PostgresStore

    @settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(st.lists(_entries(), min_size=1, max_size=8))
    def move(batch):
        root = tmp_path_factory.mktemp("move")
        sqlite = MemoryStore(root / "source.db")
        for e in batch:
            _put(sqlite, e)
        monkeypatch.setenv("REYN_TEST_MOVE_DSN", pg_server.dsn(schema=pg_server.new_schema("move")))
        assert memory_command(["--db", str(sqlite.path), "export", str(root / "out")], None) == 0
        assert memory_command(["--postgres", "REYN_TEST_MOVE_DSN", "import", str(root / "out")], None) == 0
        pg = PostgresStore(os.environ["REYN_TEST_MOVE_DSN"])
        try:
            assert pg.all_entries() == sqlite.all_entries()
            assert (
                memory_command(["--postgres", "REYN_TEST_MOVE_DSN", "export", str(root / "back")], None) == 0
            )
        finally:
            pg.close()
        assert memory_command(["--db", str(root / "back.db"), "import", str(root / "back")], None) == 0
        assert MemoryStore(root / "back.db").all_entries() == sqlite.all_entries()

    move()
