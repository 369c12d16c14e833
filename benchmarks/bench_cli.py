"""CLI start-up and discovery benchmarks (DESIGN.md §11).

1. ``reyn tools render --surface router`` with every installed capability pack enabled — always a
   full load, nothing replayed (every plugin file hashed, every schema checked) — on its first
   run (empty Reyn cache dir: plugin modules compiled) and its second (the bytecode cache filled),
   against the floor
   ``python -c "from pydantic import BaseModel; import pluggy"`` in alternating pairs (issue 15).
   Target (issue 23): both <= 1.5x the floor.
   Measured twice: in this (editable, development) environment, and in a fresh venv where reyn-core
   and the packs are installed from wheels, as a user installs them. Each comes with an in-process
   breakdown of a warm render (import reyn_core, loader and profile, discovery, plugin imports,
   load, render) so the gap to the target is explained; docs/performance.md discusses it.
2. Discovery time (``reyn_core.loading.step2_discovery.discovery.discover``, metadata only) over 20 and 200
   synthetic installed distributions (real ``.dist-info`` folders with ``reyn.plugins`` entry
   points on a path), to show it grows linearly.

Run: ``python benchmarks/bench_cli.py [--repeat N] [--json] [--skip-installed]`` or ``main()`` from
benchmarks/run.py.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

PACKS = ("file", "web", "memory", "catalog", "mcp", "shell")
TARGET_RATIO = 1.5


def _env(cache: Path, home: Path) -> dict[str, str]:
    env = {
        k: v for k, v in os.environ.items() if not k.startswith("REYN_") and k != "PYTHONDONTWRITEBYTECODE"
    }
    env["REYN_CACHE_DIR"] = str(cache)
    env["XDG_CONFIG_HOME"] = str(home)
    return env


_CPU: list[float] = []
"""The CPU time (user + system) of each child ``_time`` ran, in order: on a shared machine, where
wall time swings with the other processes, the CPU-time ratio is the steadier figure."""


def _children_cpu() -> float:
    import resource

    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _time(argv: Sequence[str], *, cwd: Path, env: dict[str, str]) -> float:
    cpu = _children_cpu()
    start = time.perf_counter()
    proc = subprocess.run(
        list(argv),
        cwd=cwd,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        timeout=300,
    )
    elapsed = time.perf_counter() - start
    _CPU.append(_children_cpu() - cpu)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} failed: {proc.stderr.strip()[-500:]}")
    return elapsed


def _installed_packs() -> list[str]:
    from reyn_core.loading.step2_discovery.discovery import discover

    ids = set(discover().ids)
    return [p for p in PACKS if p in ids]


FLOOR = "from pydantic import BaseModel; import pluggy"
"""The mandated libraries' own floor (issue 15): what any pydantic-model, pluggy-hooked CLI pays."""


