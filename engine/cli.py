"""The `apc` command line for the engine: one registry of subcommands, one parser built from it.

A subcommand is a function decorated with `@command(...)`; its `arguments` callback adds its options.
Adding `serve`, `token` or `publish` means adding one such function, nothing else. The engine never
imports the console, so this module stays free of Textual.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from engine.datafolder import DataFolderInUse, FolderLock, default_data_dir
from engine.document import PROCESS_FILE, Loaded, load_path
from engine.http import serve
from engine.org import ConfigError, OrgConfig, new_token, token_digest
from engine.store.urls import redacted

Runner = Callable[[argparse.Namespace], int]

EXIT_OK = 0
EXIT_INVALID = 1
EXIT_USAGE = 2


@dataclass(frozen=True)
class Command:
    name: str
    help: str
    description: str
    arguments: Callable[[argparse.ArgumentParser], None]
    run: Runner
    epilog: str | None = None


COMMANDS: dict[str, Command] = {}


def command(
    name: str,
    *,
    help: str,
    description: str,
    arguments: Callable[[argparse.ArgumentParser], None],
    epilog: str | None = None,
) -> Callable[[Runner], Runner]:
    """Register a subcommand: `help` is its line in `apc --help`, `description` heads `apc NAME --help`."""

    def register(run: Runner) -> Runner:
        COMMANDS[name] = Command(name, help, description, arguments, run, epilog)
        return run

    return register


class UsageError(Exception):
    """A problem with how the command was called (exit status 2), not with what it was given."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="apc",
        description="apc: an Agent Process (core-2) server and operator console.",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", title="commands")
    for spec in COMMANDS.values():
        sub = subparsers.add_parser(
            spec.name,
            help=spec.help,
            description=spec.description,
            epilog=spec.epilog,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        spec.arguments(sub)
        sub.set_defaults(run=spec.run)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run one subcommand and return its exit status; usage errors return 2 (help goes to stdout, 0)."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as stop:
        return stop.code if isinstance(stop.code, int) else EXIT_USAGE
    run: Runner | None = getattr(args, "run", None)
    if run is None:
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    try:
        return run(args)
    except UsageError as error:
        print(f"apc {args.command}: error: {error}", file=sys.stderr)
        return EXIT_USAGE


def _validate_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "paths",
        nargs="+",
        type=Path,
        metavar="PATH",
        help=f"a {PROCESS_FILE} file, or a process folder holding one (the folder name must equal the name)",
    )
    parser.add_argument(
        "--json",
        action="store_true",
        help="print one JSON array, one object per path: path, ok, name, contentHash, profiles, issues, warnings",
    )
    parser.add_argument(
        "--strict",
        action="store_true",
        help="treat warnings as issues: a document with any warning is invalid (exit 1)",
    )


