"""The checks, one module per group; importing this package registers them all."""

from conform.checks import agent, arguments, describe, idempotency, processes

__all__ = ["agent", "arguments", "describe", "idempotency", "processes"]
