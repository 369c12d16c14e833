"""`python -m reyn_sandbox [--pass-fds N,…] --grants JSON -- command…`, by hand. Reyn itself starts the
launcher as `python -I -S -c LAUNCHER_BOOT …` (`reyn_sandbox.launcher_argv`), which loads this
package by its location and puts no folder on `sys.path`."""

from ._launch import launch

launch()
