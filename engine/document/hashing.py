"""The content hash of a published version (spec §6, immutability).

Hashing the parsed frontmatter in RFC 8785 form, not its text, makes the hash independent of YAML
layout and comments while the body, which people read, counts byte for byte.
"""

from __future__ import annotations

import hashlib
from typing import Any

import rfc8785


def content_hash(frontmatter: dict[str, Any], body: str) -> str:
    """Lowercase hex SHA-256 of canonical JSON frontmatter, one `\\n`, then the body's UTF-8 bytes."""
    digest = hashlib.sha256(rfc8785.dumps(frontmatter))
    digest.update(b"\n")
    digest.update(body.encode("utf-8"))
    return digest.hexdigest()
