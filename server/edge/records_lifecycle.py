"""The records' database over the app's life: opened and brought to the newest schema at
startup (every process may do it at once: `records.migrate`), disposed at cleanup."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator

from aiohttp import web

from records.engine import open_engine, redacted_url
from records.migrate import upgrade_to_head
from server.edge.app_keys import RECORDS_DB, SETTINGS

__all__ = ["records_ctx"]

log = logging.getLogger(__name__)


async def records_ctx(app: web.Application) -> AsyncIterator[None]:
    url = app[SETTINGS].records_url
    engine = open_engine(url)
    try:
        await upgrade_to_head(engine)
    except BaseException:
        await engine.dispose()
        raise
    log.info("records in %s", redacted_url(url))
    app[RECORDS_DB] = engine
    yield
    await engine.dispose()
