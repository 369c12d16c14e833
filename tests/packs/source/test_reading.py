"""``reyn_src_list`` / ``reyn_src_read``: only the recorded files of reyn-core and the enabled
plugins, looked up by name, re-hashed on every read, bounded in size."""

from __future__ import annotations

import hashlib

from reyn_tools_source import SourceSettings

from .conftest import INFO, PLUGIN_DIST, PLUGIN_MODULE, World


def test_the_list_names_reyn_core_and_the_enabled_plugins_only(world: World) -> None:
    reg = world.registry()
    data = world.call(reg, "reyn_src_list", {})["data"]
    names = [d["distribution"] for d in data["distributions"]]
    assert names == ["reyn-core", PLUGIN_DIST, "reyn-tools-source"]
    demo = data["distributions"][1]
    assert demo["plugins"] == ["demo"] and demo["record"] == "RECORD" and "refused_files" not in demo
    # pydantic is installed and imported, but no enabled plugin's distribution: not readable
    env = world.call(reg, "reyn_src_list", {"distribution": "pydantic"})
    assert env["error"]["kind"] == "invalid_arguments"
    assert "not readable here" in env["error"]["message"] and "reyn-core" in env["error"]["message"]


def test_without_the_registry_only_reyn_core_is_listed_and_the_list_says_why(world: World) -> None:
    reg = world.registry()
    data = world.call(reg, "reyn_src_list", {}, ctx=world.ctx(None))["data"]
    assert [d["distribution"] for d in data["distributions"]] == ["reyn-core"]
    assert "extras={'registry': registry}" in data["note"]


def test_a_distribution_lists_exactly_its_recorded_files(world: World) -> None:
    reg = world.registry()
    data = world.call(reg, "reyn_src_list", {"distribution": "Demo_Src.Plugin"})["data"]  # PEP 503 spelling
    paths = [f["path"] for f in data["files"]]
    assert paths == [
        f"{INFO}/METADATA",
        f"{INFO}/entry_points.txt",
        f"{PLUGIN_MODULE}/__init__.py",
        f"{PLUGIN_MODULE}/notes.txt",
        f"{PLUGIN_MODULE}/plugin.py",
    ]
    narrowed = world.call(reg, "reyn_src_list", {"distribution": PLUGIN_DIST, "prefix": f"{PLUGIN_MODULE}/n"})
    assert [f["path"] for f in narrowed["data"]["files"]] == [f"{PLUGIN_MODULE}/notes.txt"]


def test_the_list_is_bounded_and_says_how_to_narrow_it(world: World) -> None:
    reg = world.registry(SourceSettings(max_list_entries=10))
    data = world.call(reg, "reyn_src_list", {"distribution": "reyn-core"})["data"]
    assert len(data["files"]) == 10 and data["count"] > 10
    assert "longer prefix" in data["truncated"]


def test_a_recorded_file_is_served_with_its_hash(world: World) -> None:
    reg = world.registry()
    data = world.call(
        reg, "reyn_src_read", {"distribution": PLUGIN_DIST, "path": f"{PLUGIN_MODULE}/notes.txt"}
    )["data"]
    assert data["served"] is True and data["text"] == "first\nsecond\n"
    assert data["sha256"] == hashlib.sha256(b"first\nsecond\n").hexdigest()
    assert data["lines"] == "1-2 of 2" and "next_line" not in data


def test_reyn_core_itself_is_readable(world: World) -> None:
    reg = world.registry()
    data = world.call(reg, "reyn_src_read", {"distribution": "reyn-core", "path": "reyn_core/gates.py"})[
        "data"
    ]
    assert data["served"] is True and "def check(" in data["text"]


def test_a_long_file_comes_in_windows_of_whole_lines(world: World) -> None:
    reg = world.registry(SourceSettings(max_read_chars=1000))
    path = f"{PLUGIN_MODULE}/plugin.py"
    first = world.call(reg, "reyn_src_read", {"distribution": PLUGIN_DIST, "path": path})["data"]
    assert len(first["text"]) <= 1000 and first["text"].endswith("\n")
    assert first["next_line"] > 1 and "start_line=" in first["truncated"]
    second = world.call(
        reg, "reyn_src_read", {"distribution": PLUGIN_DIST, "path": path, "start_line": first["next_line"]}
    )["data"]
    assert second["text"].startswith(f"LINE_{first['next_line']} = ")


def test_a_single_line_longer_than_the_window_is_cut_and_says_so(bare_world: World) -> None:
    bare_world.install({"__init__.py": "", "plugin.py": "x = '" + "a" * 5000 + "'\n"})
    reg = bare_world.registry(SourceSettings(max_read_chars=1000))
    data = bare_world.call(
        reg, "reyn_src_read", {"distribution": PLUGIN_DIST, "path": f"{PLUGIN_MODULE}/plugin.py"}
    )
    assert data["data"]["served"] is True and len(data["data"]["text"]) == 1000
    assert "cut" in data["data"]["truncated"]


def test_a_file_over_the_size_limit_is_refused_with_the_limit(bare_world: World) -> None:
    bare_world.install({"__init__.py": "", "plugin.py": "", "big.py": "# " + "b" * (70 * 1024) + "\n"})
    reg = bare_world.registry(SourceSettings(max_file_bytes=64 * 1024))
    big = bare_world.call(
        reg, "reyn_src_read", {"distribution": PLUGIN_DIST, "path": f"{PLUGIN_MODULE}/big.py"}
    )
    assert big["data"]["served"] is False
    assert "over the limit of 65,536" in big["data"]["reason"] and "max_file_bytes" in big["data"]["reason"]
    small = bare_world.call(
        reg, "reyn_src_read", {"distribution": PLUGIN_DIST, "path": f"{PLUGIN_MODULE}/plugin.py"}
    )
    assert small["data"]["served"] is True  # positive control: the same settings serve a small file


def test_a_binary_file_is_refused_as_not_text(bare_world: World) -> None:
    bare_world.install({"__init__.py": "", "plugin.py": "", "data.bin": b"\xff\xfe\x00binary"})
    reg = bare_world.registry()
    data = bare_world.call(
        reg, "reyn_src_read", {"distribution": PLUGIN_DIST, "path": f"{PLUGIN_MODULE}/data.bin"}
    )
    assert data["data"]["served"] is False and "not UTF-8 text" in data["data"]["reason"]
