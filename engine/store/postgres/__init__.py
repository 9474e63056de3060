"""The PostgreSQL store, for several servers on one database: a bounded pool, row locks, LISTEN/NOTIFY.

`PostgresStore` is the store (`store`); `PostgresTransaction` is what a write request is handed
(`transaction`). Behind them: the outbox's statements (`outbox`).
"""

from engine.store.postgres.store import PostgresStore
from engine.store.postgres.transaction import PostgresTransaction

__all__ = ["PostgresStore", "PostgresTransaction"]
