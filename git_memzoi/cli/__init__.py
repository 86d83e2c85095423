"""The click layer: one module per command group, rendering text and --json."""
