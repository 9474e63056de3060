"""`apc conform`: check any Agent Process server over MCP and print a conformance report."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import TextIO

from conform import config as conform_config
from conform.registry import GROUPS
from conform.report import Report, Result
from conform.runner import DEFAULT_JOBS, RunOptions, SetupError, run
from conform.setup import DEFAULT_SPEED, write_setup
from conform.suite import checks

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_SETUP = 3

DESCRIPTION = """\
Check a server against the Agent Process specification (core-2 and the profiles it offers) over MCP,
as any agent or person would reach it: Streamable HTTP with bearer tokens, nothing else.

The server's operator first publishes the runner's own test processes and names six identities in a
conform.toml (--print-setup writes both, ready for `apc serve`). Every check prints one line,
PASS, FAIL or SKIP, with the spec section it comes from; a summary per group follows. Runs the
checks start are test runs where the check allows; the runs still open at the end are cancelled."""

EPILOG = f"""\
groups (--only GROUP, or --only GROUP.CHECK for one check): {", ".join(GROUPS)}

exit status:
  {EXIT_OK}  no check failed (some may be skipped)
  {EXIT_FAILED}  at least one check failed
  {EXIT_USAGE}  usage or config error: the message names the option or the key
  {EXIT_SETUP}  the run could not start: server unreachable, a token refused, or the runner's
     processes not published (the message says which)

