"""The rows both stores read alike: the columns a query selects, and the record each row makes.

The two stores hold the same tables (`migrations`) and differ only in their placeholders and drivers,
so a version, a notification and a delivery come back from either as the same record.
"""

from __future__ import annotations

import json
from typing import Any

from engine.store.base import Delivery, VersionRecord
from engine.store.state import Notification

VERSION_COLS = "name, version, content_hash, text, bindings, published_at, description, inputs, requires"
NOTE_COLS = "o.id, o.kind, o.run_id, o.process, o.step_id, o.recipients, o.at, o.test, o.work_item, o.outcome"
DELIVERY_COLS = (
    "d.id, d.target, d.state, d.attempts, d.next_at, d.last_error, d.delivered_at, d.given_up_at, "
    + NOTE_COLS
)
DELIVERIES = f"SELECT {DELIVERY_COLS} FROM deliveries d JOIN outbox o ON o.seq = d.notification_seq"


def version_record(row: Any) -> VersionRecord:
    return VersionRecord(
        row[0],
        row[1],
        row[2],
        row[3],
        json.loads(row[4]),
        row[5],
        row[6],
        json.loads(row[7]),
        None if row[8] is None else json.loads(row[8]),
    )


def notification_of(row: Any) -> Notification:
    return Notification(
        id=row[0],
        kind=row[1],
        run_id=row[2],
        process=row[3],
        step_id=row[4],
        recipients=tuple(json.loads(row[5])),
        at=row[6],
        test=bool(row[7]),
        work_item=row[8],
        outcome=row[9],
    )


def delivery_of(row: Any) -> Delivery:
    return Delivery(
        id=row[0],
        notification=notification_of(row[8:]),
        target=row[1],
        state=row[2],
        attempts=row[3],
        next_at=row[4],
        last_error=row[5],
        delivered_at=row[6],
        given_up_at=row[7],
    )
