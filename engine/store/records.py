"""Step records measured once: their size (as the run-data cap counts it) and their digest.

A write checks the run-data cap and a run view carries a snapshot (a hash of the run data); both used
to serialise the whole run data on every call, a megabyte for a full run. A step record is never
edited once made (`Run.data`), and the store hands the same record objects to the next write of its
run, so each record is serialised once, here, and what the next call needs is looked up: its compact
UTF-8 size and the SHA-256 of its canonical text, remembered while the record stays among the
`MEMO_BYTES` most recently measured (the memo holds the record, so its `id` cannot be reused).
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


def compact(value: Any) -> str:
    """JSON text as the engine stores it: run documents, step records, log details, replay records.

    pydantic-core's serialiser, two to three times as fast as `json`'s C encoder (a write stores four or
    five texts). Its text is `json`'s but for a float's exponent (`0.00001` for `1e-05`, `1e-7` for
    `1e-07`: the same float read back). What JSON cannot carry is refused as before: pydantic-core writes
    a NaN or an infinity as a bare `NaN` or `Infinity`, so a text holding those words is `json`'s instead
    (which raises, or writes the same text when a string held them), and so is a value pydantic-core
    refuses (an object it does not know; a lone surrogate, which `json` writes). Bytes, sets or
    dataclasses it would write; no value the engine stores holds one.
    """
    try:
        text = _to_json(value)
    except ValueError:  # PydanticSerializationError
        return counted(value)
    # Most texts hold neither capital, and a one-byte search is several times faster than the words'.
    if (b"N" in text or b"I" in text) and (b"NaN" in text or b"Infinity" in text):
        return counted(value)
    return text.decode()


class _Memo:
    def __init__(self) -> None:
        self._lock = threading.Lock()  # engines on several threads (the embedded console, tests)
        self._entries: OrderedDict[int, tuple[Any, int, bytes]] = OrderedDict()
        self._bytes = 0

    def get(self, record: Any) -> tuple[int, bytes] | None:
        with self._lock:
            hit = self._entries.get(id(record))
            if hit is None or hit[0] is not record:
                return None
            self._entries.move_to_end(id(record))
            return hit[1], hit[2]

    def put(self, record: Any, size: int, digest: bytes) -> None:
        with self._lock:
            old = self._entries.pop(id(record), None)
            if old is not None:
                self._bytes -= old[1]
            self._entries[id(record)] = (record, size, digest)
            self._bytes += size
            while self._bytes > MEMO_BYTES and self._entries:
                _, (_, dropped, _) = self._entries.popitem(last=False)
                self._bytes -= dropped


_memo = _Memo()


def measure(value: Any, *, record: bool = True) -> tuple[int, bytes]:
    """(compact UTF-8 size, SHA-256 of the canonical text) of a JSON value: canonical text is compact
    with sorted keys, so its length is the compact size too. Only a step `record` is remembered (a
    run's inputs are a new object on every read)."""
    hit = _memo.get(value) if record else None
    if hit is not None:
        return hit
    text = canonical(value).encode()
    size, digest = len(text), hashlib.sha256(text).digest()
    if record:
        _memo.put(value, size, digest)
    return size, digest


def copied(value: Any) -> Any:
    """A JSON value with its objects and arrays copied (strings and numbers are immutable: shared), so
    whoever holds the copy can edit it without touching the original."""
    kind = type(value)
    if kind is dict:
        return {key: copied(item) for key, item in value.items()}
    if kind is list:
        return [copied(item) for item in value]
    return value
