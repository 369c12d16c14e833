"""A sandboxed shell call vs the same call unsandboxed: ``echo`` through the real ``shell`` tool.

Both run in one process, interleaved call by call (so load on a shared machine hits both alike),
through ``invoke_tool`` with the same settings but ``sandbox = "off"`` on one side. Each side starts
one interpreter besides the command: unsandboxed the pack's supervisor (timeouts kill every
descendant), sandboxed the launcher alone (Landlock, namespaces, rlimits, then ``execve``; its PID
namespace ends every descendant). Target: the sandboxed median <= 1.3x the unsandboxed one. The
profile rows time the launcher alone (``/bin/true`` under it vs bare) and split it, interleaved in
the same run: a bare interpreter start as the launcher's (``-I -S``), that start plus importing
``reyn_sandbox._launch`` (nothing confined), and the rest (the kernel checks, namespaces, PID 1's
fork, mounts, Landlock, seccomp, the command's fork and exec, the waits).

Measured figures, and where the time goes: docs/performance.md, "The sandbox launcher".

Run: ``python benchmarks/bench_sandbox.py [--calls N]`` or ``main()`` from benchmarks/run.py.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import table

from reyn_core import PhaseCallerState, ToolContext, ToolOrigin
from reyn_core.host import RegistryBuilder, ToolRegistry, invoke_tool

TARGET = 1.3
ORIGIN = ToolOrigin(kind="plugin", plugin_id="shell", distribution="reyn-tools-shell")


def _registry(sandbox: str) -> ToolRegistry:
    import reyn_tools_shell.plugin as plugin
    from reyn_tools_shell.settings import ShellSettings

    settings = ShellSettings.model_validate(
        {"programs": [{"name": "echo", "any_args": True}], "sandbox": sandbox, "write_roots": []}
    )
    builder = RegistryBuilder(settings={"shell": settings})
    plugin.reyn_register_tools(register=lambda t: builder.register(t, origin=ORIGIN), settings=settings)
    return builder.freeze()


async def _interleaved(workspace: Path, calls: int) -> dict[str, list[float]]:
    ctx = ToolContext(
        surface="phase", workspace=workspace, phase_state=PhaseCallerState(allowed_ops=("shell",))
    )
    registries = {"unsandboxed": _registry("off"), "sandboxed": _registry("required")}
    times: dict[str, list[float]] = {k: [] for k in registries}
    for i in range(calls + 3):
        for label, registry in registries.items():
            start = time.perf_counter()
            result = await invoke_tool(registry, "shell", {"argv": ["echo", "hi"]}, ctx)
            elapsed = time.perf_counter() - start
            assert result["exit_code"] == 0 and result["stdout"] == "hi\n", result
            if i >= 3:  # warm-up
                times[label].append(elapsed)
    return times


def _launcher_alone(calls: int) -> dict[str, float]:
    """Medians, interleaved: `/bin/true` bare, a bare interpreter start as the launcher's, that start
    plus importing the launcher (nothing confined), and `/bin/true` under the launcher."""
    import reyn_sandbox

    parent = str(Path(reyn_sandbox.__file__).resolve().parent.parent)
    imported = f"import sys; sys.path.append({parent!r}); import os, reyn_sandbox._launch; os._exit(0)"
    commands = {
        "bare": ["/bin/true"],
        "start": [sys.executable, "-I", "-S", "-c", "import os; os._exit(0)"],
        "imported": [sys.executable, "-I", "-S", "-c", imported],
        "launched": reyn_sandbox.launcher_argv(["/bin/true"], reyn_sandbox.Grants(read_roots=("/usr",))),
    }
    times: dict[str, list[float]] = {k: [] for k in commands}
    for _ in range(calls):
        for label, command in commands.items():
            start = time.perf_counter()
            # the working directory must be granted; the streams pipes or the null device, as the
            # launcher accepts (never this process's terminal or a file)
            subprocess.run(command, check=True, cwd="/usr", stdin=subprocess.DEVNULL, capture_output=True)
            times[label].append(time.perf_counter() - start)
    return {label: statistics.median(each) for label, each in times.items()}


def main(argv: list[str] | None = None) -> bool:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=40)
    args = parser.parse_args(argv if argv is not None else sys.argv[1:])
    from reyn_tools_shell.sandbox import unavailable_reason

    reason = unavailable_reason()
    if reason is not None:
        print(f"skipped: the kernel sandbox is unavailable here ({reason})")
        return True
    with tempfile.TemporaryDirectory() as tmp:
        Path(tmp).chmod(0o755)  # under root the sandbox's unprivileged user must read the workspace
        times = asyncio.run(_interleaved(Path(tmp), args.calls))
    plain, boxed = statistics.median(times["unsandboxed"]), statistics.median(times["sandboxed"])
    alone = _launcher_alone(args.calls)
    bare, launched = alone["bare"], alone["launched"]
    ratio = boxed / plain
    rows = [
        ["shell echo, unsandboxed", plain * 1e3, ""],
        ["shell echo, sandboxed", boxed * 1e3, f"{ratio:.2f}x"],
        ["profile: /bin/true bare", bare * 1e3, ""],
        ["profile: /bin/true under the launcher", launched * 1e3, f"+{(launched - bare) * 1e3:.1f} ms"],
        ["profile: of which interpreter start (-I -S)", alone["start"] * 1e3, ""],
        ["profile: of which importing the launcher", (alone["imported"] - alone["start"]) * 1e3, ""],
        ["profile: of which confining, forks, exec, wait", (launched - alone["imported"]) * 1e3, ""],
    ]
    print(table([f"call (median of {args.calls})", "ms", "ratio"], rows))
    met = ratio <= TARGET
    print(f"\ntarget: sandboxed <= {TARGET}x unsandboxed: {'met' if met else 'MISSED'} ({ratio:.2f}x)")
    return met


if __name__ == "__main__":
    sys.exit(0 if main() else 1)
