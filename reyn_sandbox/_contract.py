"""The launcher's exit contract, shared by the launcher that writes it and the callers that read it."""

LIMIT_PREFIX = "reyn-sandbox: limit exceeded: "
"""How the launcher's last stderr line starts when a limit ended the command."""
SETUP_FAILED_EXIT = 125
"""The launcher's exit status when it could not set up confinement (the command never ran)."""
