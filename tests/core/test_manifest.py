"""``reyn_core.manifest``: a ``@tool`` definition survives the trip through a JSON manifest field for
field, its lazy handler reaches the same function through the real dispatcher, every malformed
manifest gets its own ValueError, and ``python -m reyn_core.manifest --check`` exits 0 / 1."""

from __future__ import annotations

import copy
import dataclasses
import importlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from reyn_core import (
    ToolContext,
    ToolDefinition,
    ToolGates,
    lazy_definitions,
    read_manifest,
    tool,
    tool_manifest,
)
from reyn_core.host import RegistryBuilder, invoke_tool
from reyn_core.manifest import dumps

MODULE = '''
from pydantic import BaseModel, ConfigDict, Field
from reyn_core import ToolContext, ToolGates, tool

CALLS = []


def ready(ctx: ToolContext) -> bool:
    return True


def enrich(params, ctx):
    return params


class ShoutArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    text: str = Field(description="Text to shout, é included.", min_length=1)
    times: int = Field(default=1, ge=1, le=5)


@tool(cluster="voice", purity="read_only", gates=ToolGates(router="deny", phase="allow"),
      available=ready, schema_enricher=enrich, timeout_s=2.5)
def shout(args: ShoutArgs, ctx: ToolContext) -> str:
    """Shout a text.

    Repeated ``times`` times.
    """
    CALLS.append(args.text)
    return " ".join([args.text.upper()] * args.times)


@tool(dispatch_kind="deferred")
async def whisper(text: str) -> str:
    """Whisper a text."""
    return text.lower()


TOOLS = (shout, whisper)
'''


@pytest.fixture
def mod(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    pkg = tmp_path / "manifest_sample_pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "tools.py").write_text(MODULE, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in ("manifest_sample_pkg", "manifest_sample_pkg.tools"):
        sys.modules.pop(name, None)
    yield importlib.import_module("manifest_sample_pkg.tools")
    for name in ("manifest_sample_pkg", "manifest_sample_pkg.tools"):
        sys.modules.pop(name, None)


def _fields(d: ToolDefinition) -> dict[str, Any]:
    # the handler is a reference in a manifest, and the model it carries is found through it
    return {
        f.name: getattr(d, f.name)
        for f in dataclasses.fields(d)
        if f.name not in ("handler", "arguments_model")
    }


def test_a_tool_round_trips_field_for_field(mod: Any) -> None:
    manifest = tool_manifest(mod.TOOLS)
    assert manifest["reyn_manifest"] == 1
    assert [t["handler"] for t in manifest["tools"]] == [
        "manifest_sample_pkg.tools:shout",
        "manifest_sample_pkg.tools:whisper",
    ]
    # What a file holds: JSON text, key order kept.
    manifest = json.loads(dumps(manifest))
    lazy = lazy_definitions(manifest, available={"shout": mod.ready}, schema_enrichers={"shout": mod.enrich})
    for got, want in zip(lazy, mod.TOOLS, strict=True):
        assert _fields(got) == _fields(want)
        assert json.dumps(got.parameters) == json.dumps(want.parameters)
        assert isinstance(got.handler, str)
    assert tool_manifest(lazy) == tool_manifest(mod.TOOLS)  # a lazy handler is kept as it is
    assert lazy[0].gates == ToolGates(router="deny", phase="allow") and lazy[0].timeout_s == 2.5
    assert lazy[1].available is None and lazy[1].dispatch_kind == "deferred"


async def test_the_lazy_handler_reaches_the_same_function_through_the_dispatcher(mod: Any) -> None:
    registry = RegistryBuilder()
    for d in lazy_definitions(tool_manifest(mod.TOOLS), available={"shout": mod.ready}):
        registry.register(d)
    snapshot = registry.freeze()
    ctx = ToolContext(surface="phase")
    assert (
        await invoke_tool(
            snapshot, "shout", {"text": "hé", "times": 2}, ctx, surface="phase", allowed_ops=["voice"]
        )
        == "HÉ HÉ"
    )
    assert mod.CALLS == ["hé"]
    assert (
        await invoke_tool(snapshot, "whisper", {"text": "QUIET"}, ToolContext(), surface="router") == "quiet"
    )


def test_read_manifest_reads_a_package_resource(mod: Any) -> None:
    path = Path(mod.__file__).with_name("tools.json")
    path.write_text(dumps(tool_manifest(mod.TOOLS)), encoding="utf-8")
    assert read_manifest("manifest_sample_pkg") == tool_manifest(mod.TOOLS)
    with pytest.raises(FileNotFoundError):
        read_manifest("manifest_sample_pkg", "missing.json")


# --------------------------------------------------------------------------- refused definitions


def _nested() -> ToolDefinition:
    @tool
    def inner(x: int) -> int:
        """Inner."""
        return x

    return inner


def test_a_handler_that_is_not_module_level_is_refused() -> None:
    with pytest.raises(ValueError, match=r"tool 'inner'.*not a module-level function"):
        tool_manifest([_nested()])
    lam = ToolDefinition(name="lam", description="x", parameters={"type": "object"}, handler=lambda: 1)
    with pytest.raises(ValueError, match=r"tool 'lam'.*not a module-level function"):
        tool_manifest([lam])


def test_a_handler_its_module_does_not_name_is_refused(mod: Any) -> None:
    renamed = dataclasses.replace(mod.shout, handler=mod.whisper.handler)
    assert tool_manifest([renamed])["tools"][0]["handler"] == "manifest_sample_pkg.tools:whisper"
    mod.whisper = None  # shadowed in its module: the reference would import something else
    with pytest.raises(ValueError, match="does not name its handler"):
        tool_manifest([renamed])


def test_a_missing_or_malformed_handler_is_refused() -> None:
    none = ToolDefinition(name="none", description="x", parameters={"type": "object"}, handler=None)
    with pytest.raises(ValueError, match="tool 'none' has no handler"):
        tool_manifest([none])
    bad = dataclasses.replace(none, name="bad", handler="no_colon")
    with pytest.raises(ValueError, match="tool 'bad': handler 'no_colon' is not a 'module:attr'"):
        tool_manifest([bad])
    with pytest.raises(ValueError, match="expected ToolDefinitions, got str"):
        tool_manifest(["read_file"])  # type: ignore[list-item]


# --------------------------------------------------------------------------- refused manifests


@pytest.fixture
def manifest(mod: Any) -> dict[str, Any]:
    return tool_manifest(mod.TOOLS)


def test_an_unknown_version_is_refused(manifest: dict[str, Any]) -> None:
    manifest["reyn_manifest"] = 2
    with pytest.raises(ValueError, match="unknown manifest version 2; this reyn_core reads version 1"):
        lazy_definitions(manifest)


def test_missing_and_unknown_top_level_keys_are_refused(manifest: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match="the manifest: missing tools; unknown extra"):
        lazy_definitions({"reyn_manifest": 1, "extra": []})
    with pytest.raises(ValueError, match="the manifest must be an object, got list"):
        lazy_definitions([])  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="tools must be a list, got dict"):
        lazy_definitions({"reyn_manifest": 1, "tools": {}})


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda t: t.pop("purity"), "manifest tool 'shout': missing purity"),
        (lambda t: t.update(available=True), "manifest tool 'shout': unknown available"),
        (lambda t: t.pop("name"), r"manifest tool #0: missing name"),
        (lambda t: t["gates"].pop("phase"), "manifest tool 'shout' gates: missing phase"),
        (lambda t: t["gates"].update(mcp="allow"), "manifest tool 'shout' gates: unknown mcp"),
        (lambda t: t.update(name=7), "manifest tool #0: name must be a string"),
        (
            lambda t: t.update(handler="shout"),
            "manifest tool 'shout': handler 'shout' is not a 'module:attr'",
        ),
        (lambda t: t.update(parameters=[]), "manifest tool 'shout': parameters must be an object"),
    ],
)
def test_a_malformed_tool_entry_is_refused(manifest: dict[str, Any], edit: Any, message: str) -> None:
    edit(manifest["tools"][0])
    with pytest.raises(ValueError, match=message):
        lazy_definitions(manifest)


