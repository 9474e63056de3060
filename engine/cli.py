"""The `apc` command line for the engine: one registry of subcommands, one parser built from it.

A subcommand is a function decorated with `@command(...)`; its `arguments` callback adds its options.
Adding `serve`, `token` or `publish` means adding one such function, nothing else. The engine never
imports the console, so this module stays free of Textual.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from engine.document import PROCESS_FILE, Loaded, load_path
from engine.http import serve
from engine.org import new_token, token_digest

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


if __name__ == "__main__":
    sys.exit(main())
