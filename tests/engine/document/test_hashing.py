"""Content hash: SHA-256 over RFC 8785 JSON of the frontmatter, one newline, the body bytes.

Expected values come from canonical JSON written out by hand, never from the rfc8785 package.
"""

import hashlib

from engine.document.hashing import content_hash
from engine.document.parse import parse_document


def _sha256(canonical_json: str, body: str) -> str:
    return hashlib.sha256(canonical_json.encode("utf-8") + b"\n" + body.encode("utf-8")).hexdigest()


def test_hash_of_a_small_document_matches_a_value_computed_outside_python() -> None:
    frontmatter = {
        "name": "supplier-check",
        "steps": [{"id": "check", "agent": "Check it."}, {"id": "done", "finish": "ok"}],
        "description": "Check a supplier.",
    }
    # printf '%s\n%s' '<canonical json>' $'# Supplier check\n' | sha256sum
    assert (
        content_hash(frontmatter, "# Supplier check\n")
        == "1790436b32a36a2f615255fd498fe247e05b693f56d72c1045ba20e76c3e8e9a"
    )


def test_empty_frontmatter_and_body_hash_the_braces_and_the_newline() -> None:
    assert content_hash({}, "") == "ca3d163bab055381827226140568f3bef7eaac187cebd76878e0b63e9e442356"


def test_canonical_json_orders_keys_by_utf16_and_writes_numbers_and_strings_the_rfc_8785_way() -> None:
    frontmatter = {
        "z": 1.0,
        "\ufb01": "ligature key",
        "\U0001f600": "emoji key",
        "é": 'café/"q"\\\n\u001f\x7f',
        "a": [1e21, 1e-7, 0.000001, -0.0, 9007199254740991, 123.456],
        "e": [],
        "d": {},
        "c": None,
        "b": True,
    }
    canonical = (
        '{"a":[1e+21,1e-7,0.000001,0,9007199254740991,123.456],"b":true,"c":null,"d":{},"e":[],"z":1,'
        '"é":"café/\\"q\\"\\\\\\n\\u001f\x7f","😀":"emoji key","ﬁ":"ligature key"}'
    )
    body = "Trailing spaces   \n\tünïcödé — ends without a newline"
    assert content_hash(frontmatter, body) == _sha256(canonical, body)


def test_the_body_counts_byte_for_byte() -> None:
    frontmatter = {"name": "a"}
    hashes = {
        content_hash(frontmatter, body) for body in ("text\n", "text \n", "text", "text\r\n", "\ntext\n")
    }
    assert len(hashes) == 5
    assert content_hash(frontmatter, "text \r\n") == _sha256('{"name":"a"}', "text \r\n")


def test_yaml_layout_and_comments_do_not_change_the_hash() -> None:
    block = "---\n# a comment\nname: a\ninputs:\n  n: number   # trailing\nsteps:\n  - id: s\n    finish: ok\n---\nBody \n"
    flow = '---\n{steps: [{finish: ok, id: s}], "inputs": {n: number}, name: a}\n---\nBody \n'
    first, second = parse_document(block), parse_document(flow)
    assert first.issues == second.issues == ()
    assert first.frontmatter is not None and second.frontmatter is not None
    assert first.body is not None and second.body is not None
    canonical = '{"inputs":{"n":"number"},"name":"a","steps":[{"finish":"ok","id":"s"}]}'
    assert content_hash(first.frontmatter, first.body) == _sha256(canonical, "Body \n")
    assert content_hash(second.frontmatter, second.body) == _sha256(canonical, "Body \n")


def test_the_hash_is_64_lowercase_hex_digits() -> None:
    digest = content_hash({"name": "A"}, "")
    assert len(digest) == 64
    assert set(digest) <= set("0123456789abcdef")
