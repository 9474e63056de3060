"""`apc token new`: a fresh bearer token, and the digest line the org config keeps instead of it.

The config stores only `token_sha256`, so a leaked config file does not leak a working credential;
the token itself is shown once, to hand to the agent or person it is for.
"""

from __future__ import annotations

import argparse
import secrets
import sys

from engine.auth import token_digest

HELP = "make a credential: 'apc token new' prints a token and its config line"
DESCRIPTION = (
    "Print a fresh random bearer token, then the token_sha256 line to put in the org config entry\n"
    "([[people]] or [[agents]]) of whoever receives it. The token is shown once; the config keeps only\n"
    "its digest."
)

TOKEN_PREFIX = "apc_"
TOKEN_BYTES = 32


def new_token() -> str:
    """256 random bits, URL-safe, with a prefix that makes a leaked token easy to recognise."""
    return TOKEN_PREFIX + secrets.token_urlsafe(TOKEN_BYTES)


def config_line(token: str) -> str:
    return f'token_sha256 = "{token_digest(token)}"'


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", choices=["new"], help="new: print a fresh token and its config line")


def run(args: argparse.Namespace) -> int:
    token = new_token()
    sys.stdout.write(f"token: {token}\n{config_line(token)}\n")
    return 0
