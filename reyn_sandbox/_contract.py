"""The launcher's exit contract, shared by the launcher that writes it and the callers that read it,
and how the launcher is started."""

import os

LIMIT_PREFIX = "reyn-sandbox: limit exceeded: "
"""How the launcher's last stderr line starts when a limit ended the command."""
SETUP_FAILED_EXIT = 125
"""The launcher's exit status when it could not set up confinement (the command never ran)."""

# The launcher runs with -I (no environment variables, no user site, no script folder on sys.path)
# and -S (no site-packages processing, so no .pth file runs code in it, and ~100 ms less start-up
# with many editable installs); it finds this package by the folder that holds it, after the stdlib.
PACKAGE_PARENT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LAUNCHER_BOOT = (
    f"import sys; sys.path.append({PACKAGE_PARENT!r}); from reyn_sandbox._launch import launch; launch()"
)
"""The program of ``python -I -S -c``: the launcher (``_launch.launch``: ``main`` and an exit without
finalization), given its words after it."""
CANNOT_CONFINE = "cannot confine commands here: "
"""How the launcher's refusal of the kernel starts (after ``reyn-sandbox: ``), as ``status()`` reads it."""
