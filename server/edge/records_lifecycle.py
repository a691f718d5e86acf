"""The records' database over the app's life: opened at startup and brought to the newest
schema (every process may do it at once: `records.migrate`), disposed at cleanup.

A database that cannot be reached at startup (restarting, started after the servers, an
SQLite file whose folder cannot be made yet) holds up nothing that needs no records: the
process serves races, quick matches and watching at once, rather than serving nothing or
ending (its supervisor would start it again and again, and systemd's start limit give up
on it for good). Until the schema is brought up, tried again every second in the
background, the engine refuses every connection as an outage (`Schema`): what needs the
records is answered 503 `unavailable` (HTTP) or `unavailable` (WebSocket), and the
archive keeps finished races for its next drain, as in an outage that begins later. One
WARNING line says so, one INFO line says when the records are reached. Any other failure
of the first try (a migration that fails) ends the start."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator

from aiohttp import web
from sqlalchemy.exc import OperationalError
from sqlalchemy.ext.asyncio import AsyncEngine

from records.engine import open_engine, redacted_url
from records.migrate import upgrade_to_head
from server.edge.app_keys import RECORDS_DB, RECORDS_SCHEMA, SETTINGS

__all__ = ["FIRST_TRY", "NOT_YET", "Schema", "records_ctx"]

log = logging.getLogger(__name__)

RETRY = 1.0  # seconds between tries to reach the records' database
# Seconds the start waits for its first try (a slow migration, another process's lock)
# before it serves without the records, the try going on in the background.
FIRST_TRY = 10.0
# A database that answers and fails the migration all the same (a bug, a schema newer than
# this code) is tried again this many seconds later, its traceback logged each time.
RETRY_FAILED = 60.0
NOT_YET = (
    "the records' database cannot be reached yet: players, records and the daily deal "
    "are answered 503 unavailable"
)

REFUSED = "not reached since this process started"  # as the log says why a request failed


class Schema:
    """The records' engine, and whether their schema is brought up in this process: until
    it is (`problem` set), the engine refuses every new connection as an outage, so that
    nothing uses a database at an older schema, or none. The engine has no connection
    before then: the refusal of new ones covers every use."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.problem: str | None = NOT_YET
        self._said = False  # the outage's WARNING line
        self.engine = open_engine(url, refused=lambda: self.problem and REFUSED)

    def away(self, cause: object) -> None:
        if not self._said:
            self._said = True
            log.warning(
                "the records' database cannot be reached (%s): %s; serving without the "
                "records, trying again every %g s",
                redacted_url(self.url),
                cause,
                RETRY,
            )

    def up(self) -> None:
        self.problem = None
        if self._said:
            log.info(
                "the records' database is reached (%s): serving the records", redacted_url(self.url)
            )
        else:
            log.info("records in %s", redacted_url(self.url))


async def records_ctx(app: web.Application) -> AsyncIterator[None]:
    url = app[SETTINGS].records_url
    schema = Schema(url)
    engine = app[RECORDS_DB] = schema.engine
    app[RECORDS_SCHEMA] = schema
    # Its own engine, the served one refusing until then, whose statements may be long.
    migrating = open_engine(url, answer_wait=None)
    first = asyncio.ensure_future(upgrade_to_head(migrating))
    bringing: asyncio.Task[None] | None = None
    try:
        await asyncio.wait({first}, timeout=FIRST_TRY)
        if first.done() and not isinstance(first.exception(), OperationalError):
            first.result()  # a failure that is no outage ends the start
            await migrating.dispose()
            schema.up()
        else:
            if not first.done():
                schema.away(f"no answer within {FIRST_TRY:g} s")
            bringing = asyncio.create_task(
                _bring_up(schema, migrating, first), name="solrace-records-schema"
            )
        yield
    finally:
        for task in (bringing, first):  # the tries end with the process
            if task is not None and not task.done():
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        await migrating.dispose()
        await engine.dispose()


async def _bring_up(schema: Schema, migrating: AsyncEngine, attempt: asyncio.Future[None]) -> None:
    """The schema brought to the newest version in the background, tried every second
    while the database cannot be reached; `attempt`: the try under way."""
    while True:
        try:
            await attempt
            break
        except OperationalError as exc:
            schema.away(exc.orig)
            wait = RETRY
        except Exception:
            log.exception("the records' schema could not be brought up; trying again")
            wait = RETRY_FAILED
        await asyncio.sleep(wait)
        attempt = asyncio.ensure_future(upgrade_to_head(migrating))
    await migrating.dispose()
    schema.up()
