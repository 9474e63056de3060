"""The `apc` command: the one place that puts the product together (console, demo, conformance runner,
the engine's commands). Nothing else imports it."""
