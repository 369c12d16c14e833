"""``python -m reyn_core`` runs the ``reyn`` command."""

from reyn_core.cli import main

raise SystemExit(main())
