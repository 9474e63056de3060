"""`apc`: the product put together. The console by default; `apc demo` the demo, `apc conform` the
conformance runner, and every other subcommand the engine's command line.

`apc` opens the console on the embedded engine; `apc --server URL --token TOKEN` (or the token in
`APC_TOKEN`) on any conforming server (console/launch.py). Importing this module imports no Textual:
only starting the console does.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

from console.launch import EXIT_USAGE, add_arguments, launch
from engine.version import package_version


def _demo_main(argv: list[str]) -> int:
    from demo.cli import main as demo

    return demo(argv)


def _conform_main(argv: list[str]) -> int:
    from conform.cli import main as conform

    return conform(argv)


COMMANDS: dict[str, Callable[[list[str]], int]] = {"demo": _demo_main, "conform": _conform_main}
"""Subcommands beside the engine's own; anything else that is not an option goes to the engine."""


def build_parser() -> argparse.ArgumentParser:
    from engine.cli import COMMANDS as ENGINE_COMMANDS

    listed = "\n".join(f"  {name:<10} {spec.help}" for name, spec in ENGINE_COMMANDS.items())
    parser = argparse.ArgumentParser(
        prog="apc",
        description="apc: the operator console for Agent Process servers (core-2).\n\n"
        "With no options it runs the engine embedded in your user data folder, serves its MCP\n"
        "endpoint on 127.0.0.1, and opens the console as the local operator.",
        epilog="other commands (apc COMMAND --help):\n  demo       a live demo with agents and people\n"
        f"  conform    check any Agent Process server's conformance over MCP\n{listed}",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_arguments(parser)
    parser.add_argument("--version", action="version", version=f"apc {package_version()}")
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and not argv[0].startswith("-"):
        command = COMMANDS.get(argv[0])
        if command is not None:
            return command(argv[1:])
        from engine.cli import main as engine_main

        return engine_main(argv)
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as stop:
        return stop.code if isinstance(stop.code, int) else EXIT_USAGE
    return launch(args)
