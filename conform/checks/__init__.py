"""The checks, one module per group; importing this package registers them all."""

from conform.checks import (
    agent,
    arguments,
    checking,
    describe,
    ending,
    idempotency,
    lists,
    parallel,
    people,
    processes,
    waits,
)

__all__ = [
    "agent",
    "arguments",
    "checking",
    "describe",
    "ending",
    "idempotency",
    "lists",
    "parallel",
    "people",
    "processes",
    "waits",
]
