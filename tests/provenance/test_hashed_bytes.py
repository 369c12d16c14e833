"""Only hashed bytes execute (issue 21): every module of a verified plugin — the entry point and a
lazily imported ``"module:attr"`` handler — runs code compiled from the bytes its digest covered.

A real venv holds one plugin installed from a real wheel and one installed editable, each locked
with ``[lock] enforce = true``. Each attack plants a file the normal import
system would run (a ``.pyc`` whose header matches the untouched source, a sourceless ``.pyc``, an
extension module, a ``.pth``) or changes a source file after its digest; the planted code writes a
marker file when it runs, so each test proves it never ran under Reyn. Every attack also has its
control: plain ``python -c "import …"`` in the same venv *does* run the planted file, so a test
cannot pass because the plant was ineffective; and the untouched plugin loads and its tools run.
"""

from __future__ import annotations

import contextlib
import importlib.machinery
import importlib.util
import json
import marshal
import os
import struct
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from plugin_distkit import PluginDist, editable_profiles, venv_with_plugins

from .project_kit import LockedWorld

TAG = sys.implementation.cache_tag
EXT = importlib.machinery.EXTENSION_SUFFIXES[0]


def plugin_source(prefix: str, package: str) -> str:
    return textwrap.dedent(f"""\
        from reyn_core import ToolDefinition, ToolGates, hookimpl, tool

        REYN_API = 1
        VERSION = "source"
        try:
            import importlib
            extra = importlib.import_module(__package__ + ".extra")
            EXTRA = "extra " + extra.VALUE
        except ImportError as exc:
            EXTRA = type(exc).__name__ + ": " + str(exc)

        OPEN = ToolGates(router="allow", phase="allow")

        @tool(name="{prefix}_version", description="Which code runs (also under -OO).", cluster="test",
              purity="read_only", gates=OPEN)
        def _version() -> str:
            \"\"\"Which code runs.\"\"\"
            return VERSION + " | " + EXTRA

        LAZY = ToolDefinition(
            name="{prefix}_lazy", description="A lazily imported handler.",
            parameters={{"type": "object", "properties": {{}}}},
            handler="{package}.handlers:probe", cluster="test", purity="read_only", gates=OPEN,
        )

        @hookimpl
        def reyn_register_tools(register, settings):
            register(_version)
            register(LAZY)
        """)


HANDLERS = 'def probe() -> str:\n    """The source handler."""\n    return "source handler"\n'
MARK = "import os\nopen(os.environ['PLANT_MARKER'], 'a').write('planted ran\\n')\n"
PLANTED_PLUGIN = MARK + textwrap.dedent("""\
    from reyn_core import ToolGates, hookimpl, tool
    REYN_API = 1
    VERSION = "planted"
    @tool(name="planted_extra_tool", cluster="test", purity="read_only")
    def _extra() -> str:
        \"\"\"Planted.\"\"\"
        return "planted"
    @hookimpl
    def reyn_register_tools(register, settings):
        register(_extra)
    """)
PLANTED_HANDLERS = MARK + "def probe():\n    return 'planted handler'\n"
PLANTED_EXTRA = MARK + "VALUE = 'planted'\n"

WHEEL = PluginDist("rtp-hashed", "hashed", plugin_source("hw", "rtp_hashed"), files={"handlers.py": HANDLERS})
EDIT = PluginDist(
    "rtp-hashedit", "hashedit", plugin_source("he", "rtp_hashedit"), files={"handlers.py": HANDLERS}
)
KINDS = {"wheel": ("hashed", "rtp_hashed", "hw"), "editable": ("hashedit", "rtp_hashedit", "he")}

PROFILE, LOCKED = editable_profiles("hashed", "hashedit")

