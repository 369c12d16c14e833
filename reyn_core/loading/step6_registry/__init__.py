"""Load step 6: collisions over every claimant and the frozen registry (``registration``), with
the call hooks of loaded plugins and the load's audit log (``call_hooks``)."""
