"""Load step 2: the installed plugins from their metadata (``discovery``, never importing them) and
the one distribution per enabled id (``selection``)."""
