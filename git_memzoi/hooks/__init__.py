"""Git hook checks: the server's pre-receive / update, the client's pre-commit / pre-push, and install."""