@command(
    "validate",
    help=f"check {PROCESS_FILE} files against every rule of the specification and its profiles",
    description=(
        f"Check each {PROCESS_FILE} (or process folder) against spec §2 and the parallel and check\n"
        "profiles, and report every issue at once, one per line as 'path: message'.\n"
        "A valid document also shows its content hash and the profiles it needs. Warnings name what\n"
        "the specification does not refuse but an author almost surely did not mean; they are listed\n"
        "apart ('warning: path: message') and do not make a document invalid unless --strict.\n"
        "Other files (a README, files that are not .md) are skipped with a note on stderr."
    ),
    epilog=(
        "exit status:\n"
        "  0  every document is valid (it may have warnings, unless --strict)\n"
        "  1  at least one document has issues (or, with --strict, warnings)\n"
        "  2  usage error: no path given, a path that does not exist or cannot be read, or\n"
        "     nothing left to validate once the skipped files are set aside\n\n"
        "examples:\n"
        "  apc validate sample_processes/*\n"
        "  apc validate --json path/to/PROCESS.md"
    ),
    arguments=_validate_arguments,
)
def validate_command(args: argparse.Namespace) -> int:
    paths: list[Path] = args.paths
    for path in paths:
        _require_readable(path)
    skipped = 0
    for path in paths:
        reason = not_a_process(path)
        if reason is not None:
            print(f"apc validate: skipped {path}: {reason}", file=sys.stderr)
            skipped += 1
    if skipped == len(paths):
        raise UsageError("nothing to validate: every path was skipped")
    results = [(path, load_path(path)) for path in paths if not_a_process(path) is None]
    strict: bool = args.strict
    if args.json:
        json.dump([_json_result(path, loaded, strict) for path, loaded in results], sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        _print_results(results, strict, sys.stdout, skipped)
    return EXIT_OK if all(_passes(loaded, strict) for _, loaded in results) else EXIT_INVALID


def _passes(loaded: Loaded, strict: bool) -> bool:
    return loaded.ok and not (strict and loaded.warnings)


def not_a_process(path: Path) -> str | None:
    """Why a path is no process document, or None. A glob such as `sample_processes/*` also matches
    a folder's README and data files: those are skipped, and say so, rather than failing."""
    if path.is_dir() or path.name == PROCESS_FILE:
        return None
    if path.name.lower() == "readme.md":
        return "a README, not a process document"
    if path.suffix.lower() != ".md":
        return f"not a {PROCESS_FILE} or .md file"
    return None


def _require_readable(path: Path) -> None:
    """A path that is not there, or a file that cannot be opened, is the caller's mistake: exit 2."""
    if path.is_dir():
        return
    if not path.exists():
        raise UsageError(f"no such file or folder: {path}")
    try:
        with path.open("rb"):
            pass
    except OSError as error:
        raise UsageError(f"cannot read {path}: {error.strerror or error}") from error


def _json_result(path: Path, loaded: Loaded, strict: bool) -> dict[str, object]:
    return {
        "path": str(path),
        "ok": _passes(loaded, strict),
        "name": loaded.name,
        "contentHash": loaded.content_hash,
        "profiles": sorted(loaded.profiles),
        "issues": [{"path": issue.path, "message": issue.message} for issue in loaded.issues],
        "warnings": [{"path": warning.path, "message": warning.message} for warning in loaded.warnings],
    }


def _count(n: int, what: str) -> str:
    return f"{n} {what}{'s' if n != 1 else ''}"


def _print_results(results: list[tuple[Path, Loaded]], strict: bool, out: TextIO, skipped: int = 0) -> None:
    for path, loaded in results:
        warned = f"; {_count(len(loaded.warnings), 'warning')}" if loaded.warnings else ""
        if _passes(loaded, strict):
            profiles = ", ".join(sorted(loaded.profiles)) or "none"
            out.write(
                f"{path}: valid: {loaded.name} (profiles: {profiles}; content hash {loaded.content_hash})"
                f"{warned}\n"
            )
        else:
            out.write(f"{path}: invalid: {_count(len(loaded.issues), 'issue')}{warned}\n")
        for issue in loaded.issues:
            out.write(f"  {issue}\n")
        for warning in loaded.warnings:
            out.write(f"  warning: {warning}\n")
    if len(results) > 1 or skipped:
        valid = sum(1 for _, loaded in results if _passes(loaded, strict))
        warnings = sum(len(loaded.warnings) for _, loaded in results)
        warned = f", {_count(warnings, 'warning')}" if warnings else ""
        out.write(
            f"{valid} valid, {len(results) - valid} invalid{f', {skipped} skipped' if skipped else ''}{warned}\n"
        )


command(
    "serve",
    help=serve.HELP,
    description=serve.DESCRIPTION,
    epilog=serve.EPILOG,
    arguments=serve.add_arguments,
)(serve.run)


def _token_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", choices=["new"], help="new: print a fresh token and its config line")


@command(
    "token",
    help="make a credential: 'apc token new' prints a token and its config line",
    description=(
        "Print a fresh random bearer token, then the token_sha256 line to put in the org config entry\n"
        "([[people]] or [[agents]]) of whoever receives it. The token is shown once; the config keeps only\n"
        "its digest, so a leaked config file does not leak a working credential."
    ),
    arguments=_token_arguments,
)
def token_command(args: argparse.Namespace) -> int:
    token = new_token()
    sys.stdout.write(f'token: {token}\ntoken_sha256 = "{token_digest(token)}"\n')
    return EXIT_OK


def _db_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "action",
        choices=["upgrade", "copy"],
        help="upgrade: apply pending schema migrations; copy: move an organization's data to PostgreSQL",
    )
    serve.add_database_argument(parser)
    parser.add_argument("--config", type=Path, metavar="ORG.toml", help="upgrade: its [server] database")
    parser.add_argument("--data", type=Path, metavar="DIR", help="upgrade: the SQLite data folder")
    parser.add_argument(
        "--from", dest="source", metavar="sqlite:PATH", help="copy: a data folder or its engine.db"
    )
    parser.add_argument(
        "--to", dest="target", type=serve.database_url, metavar="URL", help="copy: an empty database"
    )
    parser.add_argument(
        "--files", type=Path, metavar="DIR", help="copy: also copy the uploads into this folder"
    )