def bench_render(
    repeat: int = 10, python: str | None = None, packs: Sequence[str] | None = None
) -> dict[str, Any]:
    """Cold and warm ``reyn tools render --surface router`` against the floor
    ``python -c "from pydantic import BaseModel; import pluggy"``, in alternating pairs (each render
    right after a floor run; the ratio is the median of the pairs' ratios), with the interpreter
    ``python`` (default: this one). Every run loads, hashing every plugin file and checking every
    schema: warm is a second run (the bytecode cache filled), cold a first run (an empty cache dir)."""
    packs = list(packs) if packs is not None else _installed_packs()
    python = python or sys.executable
    render = [python, "-m", "reyn_core", "tools", "render", "--surface", "router"]
    floor_cmd = [python, "-c", FLOOR]
    baseline_cmd = [python, "-c", "import pydantic, pluggy"]
    startup_cmd = [python, "-c", "pass"]
    with tempfile.TemporaryDirectory(prefix="reyn-bench-") as tmp:
        root = Path(tmp)
        work = root / "work"
        work.mkdir()
        (work / "reyn.toml").write_text(f"[plugins]\nenable = {json.dumps(packs)}\n")
        env = _env(root / "cache-warm", root / "xdg")
        _time(render, cwd=work, env=env)  # writes the bytecode cache
        _time(floor_cmd, cwd=work, env=env)
        cold, warm, floor, base, bare = [], [], [], [], []
        warm_ratio, cold_ratio, warm_cpu_ratio, cold_cpu_ratio = [], [], [], []
        for i in range(repeat):
            bare.append(_time(startup_cmd, cwd=work, env=env))
            base.append(_time(baseline_cmd, cwd=work, env=env))
            floor.append(_time(floor_cmd, cwd=work, env=env))
            warm.append(_time(render, cwd=work, env=env))
            warm_ratio.append(warm[-1] / floor[-1])
            warm_cpu_ratio.append(_CPU[-1] / _CPU[-2])
            cold_cache = root / f"cache-cold-{i}"
            floor.append(_time(floor_cmd, cwd=work, env=env))
            cold.append(_time(render, cwd=work, env=_env(cold_cache, root / "xdg")))
            cold_ratio.append(cold[-1] / floor[-1])
            cold_cpu_ratio.append(_CPU[-1] / _CPU[-2])
            shutil.rmtree(cold_cache, ignore_errors=True)
    median = statistics.median
    result = {
        "packs": packs,
        "repeat": repeat,
        "python_startup_s": median(bare),
        "baseline_import_pydantic_pluggy_s": median(base),
        "floor_basemodel_pluggy_s": median(floor),
        "render_warm_s": median(warm),
        "render_cold_s": median(cold),
        "warm_ratio": median(warm_ratio),
        "cold_ratio": median(cold_ratio),
        "warm_cpu_ratio": median(warm_cpu_ratio),
        "cold_cpu_ratio": median(cold_cpu_ratio),
        "target_ratio": TARGET_RATIO,
    }
    result["meets_target"] = max(result["warm_ratio"], result["cold_ratio"]) <= TARGET_RATIO
    return result


# Each step imports only what the previous ones did not, so the figures add up; the first three are
# what any pydantic-based CLI pays, the rest is Reyn's own. CPU time of the process (steadier than
# wall time on a shared machine).
_BREAKDOWN = """
import time
t = [time.process_time()]
def lap():
    t.append(time.process_time())
    return t[-1] - t[-2]
out = {}
import pydantic, pluggy
out["baseline_imports_pydantic_pluggy_s"] = lap()
from pydantic import BaseModel
out["pydantic_model_machinery_s"] = lap()
import argparse, importlib.metadata, json, tomllib
out["stdlib_argparse_metadata_json_toml_s"] = lap()
import reyn_core
import reyn_core.host
out["import_reyn_core_own_s"] = lap()
import reyn_core.loading.step1_profile.profile
out["profile_models_first_validator_s"] = lap()
from reyn_core.loading import loader
from reyn_core.loading.step2_discovery import discovery
from reyn_core.loading.step3_provenance import record as provenance_record
out["loader_modules_s"] = lap()
profile = reyn_core.loading.step1_profile.profile.load_profile()
found = discovery.discover()
out["profile_and_discovery_s"] = lap()
spent = {"imports": 0.0, "provenance": 0.0}
def timed(fn, key):
    def wrapper(*args, **kwargs):
        start = time.process_time()
        try:
            return fn(*args, **kwargs)
        finally:
            spent[key] += time.process_time() - start
    return wrapper
discovery.md.EntryPoint.load = timed(discovery.md.EntryPoint.load, "imports")
provenance_record.provenance_for = timed(provenance_record.provenance_for, "provenance")
result = loader.load(profile)
out["load_s"] = lap()
out["of_which_plugin_imports_s"] = spent["imports"]
out["of_which_provenance_s"] = spent["provenance"]
reyn_core.host.render_router(result.registry, reyn_core.ToolContext(surface="router"))
out["render_s"] = lap()
print(json.dumps(out))
"""


def bench_breakdown(
    repeat: int = 5, python: str | None = None, packs: Sequence[str] | None = None
) -> dict[str, float]:
    """Where a warm render's time goes, measured inside the process (medians)."""
    packs = list(packs) if packs is not None else _installed_packs()
    runs: list[dict[str, float]] = []
    with tempfile.TemporaryDirectory(prefix="reyn-bench-bd-") as tmp:
        work = Path(tmp)
        (work / "reyn.toml").write_text(f"[plugins]\nenable = {json.dumps(packs)}\n")
        env = _env(work / "cache", work / "xdg")
        for i in range(repeat + 1):
            proc = subprocess.run(
                [python or sys.executable, "-c", _BREAKDOWN],
                cwd=work,
                env=env,
                capture_output=True,
                text=True,
                timeout=300,
                check=True,
            )
            if i:  # the first run fills the bytecode cache
                runs.append(json.loads(proc.stdout))
    return {key: statistics.median(r[key] for r in runs) for key in runs[0]}


