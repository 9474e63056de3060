"""Step records measured once: their size (as the run-data cap counts it) and their digest.

A write checks the run-data cap and a run view carries a snapshot (a hash of the run data); each
serialising the whole run data would cost every call the size of its run. A step record is never
edited once made (`Run.data`), and the store hands the same record objects to the next write of its
run, so each record is serialised once, here, and what the next call needs is looked up: its compact
UTF-8 size and the SHA-256 of its canonical text, remembered while the record stays among the
`MEMO_BYTES` most recently measured (the memo holds the record, so its `id` cannot be reused).

A record with a large value (a submitted output) is measured when it is made (`Machine.record`), in the
write that checked its fields against the cap (`text_of`), so that value is encoded once for both; any
other record, by the first write that needs its measures. The kept texts are the process's, shared by
its engines: one engine's record made in between drops another's, which is then only encoded again.
"""

from __future__ import annotations

import hashlib
import json
import json.encoder
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import pydantic_core

MEMO_BYTES = 16_000_000
TEXTS_BYTES = 4_000_000
"""At most this much text kept (`text_of`): a refused submission's stays until the next record is made."""
KEEP_OVER = 4096
"""A value's text is kept (`text_of`) when longer than this: a shorter one is written again in microseconds."""


def _encoder(*, sort_keys: bool) -> Callable[[Any], str]:
    """`JSONEncoder(...).encode` for compact UTF-8 JSON with no NaN, made once: that method builds its C
    encoder again on every call, and checks every object for a cycle (a write encodes about eight
    values, each read from JSON or built from such: none holds a cycle)."""
    python = json.JSONEncoder(
        sort_keys=sort_keys, separators=(",", ":"), ensure_ascii=False, allow_nan=False, check_circular=False
    )
    make = getattr(json.encoder, "c_make_encoder", None)  # None: a Python without the C accelerator
    if make is None:
        return python.encode
    encode = make(
        None, python.default, json.encoder.encode_basestring, None, ":", ",", sort_keys, False, False
    )

    def _json_text(value: Any) -> str:  # the name says JSON to `bench/engine_throughput.py --profile`
        return "".join(encode(value, 0))

    return _json_text


counted = _encoder(sort_keys=False)
"""Compact JSON text as Python's `json` writes it: what the run-data cap counts (`canonical` text has
the same length)."""
canonical = _encoder(sort_keys=True)
"""Compact with sorted keys: one text per value, for digests and fingerprints."""
_to_json = pydantic_core.to_json
_quoted = json.encoder.encode_basestring  # what `canonical` writes a text with


def compact(value: Any) -> str:
    """JSON text as the engine stores it: run documents, step records, log details, replay records.

    pydantic-core's serialiser, faster than `json`'s C encoder (and a write stores several texts). Its
    text is `json`'s but for a float's exponent (`0.00001` for `1e-05`, `1e-7` for `1e-07`: the same
    float read back). What JSON cannot carry is refused as `json` refuses it: pydantic-core writes a NaN
    or an infinity as a bare `NaN` or `Infinity`, so a text holding those words is `json`'s instead
    (which raises, or writes the same text when a string held them), and so is a value pydantic-core
    refuses (an object it does not know; a lone surrogate, which `json` writes). Bytes, sets or
    dataclasses it would write; no value the engine stores holds one.
    """
    text = _fast_text(value)
    return counted(value) if text is None else text.decode()


def compact_bytes(value: Any) -> bytes:
    """`compact`'s text in UTF-8, for whoever needs its bytes (a large text's decoding and encoding
    again cost more than writing it, when it is not ASCII); a lone surrogate raises."""
    text = _fast_text(value)
    return counted(value).encode() if text is None else text


def _fast_text(value: Any) -> bytes | None:
    """pydantic-core's UTF-8 text of a value, None where it is not `json`'s (`compact`)."""
    try:
        text = _to_json(value)
    except ValueError:  # PydanticSerializationError
        return None
    # Most texts hold neither capital, and a one-byte search is cheaper than the words'.
    if (b"N" in text or b"I" in text) and (b"NaN" in text or b"Infinity" in text):
        return None
    return text


