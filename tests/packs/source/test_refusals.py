"""What is never served: a path the record does not list, a file-system path, a file whose bytes
differ from its recorded hash — each next to the same read of an untouched recorded file."""

from __future__ import annotations

import pytest

from reyn_core import ToolContext

from .conftest import INFO, PLUGIN_DIST, PLUGIN_MODULE, World, load_digest

NOTES = f"{PLUGIN_MODULE}/notes.txt"


def _read(world: World, reg, path: str, dist: str = PLUGIN_DIST) -> dict:
    return world.call(reg, "reyn_src_read", {"distribution": dist, "path": path})


def test_a_path_the_record_does_not_list_is_refused_with_the_closest_names(world: World) -> None:
    (world.site / "secret.txt").write_text("TOKEN\n")  # in site-packages, in no distribution's record
    reg = world.registry()
    env = _read(world, reg, "secret.txt")
    assert env["status"] == "error" and env["error"]["kind"] == "invalid_arguments"
    assert env["error"]["errors"][0]["path"] == "/path"
    assert "not a file demo-src-plugin's record lists" in env["error"]["message"]
    env = _read(world, reg, f"{PLUGIN_MODULE}/note.txt")
    assert f"did you mean {NOTES}" in env["error"]["message"]


def test_a_file_in_the_package_that_record_does_not_list_is_reported_not_served(world: World) -> None:
    world.file("secret.py").write_text("TOKEN = 'x'\n")  # slipped into the installed package
    reg = world.registry()
    listed = world.call(reg, "reyn_src_list", {"distribution": PLUGIN_DIST})["data"]
    secret = next(f for f in listed["files"] if f["path"] == f"{PLUGIN_MODULE}/secret.py")
    assert "RECORD does not list it" in secret["not_served"]
    data = _read(world, reg, f"{PLUGIN_MODULE}/secret.py")["data"]
    assert data["served"] is False and "TOKEN" not in str(data)


@pytest.mark.parametrize(
    "path",
    [
        f"{PLUGIN_MODULE}/../{INFO}/METADATA",  # '..' that lands on a recorded file
        "../../../etc/passwd",
        "/etc/passwd",
        "{site}/demo_src_plugin/notes.txt",  # the absolute path of a recorded file
        f"./{NOTES}",
    ],
)
def test_file_system_paths_are_refused_even_when_they_lead_to_a_recorded_file(
    world: World, path: str
) -> None:
    reg = world.registry()
    env = _read(world, reg, path.format(site=world.site))
    assert env["status"] == "error" and env["error"]["kind"] == "invalid_arguments", env
    assert "/etc/passwd" not in str(env.get("data"))
    assert env["error"]["message"].count("root:") == 0


def test_the_recorded_name_itself_is_served(world: World) -> None:
    # positive control for the refusals above: the same file by its recorded name
    assert _read(world, world.registry(), NOTES)["data"]["served"] is True


def test_a_file_changed_after_the_load_is_reported_and_not_served(world: World) -> None:
    reg = world.registry()
    assert _read(world, reg, NOTES)["data"]["served"] is True  # listed and verified
    world.file("notes.txt").write_text("first\nSECOND, rewritten\n")
    data = _read(world, reg, NOTES)["data"]
    assert data["served"] is False and "text" not in data
    assert "differs from its recorded hash" in data["reason"] and "SECOND" not in data["reason"]
    # positive control: the untouched file beside it is still served
    assert _read(world, reg, f"{PLUGIN_MODULE}/plugin.py")["data"]["served"] is True


def test_a_file_that_differed_from_record_at_load_is_listed_as_not_served(world: World) -> None:
    world.file("notes.txt").write_text("tampered before the load\n")
    # the load's digest covers what is on disk now (the loader reports the RECORD mismatch)
    reg = world.registry()
    listed = world.call(reg, "reyn_src_list", {"distribution": PLUGIN_DIST})["data"]
    assert listed["refused_files"] == 1
    notes = next(f for f in listed["files"] if f["path"] == NOTES)
    assert "RECORD" in notes["not_served"]
    data = _read(world, reg, NOTES)["data"]
    assert data["served"] is False and "tampered" not in str(data)
    assert _read(world, reg, f"{PLUGIN_MODULE}/plugin.py")["data"]["served"] is True  # positive control


def test_a_plugin_changed_since_the_load_serves_nothing(world: World) -> None:
    digest = load_digest(PLUGIN_DIST, "demo", f"{PLUGIN_MODULE}.plugin")
    world.file("plugin.py").write_text("import os\n")  # before the pack first looks at the plugin
    reg = world.registry(demo_digest=digest)  # what the load verified, before the change
    listed = world.call(reg, "reyn_src_list", {})["data"]
    demo = next(d for d in listed["distributions"] if d["distribution"] == PLUGIN_DIST)
    assert "changed since this process loaded it" in demo["problems"][0]
    data = _read(world, reg, NOTES)["data"]  # untouched, but the plugin is no longer what was loaded
    assert data["served"] is False and "changed since it was loaded" in data["reason"]


def test_the_same_plugin_at_its_load_digest_serves(world: World) -> None:
    # positive control for the test above: the load's digest equals the files on disk
    digest = load_digest(PLUGIN_DIST, "demo", f"{PLUGIN_MODULE}.plugin")
    assert _read(world, world.registry(demo_digest=digest), NOTES)["data"]["served"] is True


def test_a_recorded_file_that_is_one_of_the_hosts_secrets_is_not_served(bare_world: World) -> None:
    """A RECORD can list any path with the hash its installer computed (one that read the host's
    key could record it): the core's one read rule refuses it, naming only the recorded name."""
    from reyn_core import SecretFile

    bare_world.install({"__init__.py": "", "plugin.py": "", "key.bin": "SECRET-KEY", "notes.txt": "notes\n"})
    registry = bare_world.registry()
    host = {str(bare_world.file("key.bin")): SecretFile("the host's argument key")}
    ctx = ToolContext(
        surface="router", workspace=bare_world.workspace, extras={"registry": registry}, host_files=host
    )
    path = f"{PLUGIN_MODULE}/key.bin"
    reply = bare_world.call(registry, "reyn_src_read", {"distribution": PLUGIN_DIST, "path": path}, ctx=ctx)
    assert reply["status"] == "ok" and reply["data"]["served"] is False, reply
    assert reply["data"]["reason"] == (
        f"{path!r} is one of the host's secret files (or lies inside one), which no tool reads for a model; "
        "it is not served."
    )
    assert "SECRET" not in str(reply) and str(bare_world.root) not in str(reply)
    # positive control: its neighbour, recorded the same way, is served
    path = f"{PLUGIN_MODULE}/notes.txt"
    reply = bare_world.call(registry, "reyn_src_read", {"distribution": PLUGIN_DIST, "path": path}, ctx=ctx)
    assert reply["data"]["served"] is True and reply["data"]["text"] == "notes\n", reply
