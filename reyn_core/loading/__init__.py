"""Loading: profile → discovery → provenance and lock → import → settings → registration → a frozen
registry (``loader.load``), every failure a diagnostic for the plugin concerned."""