class _Memo:
    """Values remembered by object, the most recently used kept while their sizes add up to `budget`
    (an entry holds its object, so the object's `id` cannot be reused)."""

    def __init__(self, budget: int) -> None:
        self._budget = budget
        self._lock = threading.Lock()  # engines on several threads (the embedded console, tests)
        self._entries: OrderedDict[int, tuple[Any, int, Any]] = OrderedDict()
        self._bytes = 0

    def __bool__(self) -> bool:
        return bool(self._entries)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._bytes = 0

    def get(self, value: Any) -> Any:
        with self._lock:
            hit = self._entries.get(id(value))
            if hit is None or hit[0] is not value:
                return None
            self._entries.move_to_end(id(value))
            return hit[2]

    def put(self, value: Any, size: int, remembered: Any) -> None:
        with self._lock:
            old = self._entries.pop(id(value), None)
            if old is not None:
                self._bytes -= old[1]
            self._entries[id(value)] = (value, size, remembered)
            self._bytes += size
            while self._bytes > self._budget and self._entries:
                _, (_, dropped, _) = self._entries.popitem(last=False)
                self._bytes -= dropped


_memo = _Memo(MEMO_BYTES)
"""Each step record's (size, digest)."""
_texts = _Memo(TEXTS_BYTES)
"""The canonical text of a large value in a record about to be made (`text_of`), until it is (`made`)."""


def text_of(fields: dict[str, Any]) -> bytes:
    """The canonical UTF-8 text of the fields a step record is about to be made of: its size is what the
    run-data cap counts. A large `output` (what a caller makes large) has its text kept a moment, cut
    from this one, so that measuring the record made of it in the same write (`measure`) does not
    encode it again."""
    text = canonical(fields).encode()
    output = fields.get("output")
    if len(text) > KEEP_OVER and (type(output) is dict or type(output) is list):
        # `text` is `{before,"output":…,after}`: the items of the keys before and after it, by key.
        before = canonical({k: v for k, v in fields.items() if k < "output"}).encode()
        after = canonical({k: v for k, v in fields.items() if k > "output"}).encode()
        start = len(before) - 1 + (before != b"{}") + len(b'"output":')
        end = len(text) - (len(after) if after != b"{}" else 1)
        if end - start > KEEP_OVER:
            _texts.put(output, end - start, text[start:end])
    return text


def measure(value: Any, *, record: bool = True) -> tuple[int, bytes]:
    """(compact UTF-8 size, SHA-256 of the canonical text) of a JSON value: canonical text is compact
    with sorted keys, so its length is the compact size too. Only a step `record` is remembered (a
    run's inputs are a new object on every read); its text is made of its values' texts kept by
    `text_of`, when any are."""
    hit: tuple[int, bytes] | None = _memo.get(value) if record else None
    if hit is not None:
        return hit
    text = _composed(value) if record and _texts else None
    if text is None:
        text = canonical(value).encode()
    size, digest = len(text), hashlib.sha256(text).digest()
    if record:
        _memo.put(value, size, (size, digest))
    return size, digest


def made(record: dict[str, Any]) -> None:
    """A step record was just made: measured now if texts of values are kept (`text_of`; its own, unless
    another engine of the process kept them meanwhile), which all go then; otherwise the first write
    that needs its measures takes them."""
    if _texts:
        measure(record)
        _texts.clear()


def _composed(value: Any) -> bytes | None:
    """A JSON object's canonical text (what `canonical` writes: its items by key, compact) made of each
    value's text, a kept one or one written now; None for what is not an object with text keys
    (`canonical` turns other keys into text and would order them otherwise)."""
    if type(value) is not dict:
        return None
    try:
        items = [f"{_quoted(key)}:".encode() + _text(item) for key, item in sorted(value.items())]
    except TypeError:  # a key that is not text: not one of JSON's
        return None
    return b"{" + b",".join(items) + b"}"


def _text(value: Any) -> bytes:
    if type(value) is str:
        return _quoted(value).encode()
    text: bytes | None = _texts.get(value) if type(value) is dict or type(value) is list else None
    return canonical(value).encode() if text is None else text


def copied(value: Any) -> Any:
    """A JSON value with its objects and arrays copied (strings and numbers are immutable: shared), so
    whoever holds the copy can edit it without touching the original."""
    kind = type(value)
    if kind is dict:
        return {key: copied(item) for key, item in value.items()}
    if kind is list:
        return [copied(item) for item in value]
    return value
