"""pytest plugin of the Reyn testing kit (entry point ``pytest11: reyn``)."""
