"""The installed distribution's version: `apc --version` and the MCP server's `serverInfo`."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

DISTRIBUTION = "agentprocess-console"


def package_version() -> str:
    """The version pip installed; "0+unknown" when run from files that were never installed."""
    try:
        return version(DISTRIBUTION)
    except PackageNotFoundError:
        return "0+unknown"
