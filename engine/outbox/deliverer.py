"""The deliverer: POSTs due deliveries to their targets, retries with exponential backoff, gives up after
a bound, and keeps all of that in the store, so a restart goes on where it stopped.

It runs beside the server as a background task and never inside a tool call: a slow or dead receiver
delays nothing but its own notifications. Each round claims due rows (`Store.claim_deliveries`, an
owner and a lease), POSTs them concurrently, and records each outcome only if the claim is still its
own. A server that dies mid-POST leaves its rows to be claimed again when the lease ends, so delivery
is at least once; `X-Apc-Notification` lets a receiver drop a repeat. Times come from the engine's
clock, so tests move a ManualClock instead of sleeping through the backoff.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import secrets
import socket
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import timedelta

import httpx

from engine.clock import Clock
from engine.notify import NotifyTarget
from engine.outbox import message
from engine.store.base import AttemptResult, Delivery, Store
from engine.store.state import stamp

log = logging.getLogger("engine.outbox")

RETRY_STATUSES = frozenset({408, 425, 429})
"""Besides 5xx, the answers that say "later", not "never"."""
ERROR_BODY_CHARS = 200


@dataclass(frozen=True)
class RetryPolicy:
    first_retry_seconds: float = 30.0
    max_retry_seconds: float = 3600.0
    max_attempts: int = 10
    """After this many failed attempts a delivery is given up (about three hours with the defaults)."""
    timeout_seconds: float = 10.0
    lease_seconds: float = 120.0
    """How long a claim lasts: longer than an attempt can take, so only a dead owner's claim lapses."""
    batch: int = 16

    def retry_after(self, attempts: int) -> timedelta:
        """The wait after the `attempts`-th failure: doubling from the first retry, capped."""
        seconds = self.first_retry_seconds * 2 ** max(attempts - 1, 0)
        return timedelta(seconds=min(seconds, self.max_retry_seconds))


OnResult = Callable[[Delivery, AttemptResult], None]


def new_owner() -> str:
    """This process's name on its claims: host, pid and a random part (a pid can be reused)."""
    return f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(4)}"


class Deliverer:
    def __init__(
        self,
        store: Store,
        targets: Sequence[NotifyTarget],
        clock: Clock,
        *,
        http: httpx.AsyncClient | None = None,
        owner: str | None = None,
        policy: RetryPolicy | None = None,
        poll_seconds: float = 1.0,
        on_result: OnResult | None = None,
    ) -> None:
        self.store = store
        self.targets = {target.url: target for target in targets}
        self.clock = clock
        self.owner = owner or new_owner()
        self.policy = policy or RetryPolicy()
        self.poll_seconds = poll_seconds
        self.on_result = on_result
        self._own_http = http is None
        self._http = http or httpx.AsyncClient(follow_redirects=False)
        self._task: asyncio.Task[None] | None = None

    async def run_once(self) -> list[tuple[Delivery, AttemptResult]]:
        """Claim what is due now and attempt each; what each attempt came to, in claim order."""
        now = self.clock.now()
        claimed = await self.store.claim_deliveries(
            self.owner,
            stamp(now),
            stamp(now + timedelta(seconds=self.policy.lease_seconds)),
            self.policy.batch,
        )
        results = await asyncio.gather(*(self._attempt(delivery) for delivery in claimed))
        return [(d, r) for d, r in zip(claimed, results, strict=True) if r is not None]

    async def _attempt(self, delivery: Delivery) -> AttemptResult | None:
        try:
            target = self.targets.get(delivery.target)
            error: str | None
            if target is None:
                error, retry = "no [[notify]] table has this url any more", False
            else:
                error, retry = await self._post(target, delivery)
            result = self._result(delivery, error, retry)
            if not await self.store.record_attempt(delivery, self.owner, result):
                log.warning("notification %s: the claim lapsed before the attempt ended", delivery.id)
                return None
        except Exception:
            log.exception("notification delivery %s failed", delivery.id)
            return None
        _log(delivery, result)
        if self.on_result is not None:
            self.on_result(delivery, result)
        return result

    async def _post(self, target: NotifyTarget, delivery: Delivery) -> tuple[str | None, bool]:
        """None when the target took it; else the error and whether trying later may help."""
        note = delivery.notification
        content = message.body(note, target.format)
        timestamp = int(self.clock.now().timestamp())
        headers = message.headers(note, delivery.id, content, target.secret, timestamp)
        try:
            async with self._http.stream(
                "POST", target.url, content=content, headers=headers, timeout=self.policy.timeout_seconds
            ) as response:
                if response.is_success:
                    return None, False
                text = await _start_of(response)
        except httpx.TimeoutException:
            return f"no answer within {self.policy.timeout_seconds:g} s", True
        except httpx.HTTPError as exc:
            return f"{exc.__class__.__name__}: {exc}" if str(exc) else exc.__class__.__name__, True
        status = response.status_code
        error = f"HTTP {status} {response.reason_phrase}".rstrip() + (f": {text}" if text else "")
        return error, status >= 500 or status in RETRY_STATUSES

    def _result(self, delivery: Delivery, error: str | None, retry: bool) -> AttemptResult:
        now = self.clock.now()
        if error is None:
            return AttemptResult("delivered", stamp(now))
        if retry and delivery.attempts < self.policy.max_attempts:
            later = now + self.policy.retry_after(delivery.attempts)
            return AttemptResult("pending", stamp(now), error, stamp(later))
        return AttemptResult("given_up", stamp(now), error)

    async def run(self) -> None:
        """Deliver until cancelled; a round that fails is logged and the next one comes."""
        while True:
            done = 0
            try:
                done = len(await self.run_once())
            except Exception:
                log.exception("claiming notifications failed")
            if done < self.policy.batch:
                await asyncio.sleep(self.poll_seconds)

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self.run(), name="apc-outbox")

    async def aclose(self) -> None:
        """Stop delivering (an attempt in flight is cut; its claim lapses and it is tried again)."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        if self._own_http:
            await self._http.aclose()


async def _start_of(response: httpx.Response) -> str:
    """The first characters of an error answer, read without taking a large body into memory."""
    read = b""
    async for chunk in response.aiter_bytes():
        read += chunk
        if len(read) >= ERROR_BODY_CHARS:
            break
    return " ".join(read[:ERROR_BODY_CHARS].decode(errors="replace").split())


def _log(delivery: Delivery, result: AttemptResult) -> None:
    note = delivery.notification
    what = f"{note.kind} {note.id} to {delivery.target}"
    if result.state == "delivered":
        log.info("notification %s delivered (attempt %d)", what, delivery.attempts)
    elif result.state == "pending":
        log.warning("notification %s failed (attempt %d): %s", what, delivery.attempts, result.error)
    else:
        log.error("notification %s given up after %d attempts: %s", what, delivery.attempts, result.error)
