"""Fixtures for the file pack: a real workspace in a temp dir, an outside tree that must stay
untouched, and a registry built from the pack's own hooks, called through the real dispatcher."""

from __future__ import annotations

import hashlib
import os
import secrets
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import reyn_tools_file.plugin as file_plugin
from reyn_tools_file.settings import FileSettings

from reyn_core import ToolContext, ToolOrigin
from reyn_core.host import RegistryBuilder, ToolRegistry, dispatch_tool, invoke_tool

ORIGIN = ToolOrigin(kind="plugin", plugin_id="file", distribution="reyn-tools-file")


def build_registry(settings: FileSettings) -> ToolRegistry:
    """A frozen registry holding the file pack's tools, registered by the pack's own hook."""
    registry = RegistryBuilder(settings={"file": settings})

    def register(obj: Any) -> Any:
        return registry.register(obj, origin=ORIGIN)

    file_plugin.reyn_register_tools(register=register, settings=settings)
    return registry.freeze()


@dataclass
class FileTools:
    """Calls the file tools the way a model's call arrives: ``invoke_tool`` / ``dispatch_tool``."""

    registry: ToolRegistry
    ctx: ToolContext

    async def call(self, name: str, **args: Any) -> Any:
        return await invoke_tool(self.registry, name, args, self.ctx)

    async def envelope(self, name: str, args: Any) -> dict[str, Any]:
        return await dispatch_tool(self.registry, name, args, self.ctx)


def _snapshot(root: Path, track_atime: bool) -> dict[str, tuple[Any, ...]]:
    """Every entry's stat and content hash. Access times are put back afterwards, so taking a
    snapshot is not itself a read that a later snapshot would notice."""
    stats: dict[Path, os.stat_result] = {root: root.lstat()}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            stats[Path(dirpath, name)] = Path(dirpath, name).lstat()
    out: dict[str, tuple[Any, ...]] = {}
    for p, st in stats.items():
        digest = hashlib.sha256(p.read_bytes()).hexdigest() if stat.S_ISREG(st.st_mode) else ""
        out[str(p.relative_to(root))] = (
            st.st_mode,
            st.st_size,
            st.st_mtime_ns,
            st.st_nlink,
            digest,
            st.st_atime_ns if track_atime else 0,
        )
    for p, st in stats.items():
        if not stat.S_ISLNK(st.st_mode):
            os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns))
    return out


def _atime_is_tracked(probe_dir: Path) -> bool:
    probe = probe_dir / ".atime-probe"
    probe.write_text("x")
    os.utime(probe, ns=(0, probe.stat().st_mtime_ns))
    with open(probe, "rb") as fh:
        fh.read()
    tracked = probe.stat().st_atime_ns != 0
    probe.unlink()
    return tracked


class Outside:
    """A tree next to the workspace that no attack may read, write or delete.

    ``secret`` is a unique token in every outside file: if it appears in a tool's result, the tool
    read outside the root. ``assert_untouched`` compares names, modes, sizes, contents, link counts,
    mtimes and (where the file system records them) access times with the snapshot taken at setup.
    """

    def __init__(self, root: Path) -> None:
        self.root = root
        self.secret = "TOP-SECRET-" + secrets.token_hex(8)
        root.mkdir()
        (root / "secret.txt").write_text(f"{self.secret}\n")
        (root / "d").mkdir()
        (root / "d" / "inner.txt").write_text(f"inner {self.secret}\n")
        self.track_atime = _atime_is_tracked(root.parent)
        if self.track_atime:
            for p in (root / "secret.txt", root / "d" / "inner.txt", root / "d", root):
                os.utime(p, ns=(0, p.stat().st_mtime_ns))  # any read now moves atime (relatime)
        self.before = _snapshot(root, self.track_atime)

    def refresh(self) -> None:
        """Take the snapshot again (after a test deliberately links to an outside file)."""
        self.before = _snapshot(self.root, self.track_atime)

    def assert_untouched(self, *results: object) -> None:
        assert _snapshot(self.root, self.track_atime) == self.before
        for result in results:
            assert self.secret not in repr(result)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "hello.txt").write_text("hello\nworld\n")
    (ws / "out").mkdir()
    return ws


@pytest.fixture
def outside(tmp_path: Path, workspace: Path) -> Outside:
    return Outside(tmp_path / "outside")


@pytest.fixture
def make_tools(workspace: Path) -> Callable[..., FileTools]:
    """``make_tools(**settings)`` → ``FileTools`` for a registry with those settings (surface router)."""

    def make(surface: str = "router", **settings: Any) -> FileTools:
        settings.setdefault("write_roots", ("out",))
        model = FileSettings(**settings)
        return FileTools(build_registry(model), ToolContext(surface=surface, workspace=workspace))  # type: ignore[arg-type]

    return make


@pytest.fixture
def tools(make_tools: Callable[..., FileTools]) -> FileTools:
    """Read and write root: the whole workspace (so each refusal comes from the rule under test)."""
    return make_tools(write_roots=(".",))


@pytest.fixture(name="build_registry")
def build_registry_fixture() -> Callable[[FileSettings], ToolRegistry]:
    return build_registry
