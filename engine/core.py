"""The process server as an object: open a data folder, call tools, publish processes, apply timers.

The MCP endpoint and the console's embedded mode both hold one `Engine` and speak to it only through
`call` (plus the admin methods `publish` and `tick`, which the protocol leaves to the server).

The check profile's evaluator comes from the org's `[check]` table (or is handed in by a test); the
engine offers `check-1` only while it has one (check profile, preamble).
"""

from __future__ import annotations

import gc
import logging
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from engine.clock import Clock, ServerClock
from engine.datafolder import FolderLock, prepare, private_file
from engine.document.model import CHECK_PROFILE, PARALLEL_PROFILE
from engine.evaluator import CheckConfigError, Evaluator, build_evaluator
from engine.files import Files
from engine.identity import Identity
from engine.ids import IdSource, new_id
from engine.keys import SECRETS_FILE, SecretsError, ServerKeys, load_keys
from engine.org import ConfigError, OrgConfig
from engine.outbox import Deliverer
from engine.outbox.deliverer import OnResult
from engine.store.base import Delivery, Store, StoreUnavailable, Transaction, VersionRecord
from engine.store.sqlite import SqliteStore
from engine.store.state import Notification, parse_stamp, stamp
from engine.tools.catalog import Catalog, PublishResult, draft
from engine.tools.context import Context
from engine.tools.cursors import Cursors
from engine.tools.dispatch import TOOL_ORDER, Dispatcher
from engine.tools.leases import Leases
from engine.tools.replays import Replays
from engine.tools.run_log import run_log
from engine.tools.told import Told
from engine.tools.views import Views

log = logging.getLogger("engine")

DB_FILE = "engine.db"
LEGACY_FILE_URL_KEY = "file_url_secret"
"""Where a data folder from before the secrets file kept its link-signing key (see `_keys`)."""
YOUNG_OBJECTS = 10_000
"""New objects between two collections of the youngest generation in a process that serves writes
(`apc serve`, `collect_less`). Python's default, 700, collects about once a write call, each time
tracing what the calls in flight hold; reference counting frees almost all a write allocates, so
fewer, larger collections reclaim the same for less. The console sets its own thresholds: its frames
matter more to it than its writes."""