def test_a_tool_listed_twice_is_refused(manifest: dict[str, Any]) -> None:
    manifest["tools"].append(copy.deepcopy(manifest["tools"][0]))
    with pytest.raises(ValueError, match="manifest tool 'shout' is listed twice"):
        lazy_definitions(manifest)


def test_unknown_names_in_available_or_enrichers_are_refused(manifest: dict[str, Any], mod: Any) -> None:
    with pytest.raises(ValueError, match="available names tools the manifest does not list: shuot"):
        lazy_definitions(manifest, available={"shuot": mod.ready})
    with pytest.raises(ValueError, match="schema_enrichers names tools the manifest does not list: nope"):
        lazy_definitions(manifest, schema_enrichers={"nope": mod.enrich, "shout": mod.enrich})
    assert len(lazy_definitions(manifest, available={"shout": mod.ready})) == 2  # the rest keeps working


# --------------------------------------------------------------------------- the command


def _cli(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    # `python -m` puts the working directory on sys.path: the sample package is importable from it.
    return subprocess.run(
        [sys.executable, "-m", "reyn_core.manifest", *args],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_command_prints_and_checks_a_manifest(tmp_path: Path, mod: Any) -> None:
    ref = "manifest_sample_pkg.tools:TOOLS"
    printed = _cli(tmp_path, ref)
    assert printed.returncode == 0, printed.stderr
    assert printed.stdout == dumps(tool_manifest(mod.TOOLS))
    assert "é included" in printed.stdout  # ensure_ascii=False
    target = tmp_path / "tools.json"
    target.write_text(printed.stdout, encoding="utf-8")
    fresh = _cli(tmp_path, ref, "--check", str(target))
    assert (fresh.returncode, fresh.stderr) == (0, "")

    stale = json.loads(printed.stdout)
    stale["tools"][0]["description"] = "Old words."
    stale["tools"].pop(1)
    target.write_text(json.dumps(stale, indent=2), encoding="utf-8")
    out = _cli(tmp_path, ref, "--check", str(target))
    assert out.returncode == 1
    assert out.stderr.strip().splitlines() == [
        f"{target} is out of date: +whisper, shout (description); "
        f"regenerate with: python -m reyn_core.manifest {ref} > {target}"
    ]

    target.write_text("{not json", encoding="utf-8")
    assert "invalid JSON" in _cli(tmp_path, ref, "--check", str(target)).stderr
    missing = _cli(tmp_path, ref, "--check", str(tmp_path / "absent.json"))
    assert missing.returncode == 1 and "cannot read" in missing.stderr


def test_the_command_rejects_a_bad_reference(tmp_path: Path) -> None:
    for ref, message in [
        ("no_colon", "not a 'module:attr'"),
        ("nosuchmodule_xyz:T", "ModuleNotFoundError"),
        ("json:nope", "AttributeError"),
        ("json:dumps", "not a tuple of ToolDefinitions"),
    ]:
        out = _cli(tmp_path, ref)
        assert out.returncode == 2 and message in out.stderr, (ref, out.stderr)
        assert out.stdout == ""
