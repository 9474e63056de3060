"""Who this engine has told of something, counted per person as its writes become durable.

Every change a person should hear of (new work for them or their group, an escalation, an item gone
overdue) is a notification naming them, written in the transaction of the change. Counting those per
person, once the transaction has committed, gives a caller in the same process a cheap sign that a
person's work changed: a worker that would otherwise read their queue again and again to find out
reads it only when the count moved. Other servers on a shared database are not counted.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from engine.store.state import Notification


class Told:
    def __init__(self) -> None:
        self._counts: Counter[str] = Counter()

    def count(self, person: str) -> int:
        """The notifications naming `person` this engine has committed since it opened."""
        return self._counts[person]

    def heard(self, notes: Iterable[Notification]) -> None:
        """Count `notes` once their write is durable, never before: a reader told early could read
        before the commit, miss the change, and not be told again."""
        for note in notes:
            self._counts.update(note.recipients)