examples:
  apc conform --self
  apc conform --print-setup conform-setup
  apc serve --config conform-setup/org.toml --speed {DEFAULT_SPEED:g} &
  apc conform --config conform-setup/conform.toml
  apc conform --config conform.toml --server https://a.example/mcp --only people --only time \\
              --json report.json --junit report.xml"""


def _positive(value: str) -> float:
    try:
        number = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {value!r}") from None
    if not 0 < number < float("inf"):
        raise argparse.ArgumentTypeError("must be a positive number")
    return number


def _jobs(value: str) -> int:
    if not value.isdigit() or int(value) < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number from 1, got {value!r}")
    return int(value)


def _selection(value: str) -> str:
    """A group (`people`) or one check (`people.stale`) for --only."""
    try:
        checks((value,))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"unknown group or check {value!r} (groups: {', '.join(GROUPS)}; --list names every check)"
        ) from None
    return value


def _server(value: str) -> str:
    try:
        return conform_config.check_url(value)
    except conform_config.ConfigError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="apc conform",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    target = parser.add_argument_group("what to check")
    target.add_argument(
        "--config", type=Path, metavar="FILE", help="the conform.toml naming identities and clock"
    )
    target.add_argument(
        "--server",
        action="append",
        type=_server,
        default=[],
        metavar="URL",
        help="an MCP endpoint; repeat for several servers on one database (calls go round-robin); "
        "overrides server.url of the config",
    )
    target.add_argument(
        "--self",
        dest="own",
        action="store_true",
        help="start our own `apc serve` on a temporary org with a sped-up clock and check it",
    )
    target.add_argument(
        "--speed",
        type=_positive,
        default=DEFAULT_SPEED,
        metavar="N",
        help=f"with --self or --print-setup: the server clock's speed (default {DEFAULT_SPEED:g})",
    )
    choose = parser.add_argument_group("which checks")
    choose.add_argument(
        "--only",
        action="append",
        type=_selection,
        default=[],
        metavar="GROUP|CHECK",
        help="run this group (people) or this check (people.stale) only; repeatable",
    )
    choose.add_argument(
        "--slow", action="store_true", help="also run checks that wait long on a real-time clock"
    )
    choose.add_argument(
        "--schemas",
        type=Path,
        metavar="DIR",
        help="check results against these schemas (the spec's schemas/core-2) instead of the runner's own",
    )
    choose.add_argument(
        "--jobs",
        type=_jobs,
        default=DEFAULT_JOBS,
        metavar="N",
        help=f"checks at once (default {DEFAULT_JOBS})",
    )
    output = parser.add_argument_group("output")
    output.add_argument("--json", type=Path, metavar="OUT", help="also write the report as JSON")
    output.add_argument("--junit", type=Path, metavar="OUT", help="also write the report as JUnit XML")
    output.add_argument(
        "--trace",
        type=Path,
        metavar="OUT",
        help="write every call and its answer to OUT, one JSON object a line",
    )
    output.add_argument(
        "--list", action="store_true", help="list the checks and their spec sections, run nothing"
    )
    output.add_argument(
        "--print-setup",
        type=Path,
        metavar="DIR",
        help="write the runner's processes, an org config for `apc serve` and a conform.toml into DIR, run nothing",
    )
    return parser


def main(argv: list[str] | None = None, out: TextIO | None = None) -> int:
    stdout = out or sys.stdout
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as stop:
        return stop.code if isinstance(stop.code, int) else EXIT_USAGE
    if args.list:
        return _list(args, stdout)
    if args.print_setup is not None:
        return _print_setup(args, stdout)
    if args.own == (args.config is not None):
        print(
            "apc conform: error: give --config FILE (a server to check) or --self (our own)", file=sys.stderr
        )
        return EXIT_USAGE
    if args.own and args.server:
        print("apc conform: error: --server is for --config, not --self", file=sys.stderr)
        return EXIT_USAGE
    try:
        return asyncio.run(_run(args, stdout))
    except conform_config.ConfigError as exc:
        print(f"apc conform: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except SetupError as exc:
        print(f"apc conform: cannot run: {exc}", file=sys.stderr)
        return EXIT_SETUP


async def _run(args: argparse.Namespace, stdout: TextIO) -> int:
    def show(result: Result) -> None:
        print(result.line(), file=stdout, flush=True)

    if args.own:
        from conform.selfserve import ServerStartError, own_server

        try:
            async with own_server(args.speed) as config:
                report = await run(_options(args, config), show)
        except ServerStartError as exc:
            raise SetupError(str(exc)) from None
    else:
        config = conform_config.load(args.config)
        if args.server:
            config = conform_config.ConformConfig(
                tuple(args.server), config.speed, config.group, config.actors
            )
        if not config.servers:
            raise conform_config.ConfigError(f"{args.config}: server.url: required unless --server is given")
        print(f"apc conform: checking {', '.join(config.servers)}", file=stdout, flush=True)
        report = await run(_options(args, config), show)
    _finish(report, args, stdout)
    return report.exit_code


def _options(args: argparse.Namespace, config: conform_config.ConformConfig) -> RunOptions:
    return RunOptions(config, tuple(args.only), args.schemas, args.slow, args.jobs, args.trace)


def _finish(report: Report, args: argparse.Namespace, stdout: TextIO) -> None:
    print("", file=stdout)
    print(report.header(), file=stdout)
    for line in report.summary():
        print(line, file=stdout)
    if args.json is not None:
        args.json.write_text(json.dumps(report.to_json(), indent=2) + "\n", encoding="utf-8")
    if args.junit is not None:
        args.junit.write_text(report.to_junit(), encoding="utf-8")


def _list(args: argparse.Namespace, stdout: TextIO) -> int:
    for check in checks(tuple(args.only)):
        covers = f"  covers {', '.join(check.covers)}" if check.covers else ""
        print(f"{check.name} ({check.section}){covers}", file=stdout)
    return EXIT_OK


def _print_setup(args: argparse.Namespace, stdout: TextIO) -> int:
    files = write_setup(args.print_setup, args.speed)
    print(
        f"wrote {files.processes}/ (the runner's processes), {files.org} (for apc serve),\n"
        f"{files.answers} (its scripted evaluator) and {files.conform} (for apc conform). Then:\n\n"
        f"  apc serve --config {files.org} --speed {args.speed:g}\n"
        f"  apc conform --config {files.conform}\n\n"
        "For another server: publish the processes with every role bound to one group, and fill in\n"
        f"the identities and server.speed of {files.conform}.",
        file=stdout,
    )
    return EXIT_OK
