"""`python -I -m reyn_sandbox --grants JSON -- command…` (built by `reyn_sandbox.launcher_argv`)."""

from ._launch import launch

launch()