PROBE = textwrap.dedent("""\
    import asyncio, json, os, sys
    import reyn_core.loading.loader as loader
    from reyn_core import ToolContext
    from reyn_core.host import dispatch_tool, load, load_profile

    def rewrite(spec):  # "path=text": same size, same mtime, so only the bytes differ
        path, _, text = spec.partition("=")
        st = os.stat(path)
        data = text.encode().ljust(st.st_size, b" ")[: st.st_size]
        with open(path, "wb") as f:
            f.write(data)
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))

    original = loader.check_provenance
    def check_then_tamper(session, p):  # the window between hashing and import, made wide
        original(session, p)
        if os.environ.get("TAMPER_AFTER_DIGEST") and p.plugin_id == os.environ["TAMPER_PLUGIN"]:
            rewrite(os.environ["TAMPER_AFTER_DIGEST"])
    loader.check_provenance = check_then_tamper

    result = load(load_profile(profile_file=sys.argv[1]))
    if os.environ.get("TAMPER_AFTER_LOAD"):
        rewrite(os.environ["TAMPER_AFTER_LOAD"])
    ctx = ToolContext(surface="router", agent="probe")
    calls = {n: asyncio.run(dispatch_tool(result.registry, n, "{}", ctx, surface="router"))
             for n in sys.argv[2:] if n in result.registry}
    print(json.dumps({
        "status": {p.plugin_id: p.status for p in result.report.plugins},
        "diagnostics": [d.to_json() for d in result.report.diagnostics],
        "tools": sorted(t.name for t in result.registry.tools()),
        "calls": calls,
    }, default=str))
    """)


class World(LockedWorld):
    def __init__(self, venv: Any, root: Path) -> None:
        super().__init__(venv, root, PROFILE, LOCKED)
        self.planted: list[Path] = []
        self.probe = root / "probe.py"
        self.probe.write_text(PROBE)

    def package_dir(self, kind: str) -> Path:
        package = KINDS[kind][1]
        if kind == "wheel":
            return self.venv.site_packages / package
        return self.root / "src" / EDIT.dist / package

    def run(self, work: Path, *python_flags: str, **env: str) -> dict[str, Any]:
        tools = [f"{p}_{t}" for _, _, p in KINDS.values() for t in ("version", "lazy")]
        proc = self.venv.run("python", *python_flags, str(self.probe), str(work / "reyn.toml"), *tools,
                             cwd=work, env=self.env(work, **env))  # fmt: skip
        assert proc.returncode == 0, proc.stdout + proc.stderr
        return dict(json.loads(proc.stdout), marker=(work / "MARKER").exists())

    def plain_import(self, work: Path, module: str, *python_flags: str) -> str:
        """The control: what plain Python (no Reyn) runs for ``module``."""
        code = f"import {module} as m; print(getattr(m, 'VERSION', None), getattr(m, 'EXTRA', ''))"
        proc = self.venv.run("python", *python_flags, "-c", code, cwd=work, env=self.env(work))
        return proc.stdout + proc.stderr

    @contextlib.contextmanager
    def restored(self, path: Path) -> Iterator[Path]:
        """``path``, put back after the block as it was (bytes and times), whatever the block did."""
        original, stat = path.read_bytes(), path.stat()
        try:
            yield path
        finally:
            path.write_bytes(original)
            os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))

    def plant(self, path: Path, data: bytes) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        self.planted.append(path)
        return path


@pytest.fixture(scope="module")
def world_once(make_module_venv, tmp_path_factory) -> World:
    root = tmp_path_factory.mktemp("hashed")
    return World(venv_with_plugins(make_module_venv, "hashed", root, [WHEEL], [EDIT]), root)


@pytest.fixture
def world(world_once: World) -> Iterator[World]:
    yield world_once
    for path in world_once.planted:
        path.unlink(missing_ok=True)
    world_once.planted.clear()


def pyc(planted_source: str, source: Path, header: str) -> bytes:
    """A ``.pyc`` of ``planted_source`` whose header matches the untouched ``source`` file."""
    code = compile(planted_source, str(source), "exec", dont_inherit=True)
    magic = importlib.util.MAGIC_NUMBER
    if header == "timestamp":
        st = source.stat()
        head = magic + struct.pack("<III", 0, int(st.st_mtime) & 0xFFFFFFFF, st.st_size & 0xFFFFFFFF)
    else:  # PEP 552: bit 0 = hash-based, bit 1 = check_source
        flags = 0b11 if header == "checked-hash" else 0b01
        head = magic + struct.pack("<I", flags) + importlib.util.source_hash(source.read_bytes())
    return head + marshal.dumps(code)


