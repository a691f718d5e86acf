"""The records' database over the app's life: opened and brought to the newest schema at
startup (every process may do it at once: `records.migrate`), disposed at cleanup. A
database that cannot be reached at startup (restarting, or started after the servers) is
waited for, a try every second, rather than ending the process: its supervisor would start
it again and again, and systemd's start limit give up on it for good."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator

from aiohttp import web
from sqlalchemy.exc import OperationalError
from sqlalchemy.ext.asyncio import AsyncEngine

from records.engine import open_engine, redacted_url
from records.migrate import upgrade_to_head
from server.edge.app_keys import RECORDS_DB, SETTINGS

__all__ = ["records_ctx"]

log = logging.getLogger(__name__)

RETRY = 1.0  # seconds between tries to reach the records' database at startup


async def records_ctx(app: web.Application) -> AsyncIterator[None]:
    url = app[SETTINGS].records_url
    engine = open_engine(url)
    try:
        await _migrated(engine, url)
    except BaseException:
        await engine.dispose()
        raise
    log.info("records in %s", redacted_url(url))
    app[RECORDS_DB] = engine
    yield
    await engine.dispose()


async def _migrated(engine: AsyncEngine, url: str) -> None:
    """The schema brought to the newest version, once the database can be reached (an
    outage: one WARNING line, then a try every second); any other failure ends the start."""
    warned = False
    while True:
        try:
            await upgrade_to_head(engine)
            return
        except OperationalError as exc:
            if not warned:
                log.warning(
                    "the records' database cannot be reached (%s): %s; waiting for it",
                    redacted_url(url),
                    exc.orig,
                )
                warned = True
        await asyncio.sleep(RETRY)
