"""Database URLs: which store one names, and how to show one without its password."""

from __future__ import annotations

import re
from urllib.parse import urlsplit, urlunsplit


def is_postgres_url(url: str) -> bool:
    return url.startswith(("postgresql://", "postgres://"))


def redacted(url: str) -> str:
    """The URL with its password (in the address or as `password=` in the query) replaced by `***`."""
    parts = urlsplit(url)
    netloc = parts.netloc
    if parts.password is not None:
        user, _, host = netloc.rpartition("@")
        netloc = f"{user.split(':', 1)[0]}:***@{host}"
    query = re.sub(r"(?i)(password=)[^&]*", r"\1***", parts.query)
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))