def ran_source(report: dict[str, Any], prefix: str) -> None:
    calls = report["calls"]
    assert calls[f"{prefix}_version"]["data"].startswith("source | "), calls
    assert calls[f"{prefix}_lazy"]["data"] == "source handler", calls
    assert "planted_extra_tool" not in report["tools"]
    assert not report["marker"], "planted code ran"


def errors(report: dict[str, Any], plugin: str) -> list[dict[str, Any]]:
    return [d for d in report["diagnostics"] if d.get("plugin") == plugin and d["severity"] == "error"]


def test_untouched_plugins_load_and_their_tools_run(world: World) -> None:
    work = world.locked_work()
    report = world.run(work)
    assert report["status"] == {"hashed": "loaded", "hashedit": "loaded"}, report["diagnostics"]
    for _, _, prefix in KINDS.values():
        ran_source(report, prefix)
        assert report["calls"][f"{prefix}_version"]["data"].startswith("source | ModuleNotFoundError")
    code, audit = world.audit(work)
    assert code == 0 and audit["ok"]


@pytest.mark.parametrize("kind", sorted(KINDS))
@pytest.mark.parametrize("header", ["timestamp", "checked-hash", "unchecked-hash"])
def test_a_planted_pyc_with_a_matching_header_never_runs(world: World, kind: str, header: str) -> None:
    plugin_id, package, prefix = KINDS[kind]
    work = world.locked_work()
    pkg = world.package_dir(kind)
    for module, planted in (("plugin", PLANTED_PLUGIN), ("handlers", PLANTED_HANDLERS)):
        source = pkg / f"{module}.py"
        world.plant(pkg / "__pycache__" / f"{module}.{TAG}.pyc", pyc(planted, source, header))
    report = world.run(work)
    assert report["status"][plugin_id] == "loaded" and not errors(report, plugin_id)
    ran_source(report, prefix)
    assert world.plain_import(work, f"{package}.plugin").startswith("planted"), "control: the plant works"
    code, audit = world.audit(work)
    assert code == 0, audit  # the lock matches: what runs is what was locked
    found = {e["path"]: e for e in audit["never_executed"] if e["plugin"] == plugin_id}
    entry = found[str(pkg / "__pycache__" / f"plugin.{TAG}.pyc")]
    claimed = {"timestamp": "timestamp-based", "checked-hash": "checked hash-based"}
    assert entry["kind"] == "bytecode"
    assert claimed.get(header, "unchecked hash-based") in entry["detail"]
    assert header != "timestamp" or "matches the source" in entry["detail"], entry["detail"]
    assert header == "unchecked-hash" or "unchecked" not in entry["detail"]


@pytest.mark.parametrize("kind", sorted(KINDS))
@pytest.mark.parametrize("level", [1, 2])
def test_an_optimised_pyc_never_runs_under_python_o(world: World, kind: str, level: int) -> None:
    plugin_id, package, prefix = KINDS[kind]
    work = world.locked_work()
    pkg = world.package_dir(kind)
    flag = "-" + "O" * level
    for module, planted in (("plugin", PLANTED_PLUGIN), ("handlers", PLANTED_HANDLERS)):
        path = pkg / "__pycache__" / f"{module}.{TAG}.opt-{level}.pyc"
        world.plant(path, pyc(planted, pkg / f"{module}.py", "timestamp"))
    report = world.run(work, flag)
    assert report["status"][plugin_id] == "loaded"
    ran_source(report, prefix)
    assert world.plain_import(work, f"{package}.plugin", flag).startswith("planted")
    assert world.plain_import(work, f"{package}.plugin").startswith("source"), "only -O uses opt-N"
    paths = {e["path"] for e in world.audit(work)[1]["never_executed"]}
    assert str(pkg / "__pycache__" / f"plugin.{TAG}.opt-{level}.pyc") in paths


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_a_sourceless_pyc_is_refused_not_imported(world: World, kind: str) -> None:
    plugin_id, package, prefix = KINDS[kind]
    work = world.locked_work()
    pkg = world.package_dir(kind)
    planted = world.plant(pkg / "extra.pyc", pyc(PLANTED_EXTRA, pkg / "plugin.py", "timestamp"))
    report = world.run(work)
    assert report["status"][plugin_id] == "loaded"
    version = report["calls"][f"{prefix}_version"]["data"]
    assert version.startswith("source | ImportError") and "not one of the source files digested" in version
    assert str(planted) in version and not report["marker"]
    assert "extra planted" in world.plain_import(work, f"{package}.plugin"), "control: Python runs it"
    found = {e["path"]: e["kind"] for e in world.audit(work)[1]["never_executed"]}
    assert found[str(planted)] == "sourceless bytecode"


