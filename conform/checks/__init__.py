"""The checks, one module per group; importing this package registers them all."""

from conform.checks import describe

__all__ = ["describe"]