REPO = Path(__file__).resolve().parent.parent
_IGNORE = shutil.ignore_patterns("__pycache__", "*.pyc", "build", "dist", "*.egg-info")


def _pip(*args: str) -> None:
    cmd = [sys.executable, "-m", "pip", "--disable-pip-version-check", *args]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    if proc.returncode != 0:
        raise RuntimeError(f"pip {' '.join(args[:3])} failed: {proc.stderr.strip()[-800:]}")


def installed_venv(root: Path, packs: Sequence[str]) -> str:
    """A fresh venv with reyn-core and ``packs`` installed from wheels (a user's install, not the
    editable development one); returns its python. Dependencies come from the tests' wheelhouse
    under .venv/ when it exists, else from the package index."""
    src, wheels = root / "src", root / "wheels"
    core = src / "reyn-core"
    core.mkdir(parents=True)
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(REPO / name, core / name)
    shutil.copytree(REPO / "reyn_core", core / "reyn_core", ignore=_IGNORE)
    # The packs' own Reyn dependency (reyn-sandbox: the mcp and shell packs) is built here too: no
    # index or wheelhouse holds it.
    shutil.copytree(REPO / "reyn_sandbox", src / "reyn-sandbox", ignore=_IGNORE)
    folders = [core, src / "reyn-sandbox"]
    for pack in packs:  # copies, so that building leaves no build/ folder in the tree
        shutil.copytree(REPO / "reyn_builtin_tools" / pack, src / pack, ignore=_IGNORE)
        folders.append(src / pack)
    _pip("wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(wheels), *map(str, folders))
    venv = root / "venv"
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(venv)],
        check=True,
        capture_output=True,
        timeout=120,
    )
    python = str(venv / "bin" / "python")
    houses = sorted(p.parent for p in (REPO / ".venv" / "test-wheelhouse").glob("*/.complete"))
    links = [arg for d in (wheels, *houses) for arg in ("--find-links", str(d))]
    built = [str(w) for w in sorted(wheels.glob("*.whl"))]
    try:
        _pip("--python", python, "install", "-q", "--no-index", *links, *built)
    except RuntimeError:  # the wheelhouse lacks something: let pip use the index too
        _pip("--python", python, "install", "-q", *links, *built)
    return python


def bench_installed(repeat: int = 10) -> dict[str, Any]:
    """``bench_render`` and ``bench_breakdown`` in a fresh venv with wheel (non-editable) installs."""
    packs = _installed_packs()
    with tempfile.TemporaryDirectory(prefix="reyn-bench-venv-") as tmp:
        python = installed_venv(Path(tmp), packs)
        return {
            "render": bench_render(repeat, python=python, packs=packs),
            "breakdown": bench_breakdown(python=python, packs=packs),
        }


def _synthetic_site(root: Path, count: int) -> Path:
    """``count`` installed distributions, each a real .dist-info with one reyn.plugins entry point."""
    site = root / f"site-{count}"
    for i in range(count):
        info = site / f"reyn_bench_plugin_{i:04d}-1.0.0.dist-info"
        info.mkdir(parents=True)
        (info / "METADATA").write_text(
            f"Metadata-Version: 2.1\nName: reyn-bench-plugin-{i:04d}\nVersion: 1.0.0\n"
        )
        (info / "entry_points.txt").write_text(
            f"[reyn.plugins]\nbench{i:04d} = reyn_bench_plugin_{i:04d}.plugin\n"
        )
        (info / "RECORD").write_text("")
    return site


