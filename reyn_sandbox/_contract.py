"""The launcher's exit contract, shared by the launcher that writes it and the callers that read it,
and how the launcher is started."""

import os

LIMIT_PREFIX = "reyn-sandbox: limit exceeded: "
"""How the launcher's last stderr line starts when a limit ended the command."""
SETUP_FAILED_EXIT = 125
"""The launcher's exit status when it could not set up confinement (the command never ran)."""

# The launcher runs with -I (no environment variables, no user site, no script folder on sys.path)
# and -S (no site-packages processing, so no .pth file runs code in it, and ~100 ms less start-up
# with many editable installs). It loads this package from its own folder by exact location, and
# puts nothing on sys.path: only the stdlib resolves there, so no module lying beside the package
# (an `org` the stdlib's `copy` tries, a stdlib name) is imported before confinement; only
# reyn_sandbox's own files resolve from its folder (its submodule_search_locations). The two functions
# are importlib.util's (`spec_from_file_location`, `module_from_spec`: it re-exports them), taken from
# the import system's own modules, which the interpreter loaded at its start: importing
# importlib.util would bring contextlib, functools and collections, which a launch needs none of
# (docs/performance.md, "The launcher's imports, trimmed"; a test pins the identity).
PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))
PACKAGE_PARENT = os.path.dirname(PACKAGE_DIR)
LAUNCHER_BOOT = (
    "import sys, _frozen_importlib as b, _frozen_importlib_external as e; "
    f"s = e.spec_from_file_location('reyn_sandbox', {os.path.join(PACKAGE_DIR, '__init__.py')!r}, "
    f"submodule_search_locations=[{PACKAGE_DIR!r}]); "
    "m = sys.modules['reyn_sandbox'] = b.module_from_spec(s); s.loader.exec_module(m); "
    "from reyn_sandbox._launch import launch; launch()"
)
"""The program of ``python -I -S -c``: the launcher (``_launch.launch``: ``main`` and an exit without
finalization), given its words after it."""
CANNOT_CONFINE = "cannot confine commands here: "
"""How the launcher's refusal of the kernel starts (after ``reyn-sandbox: ``), as ``status()`` reads it."""
