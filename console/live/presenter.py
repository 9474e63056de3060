"""The presenter controls of a live demo, as the console drives them: the demo hands a `Presenter` to
the session (in-process for `apc demo`, over the demo server's `apc_demo_control` for each browser tab
of `apc demo --web`), and the console binds its keys and shows its state in the header. Without one,
none of it appears."""

from __future__ import annotations

from typing import Protocol


class Presenter(Protocol):
    @property
    def paused(self) -> bool:
        """Whether the demo world stands still (as last read)."""
        ...

    @property
    def speed(self) -> float:
        """The demo clock's speed, times real time (as last read)."""
        ...

    @property
    def moments(self) -> list[tuple[str, str]]:
        """The stage menu: each moment's name and title."""
        ...

    async def control(self, action: str, arguments: dict[str, str]) -> tuple[bool, str]:
        """Do `action` (pause, resume, faster, slower, leave, stage); whether it was done, and what
        to tell the presenter."""
        ...
