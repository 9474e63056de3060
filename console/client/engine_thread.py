"""An event loop on a thread of its own for the embedded engine: the engine, its MCP endpoint and its
timers run there, so a key press in the console never waits behind engine work. A remote client's
MCP session runs on one too, and `apc demo` runs the whole demo on one.

The console's loop hands each call over (`await thread.run(coroutine)`): the answer, or the exception
the engine raised, comes back to the awaiting task; cancelling that task cancels the engine's side.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


class EngineThread:
    def __init__(self, name: str = "apc-engine") -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._serve, name=name, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        asyncio.set_event_loop(self.loop)
        try:
            self.loop.run_forever()
            left = asyncio.all_tasks(self.loop)
            for task in left:
                task.cancel()
            if left:
                self.loop.run_until_complete(asyncio.gather(*left, return_exceptions=True))
            self.loop.run_until_complete(self.loop.shutdown_asyncgens())
            self.loop.run_until_complete(self.loop.shutdown_default_executor())
        finally:
            asyncio.set_event_loop(None)
            self.loop.close()

    @property
    def alive(self) -> bool:
        return self._thread.is_alive()

    async def run(self, work: Coroutine[Any, Any, T]) -> T:
        """Run `work` on the engine's loop and wait for it from the caller's loop."""
        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(work, self.loop))

    async def stop(self) -> None:
        """Stop the loop (tasks still running there are cancelled) and wait for the thread to end."""
        if self._thread.is_alive():
            self.loop.call_soon_threadsafe(self.loop.stop)
            await asyncio.to_thread(self._thread.join)
