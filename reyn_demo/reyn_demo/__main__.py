"""``python -m reyn_demo``: the same as the ``reyn-demo`` command."""

from .cli import main

raise SystemExit(main())
