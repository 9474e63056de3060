"""Launching the console: its own options, their checks, and the session it opens, on the embedded
engine in a data folder or on a remote server.

`apc` (apc/cli.py) adds these options to its parser and calls `launch`. Importing this module imports
no Textual: only starting the console does.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from console.client.base import Who

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
TOKEN_VARIABLE = "APC_TOKEN"
"""Where `--server` finds its token when `--token` is not given: keeps it out of the process list."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from engine.http.serve import port_number

    parser.add_argument(
        "--server", metavar="URL", help="connect to this MCP endpoint instead of the embedded engine"
    )
    parser.add_argument(
        "--token",
        metavar="TOKEN",
        help=f"bearer token for --server; the console acts as its person (default: ${TOKEN_VARIABLE})",
    )
    parser.add_argument(
        "--data",
        type=Path,
        metavar="DIR",
        help="data folder of the embedded engine (default: the user data folder)",
    )
    parser.add_argument(
        "--port",
        type=port_number,
        metavar="N",
        help="port of the embedded engine's MCP endpoint, 0 for any free one (default: first free from 8765)",
    )
    parser.add_argument(
        "--read-only",
        action="store_true",
        help="hide every action that writes; embedded, open the data folder read-only and write nothing to it",
    )


def check(args: argparse.Namespace) -> str | None:
    if args.server and not args.token:
        return f"--server needs --token (or ${TOKEN_VARIABLE})"
    if args.token and not args.server:
        return "--token is for --server"
    if args.server and args.data:
        return "--data is for the embedded engine, not --server"
    if args.server and args.port is not None:
        return "--port is for the embedded engine, not --server"
    if args.read_only and args.port is not None:
        return "--port is for the embedded endpoint, which --read-only does not serve"
    return None


def launch(args: argparse.Namespace) -> int:
    """Run the console the parsed options ask for; its exit status."""
    if args.server and args.token is None:
        args.token = os.environ.get(TOKEN_VARIABLE) or None
    problem = check(args)
    if problem is not None:
        print(f"apc: error: {problem}", file=sys.stderr)
        return EXIT_USAGE
    return run_console(args)


def reach(server: str, token: str) -> tuple[str, Who] | str:
    """The endpoint URL `--server` names and who the token is there, or why it cannot be used.

    Checked before the console starts, so a wrong URL or token ends `apc` with one clear line and
    exit status 2 instead of a console repeating the error. The console opens its own session after.
    """
    import asyncio

    from console.client.connection import ConnectionFailed
    from console.client.remote import connect

    async def probe() -> tuple[str, Who]:
        client = await connect(server, token)
        try:
            return client.url, await client.whoami()
        finally:
            await client.close()

    try:
        return asyncio.run(probe())
    except ConnectionFailed as failed:
        if failed.refused:
            return f"{failed} (check --token or ${TOKEN_VARIABLE})"
        if failed.status is not None:
            return f"{failed} (--server takes the server's base URL or its /mcp URL)"
        return str(failed)


def run_console(args: argparse.Namespace) -> int:
    from console.app import ApcApp
    from console.live.session import Session
    from console.settings.config import ConsoleConfig, default_config_path

    if args.server:
        from console.client.remote import RemoteClient

        token = str(args.token)
        reached = reach(str(args.server), token)
        if isinstance(reached, str):
            print(f"apc: error: {reached}", file=sys.stderr)
            return EXIT_USAGE
        url, who = reached

        async def opener() -> Session:
            client = RemoteClient(url, token, who=who)
            return Session(client, f"remote · {url}", close=client.close)

    else:
        from console.embedded.launch import open_embedded
        from engine.datafolder import DataFolderInUse, check_free, default_data_dir

        data_dir = args.data or default_data_dir()

        if args.read_only:
            from console.embedded.launch import NoDataFolder, check_read_only_folder, open_read_only

            try:
                check_read_only_folder(data_dir)
            except NoDataFolder as error:
                print(f"apc: error: {error}", file=sys.stderr)
                return EXIT_USAGE

            async def opener() -> Session:
                return await open_read_only(data_dir)

        else:
            try:
                check_free(data_dir)
            except DataFolderInUse as error:
                print(f"apc: error: {error}", file=sys.stderr)
                return EXIT_FAILED

            async def opener() -> Session:
                return await open_embedded(data_dir, port=args.port)

    app = ApcApp(opener, read_only=args.read_only, config=ConsoleConfig.load(default_config_path()))
    app.run()
    return app.return_code or EXIT_OK