def bench_discovery(counts: Sequence[int] = (20, 200), repeat: int = 20) -> dict[str, Any]:
    """Median ``discover()`` time over sites of ``counts`` synthetic distributions."""
    from reyn_core.loading.step2_discovery.discovery import discover

    out: dict[str, Any] = {"repeat": repeat}
    with tempfile.TemporaryDirectory(prefix="reyn-bench-disc-") as tmp:
        for count in counts:
            site = str(_synthetic_site(Path(tmp), count))
            found = discover(path=[site])
            assert len(found.plugins) == count, (len(found.plugins), count)
            times = []
            for _ in range(repeat):
                start = time.perf_counter()
                discover(path=[site])
                times.append(time.perf_counter() - start)
            out[f"discover_{count}_s"] = statistics.median(times)
            start = time.perf_counter()
            discover(path=[site])  # the in-process cache
            out[f"discover_{count}_cached_s"] = time.perf_counter() - start
    if len(counts) >= 2:
        lo, hi = counts[0], counts[-1]
        out["per_distribution_us"] = {c: out[f"discover_{c}_s"] / c * 1e6 for c in counts}
        out["growth_ratio"] = out[f"discover_{hi}_s"] / out[f"discover_{lo}_s"]
        out["distribution_ratio"] = hi / lo
    return out


def _render_lines(title: str, render: dict[str, Any], breakdown: dict[str, float]) -> list[str]:
    floor = render["floor_basemodel_pluggy_s"]
    return [
        f"{title}: reyn tools render --surface router ({len(render['packs'])} packs: "
        f"{', '.join(render['packs'])}; medians of {render['repeat']}, ratios of alternating pairs)",
        f"  python -c pass                       {render['python_startup_s'] * 1000:8.1f} ms",
        f"  python -c 'import pydantic, pluggy'  "
        f"{render['baseline_import_pydantic_pluggy_s'] * 1000:8.1f} ms",
        f"  python -c '{FLOOR}' (the floor)",
        f"                                       {floor * 1000:8.1f} ms",
        f"  render, second run (bytecode cached) {render['render_warm_s'] * 1000:8.1f} ms  "
        f"({render['warm_ratio']:.2f}x the floor; CPU time {render['warm_cpu_ratio']:.2f}x)",
        f"  render, first run (empty cache dir)  {render['render_cold_s'] * 1000:8.1f} ms  "
        f"({render['cold_ratio']:.2f}x; CPU time {render['cold_cpu_ratio']:.2f}x)",
        f"  target: both <= {TARGET_RATIO}x: {'met' if render['meets_target'] else 'NOT met'}",
        "  where a render spends its CPU time after start-up (in-process, medians):",
        *(f"    {key[:-2].replace('_', ' '):<32} {value * 1000:8.1f} ms" for key, value in breakdown.items()),
    ]


def _report(results: dict[str, Any]) -> str:
    lines = _render_lines("editable (development) install", results["render"], results["breakdown"])
    if "installed" in results:
        lines += _render_lines(
            "wheel install in a fresh venv", results["installed"]["render"], results["installed"]["breakdown"]
        )
    disc = results["discovery"]
    lines.append(f"discovery, metadata only (median of {disc['repeat']})")
    for key, value in disc.items():
        if key.startswith("discover_") and not key.endswith("cached_s"):
            count = key.split("_")[1]
            lines.append(
                f"  {count:>4} distributions  {value * 1000:8.2f} ms  "
                f"({disc['per_distribution_us'][int(count)]:.1f} us each; cached "
                f"{disc[f'discover_{count}_cached_s'] * 1e6:.1f} us)"
            )
    if "growth_ratio" in disc:
        lines.append(
            f"  {disc['distribution_ratio']:.0f}x the distributions -> {disc['growth_ratio']:.1f}x the time"
        )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    """Run the benchmarks, print a report (or JSON with ``--json``), and return the numbers."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--repeat", type=int, default=10, help="subprocess runs per measurement (default 10)")
    parser.add_argument("--json", action="store_true")
    parser.add_argument(
        "--skip-installed",
        action="store_true",
        help="skip the fresh-venv wheel install measurement (it builds wheels: ~1 min)",
    )
    args = parser.parse_args(list(argv) if argv is not None else [])
    results: dict[str, Any] = {"render": bench_render(args.repeat), "breakdown": bench_breakdown()}
    if not args.skip_installed:
        results["installed"] = bench_installed(args.repeat)
    results["discovery"] = bench_discovery(repeat=max(args.repeat * 2, 10))
    print(json.dumps(results, indent=2) if args.json else _report(results))
    return results


if __name__ == "__main__":
    main(sys.argv[1:])