def test_an_extension_module_in_an_editable_tree_is_refused_even_when_locked(world: World) -> None:
    pkg = world.package_dir("editable")
    so = world.plant(pkg / f"extra{EXT}", b"\x7fELF not really a shared object")
    work = world.locked_work()  # locked with the .so in the digest: still never loaded
    report = world.run(work)
    assert report["status"]["hashedit"] == "loaded"
    version = report["calls"]["he_version"]["data"]
    assert "not one of the source files digested" in version and str(so) in version
    control = world.plain_import(work, "rtp_hashedit.plugin")
    assert "not one of the source files" not in control and "ImportError" in control  # dlopen tried
    found = {e["path"]: e["kind"] for e in world.audit(work)[1]["never_executed"]}
    assert found[str(so)] == "extension module"


def test_an_extension_module_planted_in_a_wheel_install_is_refused_by_record(world: World) -> None:
    work = world.locked_work()
    so = world.plant(world.package_dir("wheel") / f"extra{EXT}", b"\x7fELF planted")
    report = world.run(work)
    assert report["status"]["hashed"] == "refused" and report["status"]["hashedit"] == "loaded"
    assert any(d["code"] == "RP002" and so.name in d["message"] for d in errors(report, "hashed"))


def test_a_pth_file_in_an_editable_tree_is_reported_and_never_processed(world: World) -> None:
    pth = world.plant(world.package_dir("editable") / "evil.pth", MARK.replace("\n", "; ").encode() + b"\n")
    work = world.locked_work()
    report = world.run(work)
    ran_source(report, "he")  # and the marker was not written
    found = {e["path"]: e["kind"] for e in world.audit(work)[1]["never_executed"]}
    assert found[str(pth)] == "pth file"


def test_a_pth_file_planted_in_a_wheel_install_is_refused_by_record(world: World) -> None:
    work = world.locked_work()
    world.plant(world.package_dir("wheel") / "evil.pth", MARK.replace("\n", "; ").encode() + b"\n")
    report = world.run(work)
    assert report["status"]["hashed"] == "refused" and not report["marker"]
    assert any(d["code"] == "RP002" and "evil.pth" in d["message"] for d in errors(report, "hashed"))


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_a_source_changed_between_digest_and_import_is_refused(world: World, kind: str) -> None:
    plugin_id, _, prefix = KINDS[kind]
    work = world.locked_work()
    with world.restored(world.package_dir(kind) / "plugin.py") as source:
        tamper = f"{source}={MARK}REYN_API = 1\n#"
        report = world.run(work, TAMPER_AFTER_DIGEST=tamper, TAMPER_PLUGIN=plugin_id)
        assert report["status"][plugin_id] == "failed", report["diagnostics"]
        (diag,) = errors(report, plugin_id)
        assert diag["code"] == "RI001" and "changed after its digest" in diag["message"]
        assert not report["marker"] and f"{prefix}_version" not in report["tools"]
    control = world.run(
        work, TAMPER_AFTER_DIGEST="", TAMPER_PLUGIN=plugin_id
    )  # the same hook, no change: loads
    ran_source(control, prefix)


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_a_lazy_handler_changed_after_load_is_refused_at_call(
    world: World, kind: str, operator_log: Any
) -> None:
    _, _, prefix = KINDS[kind]
    work = world.locked_work()
    with world.restored(world.package_dir(kind) / "handlers.py") as handlers:
        report = world.run(
            work,
            TAMPER_AFTER_LOAD=f"{handlers}={MARK}def probe(): return 1\n#",
            REYN_REMOTE_LOG=str(operator_log.path),
        )
    lazy = report["calls"][f"{prefix}_lazy"]
    assert lazy["status"] != "ok", lazy  # why is the operator's: the model sees no host path
    assert "changed after its digest" in operator_log.record(lazy["error"]["message"])
    assert not report["marker"]
    assert report["calls"][f"{prefix}_version"]["data"].startswith("source | ")