@command(
    "db",
    help="the store's schema and data: 'apc db upgrade', 'apc db copy --from sqlite:PATH --to URL'",
    description=(
        "upgrade: apply the schema migrations this version has and the store lacks (apc serve does this\n"
        "at start unless --no-migrate), under the database's lock, so it is safe while servers start.\n"
        "The store is --database (or $APC_DATABASE_URL), else the --config file's [server] database,\n"
        "else SQLite in --data (default: the usual data folder).\n"
        "copy: copy an organization's data from a SQLite data folder into an empty PostgreSQL database\n"
        "(with --files DIR, its uploads into the shared files folder too). Stop the server first."
    ),
    arguments=_db_arguments,
)
def db_command(args: argparse.Namespace) -> int:
    # Imported here: the database drivers load only for the command that uses them.
    import asyncio

    from engine.store.base import StoreUnavailable
    from engine.store.copy import CopyRefused
    from engine.store.migrations import SchemaError

    try:
        message = asyncio.run(_upgrade(args) if args.action == "upgrade" else _copy(args))
    except (ConfigError, SchemaError, StoreUnavailable, CopyRefused, DataFolderInUse, OSError) as error:
        print(f"apc db {args.action}: {error}", file=sys.stderr)
        return EXIT_INVALID
    print(message)
    return EXIT_OK


async def _upgrade(args: argparse.Namespace) -> str:
    from engine.store.migrations import SCHEMA_VERSION
    from engine.store.postgres import PostgresStore
    from engine.store.sqlite import SqliteStore

    url = serve.database_from(args)
    if url is None and args.config is not None:
        url = OrgConfig.load(args.config).server.database
    if url is not None:
        store = await PostgresStore.open(url)
        await store.close()
        return f"{redacted(url)}: at schema {SCHEMA_VERSION}"
    data = args.data or default_data_dir()
    lock = FolderLock.acquire(data)
    try:
        opened = await SqliteStore.open(data / "engine.db")
        await opened.close()
    finally:
        lock.release()
    return f"{data / 'engine.db'}: at schema {SCHEMA_VERSION}"


async def _copy(args: argparse.Namespace) -> str:
    from engine.store.copy import sqlite_to_postgres

    if args.source is None or not args.source.startswith("sqlite:") or args.target is None:
        raise UsageError("copy needs --from sqlite:PATH and --to postgresql://...")
    path = Path(args.source.removeprefix("sqlite:"))
    folder = path if path.is_dir() else path.parent
    database = folder / "engine.db" if path.is_dir() else path
    if not database.is_file():
        raise ConfigError(f"{database}: no such SQLite database")
    lock = FolderLock.acquire(folder)
    try:
        copied = await sqlite_to_postgres(database, args.target)
        if args.files is not None and (folder / "files").is_dir():
            shutil.copytree(folder / "files", args.files, dirs_exist_ok=True)
    finally:
        lock.release()
    lines = [f"copied {database} to {redacted(args.target)}:"]
    lines += [f"  {table}: {n} rows" for table, n in copied.rows.items()]
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
