"""Network addresses: whether a host is this machine, for bind checks and development URLs."""

from __future__ import annotations

import ipaddress


def is_loopback(host: str) -> bool:
    """True for a bind address only this machine can reach."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False