class Engine:
    def __init__(
        self,
        store: Store,
        org: OrgConfig,
        clock: Clock,
        files: Files,
        evaluator: Evaluator | None = None,
        *,
        owns_evaluator: bool = False,
        ids: IdSource = new_id,
        keys: ServerKeys | None = None,
        lock: FolderLock | None = None,
    ) -> None:
        self.store = store
        self.keys = keys or ServerKeys.generate()
        self._folder_lock = lock
        self.org = org
        self.clock = clock
        self.files = files
        self.evaluator = evaluator
        self._owns_evaluator = owns_evaluator
        self.tools: list[str] = list(TOOL_ORDER)
        self.catalog = Catalog(store)
        self.ctx = Context(
            store=store,
            org=org,
            clock=clock,
            files=files,
            catalog=self.catalog,
            views=Views(files.signed_url),
            cursors=Cursors(self.keys.cursor),
            replays=Replays(self.keys.replay),
            leases=Leases(self.keys.lease),
            tools=tuple(self.tools),
            profiles=(PARALLEL_PROFILE, CHECK_PROFILE) if evaluator is not None else (PARALLEL_PROFILE,),
            evaluator=evaluator,
            check_limits=org.check.limits,
            ids=ids,
        )
        self._dispatcher = Dispatcher(self.ctx)
        self.deliverer: Deliverer | None = None

    @classmethod
    async def open(
        cls,
        data_dir: Path,
        org: OrgConfig,
        *,
        clock: Clock | None = None,
        speed: float = 1.0,
        public_base_url: str = "http://127.0.0.1:8765",
        evaluator: Evaluator | None = None,
        ids: IdSource = new_id,
        monotonic: Callable[[], float] = time.monotonic,
        database: str | None = None,
        migrate: bool = True,
    ) -> Engine:
        """Open (or create) the data folder, with the evaluator that answers checks.

        The folder is owner-only and locked while the engine is open: a second engine on it gets
        `DataFolderInUse` naming the first one's pid.

        The evaluator is `evaluator` when given (the caller closes it), else the one the org's
        `[check]` table configures (the engine closes it). A `[check]` table that cannot give one (a
        missing key variable, an unreadable answers file) is a ConfigError, before anything opens.
        `ids` makes run, work item and file ids (random unless a caller needs them predictable).
        The server's keys come from the secrets file (`engine.keys`), created on first start.
        Without a `clock`, server time is a `ServerClock` at `speed`, resumed from the time the data
        folder last recorded, so it never goes backwards for this folder; it counts real time by
        `monotonic` (a test injects its own).
        """
        owns = evaluator is None
        if owns:
            try:
                evaluator = build_evaluator(org.check)
            except CheckConfigError as exc:
                raise ConfigError(str(exc)) from None
        lock: FolderLock | None = None
        store: Store | None = None
        try:
            prepare(data_dir)
            lock = FolderLock.acquire(data_dir)
            store = await _open_store(data_dir, org, database or org.server.database, migrate)
            keys = await _keys(store, org.server.secrets_file or data_dir / SECRETS_FILE)
        except BaseException:
            if store is not None:
                await store.close()
            if lock is not None:
                lock.release()
            if owns and evaluator is not None:
                await evaluator.aclose()
            raise
        if clock is None:
            mark = await store.server_time()
            clock = ServerClock(speed, None if mark is None else parse_stamp(mark), monotonic=monotonic)
        files = Files(org.server.files or data_dir / "files", store, keys.file_url, clock, public_base_url)
        engine = cls(store, org, clock, files, evaluator, owns_evaluator=owns, ids=ids, keys=keys, lock=lock)
        await engine.keep_clock_in_step()
        return engine

    @classmethod
    async def open_read_only(cls, data_dir: Path, org: OrgConfig, *, clock: Clock | None = None) -> Engine:
        """An existing data folder for reading only: nothing in it is created, written or locked.

        The store opens with SQLite's `mode=ro`, so timers due are applied in memory by each read and
        never written; nothing is published or delivered, and no check is evaluated. The secrets
        file is read when there is one (else the keys live only as long as this engine). A folder
        without a database is a FileNotFoundError: a read-only start never makes an organization.
        """
        db = data_dir / DB_FILE
        if not db.is_file():
            raise FileNotFoundError(f"{data_dir} holds no apc database ({DB_FILE})")
        store = await SqliteStore.open(db, read_only=True)
        try:
            path = org.server.secrets_file or data_dir / SECRETS_FILE
            if path.is_file():
                keys, _ = load_keys(path)
            else:
                legacy = await store.get_meta(LEGACY_FILE_URL_KEY)
                keys = ServerKeys.generate(file_url=None if legacy is None else bytes.fromhex(legacy))
            if clock is None:
                mark = await store.server_time()
                clock = ServerClock(1.0, None if mark is None else parse_stamp(mark))
        except SecretsError as exc:
            await store.close()
            raise ConfigError(str(exc)) from None
        except BaseException:
            await store.close()
            raise
        files = Files(data_dir / "files", store, keys.file_url, clock, "http://127.0.0.1")
        return cls(store, org, clock, files, keys=keys)

    async def process_text(self, name: str, version: int) -> str | None:
        """A published version's PROCESS.md text, for admin tools that draw or show it; None if unknown."""
        record = await self.store.get_version(name, version)
        return None if record is None else record.text

    @property
    def profiles(self) -> tuple[str, ...]:
        return self.ctx.profiles

    @property
    def told(self) -> Told:
        """Who this engine's committed writes told of something, counted per person (`engine.tools.told`)."""
        return self.ctx.told

    async def call(self, identity: Identity, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        return await self._dispatcher.call(identity, tool, arguments)

    async def run_log(self, identity: Identity, arguments: dict[str, Any]) -> dict[str, Any]:
        """`apc_run_log` (an extra tool): the run's log as of now, what is due applied first like
        `get_run` does."""
        await self.tick()
        return await run_log(self.ctx, identity, arguments)

    async def publish(self, source: Path, bind: dict[str, str]) -> PublishResult:
        """Check, bind and publish a process folder or PROCESS.md as its next version (spec §7)."""
        checked, issues = draft(source, bind, self.org, self.profiles, tuple(self.tools))
        if checked is None:
            return PublishResult(False, None, None, False, issues)
        process = checked.process

        async def request(tx: Transaction) -> PublishResult:
            latest = await tx.latest_version(checked.name)
            if latest is not None and (latest.content_hash, latest.bindings) == (
                checked.content_hash,
                checked.bindings,
            ):
                return PublishResult(True, checked.name, latest.version, False, [], checked.warnings)
            version = 1 if latest is None else latest.version + 1
            now = stamp(self.clock.now())
            record = VersionRecord(
                name=checked.name,
                version=version,
                content_hash=checked.content_hash,
                text=checked.text,
                bindings=checked.bindings,
                published_at=now,
                description=process.description,
                inputs=process.inputs_wire(),
                requires=None
                if process.requires_systems is None
                else {"systems": list(process.requires_systems)},
            )
            await tx.advance_clock(now)
            await tx.insert_version(record)
            return PublishResult(True, checked.name, version, True, [], checked.warnings)

        return await self.store.write(request)

    async def publish_config_processes(self) -> list[PublishResult]:
        return [await self.publish(entry.path, entry.bind) for entry in self.org.processes]

    async def tick(self) -> None:
        """Apply every timer due at the clock's now: waits, timeouts, `due`, lease ends."""
        await self.keep_clock_in_step()
        await self._dispatcher.apply_due(self.clock.now())

    async def keep_clock_in_step(self) -> None:
        """A sped-up server clock on a database other servers share moves on to the latest of theirs,
        so all of them issue one time line (at speed 1 every server's time is wall time already)."""
        if isinstance(self.clock, ServerClock) and self.clock.speed != 1.0 and not self.store.read_only:
            peer = await self.store.share_clock(self.clock.now(), self.clock.speed)
            if peer is not None:
                self.clock.catch_up(peer)

    async def notifications(self, run_id: str | None = None) -> list[Notification]:
        """The outbox: overdue steps, escalations, new work and ended runs; test runs' entries are marked
        and never delivered."""
        return await self.store.notifications(run_id)

    async def deliveries(self, run_id: str | None = None) -> list[Delivery]:
        """Every delivery of the outbox to a `[[notify]]` target: delivered, pending (attempts, last
        error, next try), given up (when, why) or held back (a test run's)."""
        return await self.store.deliveries(run_id)

    def start_delivery(self, on_result: OnResult | None = None) -> Deliverer:
        """Deliver the outbox to the org's `[[notify]]` targets in the background until `close`;
        `on_result` hears of each attempt (a console's activity log)."""
        if self.deliverer is None:
            self.deliverer = Deliverer(self.store, self.org.notify, self.clock, on_result=on_result)
            self.deliverer.start()
        return self.deliverer

    async def close(self) -> None:
        """Close delivery, the evaluator and the store, recording the server time reached for the next start."""
        deliverer, self.deliverer = self.deliverer, None
        try:
            if deliverer is not None:
                await deliverer.aclose()
            if self._owns_evaluator and self.evaluator is not None:
                await self.evaluator.aclose()
            if not self.store.read_only:
                now = stamp(self.clock.now())
                try:
                    await self.store.write(lambda tx: tx.advance_clock(now))
                except StoreUnavailable as exc:
                    log.warning("server time not recorded at close: %s", exc)
        finally:
            try:
                await self.store.close()
            finally:
                if self._folder_lock is not None:
                    self._folder_lock.release()


async def _keys(store: Store, path: Path) -> ServerKeys:
    """The secrets file's keys; a ConfigError when the file is unreadable or malformed.

    A data folder from before the secrets file kept its link-signing key in the database's meta table.
    On its first start with this version that key is written into the new secrets file as `file_url`
    (so links signed before the upgrade keep working until they expire, at most 15 minutes), and the
    row is deleted once the file is on disk, so `engine.db` alone no longer holds any server secret.
    A secrets file that already exists (shared by several servers) wins over the row.
    """
    legacy = await store.get_meta(LEGACY_FILE_URL_KEY)
    try:
        keys, _ = load_keys(path, adopt_file_url=None if legacy is None else bytes.fromhex(legacy))
    except SecretsError as exc:
        raise ConfigError(str(exc)) from None
    if legacy is not None:
        async with store.transaction() as tx:
            await tx.delete_meta(LEGACY_FILE_URL_KEY)
    return keys


async def _open_store(data_dir: Path, org: OrgConfig, database: str | None, migrate: bool) -> Store:
    if database is not None:
        from engine.store.postgres import PostgresStore

        return await PostgresStore.open(
            database,
            migrate=migrate,
            pool_size=org.server.database_pool_size,
            statement_timeout_ms=org.server.database_timeout_seconds * 1000,
        )
    private_file(data_dir / DB_FILE)
    return await SqliteStore.open(data_dir / DB_FILE, migrate=migrate)


def collect_less() -> None:
    """Raise the youngest generation's threshold to `YOUNG_OBJECTS`, never lowering one set higher
    (by the host process). For a process whose work is the engine's writes."""
    young, *older = gc.get_threshold()
    if young < YOUNG_OBJECTS:
        gc.set_threshold(YOUNG_OBJECTS, *older)
