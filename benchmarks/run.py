"""Run every benchmark module: ``python benchmarks/run.py [NAME ...] [--strict]``.

Each ``benchmarks/bench_<name>.py`` module defines ``main()`` that prints its own table (see
``harness.py`` for shared timing and table helpers) and returns False when a target was missed (any
other return value counts as success). ``main()`` is called with ``sys.argv`` holding only the
module's path, so a module with its own argument parser sees its defaults. Adding a benchmark is
adding a module; nothing here needs to change. ``NAME`` runs only ``bench_<NAME>.py``. The exit
code is 1 if a module crashed (or, with ``--strict``, missed a target).
"""

from __future__ import annotations

import importlib.util
import os
import platform
import sys
import time
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent


def discover(names: list[str]) -> list[Path]:
    """The benchmark modules to run, sorted by name (all of them when ``names`` is empty)."""
    found = sorted(HERE.glob("bench_*.py"))
    if not names:
        return found
    wanted = {f"bench_{n.removeprefix('bench_').removesuffix('.py')}.py" for n in names}
    missing = wanted - {p.name for p in found}
    if missing:
        raise SystemExit(
            f"no such benchmark module(s): {', '.join(sorted(missing))} "
            f"(available: {', '.join(p.stem.removeprefix('bench_') for p in found)})"
        )
    return [p for p in found if p.name in wanted]


def run_module(path: Path) -> str:
    """Import one module and call its ``main()``; returns ``ok``, ``target missed`` or ``error``."""
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = module
    saved_argv = sys.argv
    sys.argv = [str(path)]  # a module's own argument parser must not see run.py's arguments
    try:
        spec.loader.exec_module(module)
        result = module.main()
    except SystemExit as exc:
        if exc.code in (0, None):
            return "ok"
        print(f"{path.name} exited with {exc.code!r}")
        return "error"
    except Exception:
        traceback.print_exc()
        return "error"
    finally:
        sys.argv = saved_argv
    return "target missed" if result is False else "ok"


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    strict = "--strict" in args
    names = [a for a in args if not a.startswith("--")]
    sys.path.insert(0, str(HERE))  # so modules can `import harness`
    print(
        f"# Reyn benchmarks — Python {platform.python_version()} on {platform.machine()}, "
        f"{os.cpu_count()} CPU(s), {time.strftime('%Y-%m-%d %H:%M:%S')}"
    )
    summary: dict[str, str] = {}
    for path in discover(names):
        print(f"\n## {path.stem.removeprefix('bench_')}\n", flush=True)
        summary[path.stem] = run_module(path)
    print("\n## summary\n")
    for name, status in summary.items():
        print(f"  {name:<24} {status}")
    failed = any(s == "error" for s in summary.values())
    missed = any(s == "target missed" for s in summary.values())
    return 1 if failed or (strict and missed) else 0


if __name__ == "__main__":
    raise SystemExit(main())
