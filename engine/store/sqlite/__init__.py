"""The SQLite store, for one server on a local data folder: WAL, one writer that group-commits, one
reader connection.

`SqliteStore` is the store (`store`); `SqliteTransaction` is what a write request is handed
(`transaction`). Behind them: the writer (`writer`), its memory of runs (`cache`) and the outbox's
statements (`outbox`).
"""

from engine.store.sqlite.store import PRAGMAS, SqliteStore, connect, connect_read_only
from engine.store.sqlite.transaction import SqliteTransaction

__all__ = ["PRAGMAS", "SqliteStore", "SqliteTransaction", "connect", "connect_read_only"]
