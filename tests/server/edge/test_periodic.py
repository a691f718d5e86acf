"""The background loops' outage logging (server/edge/periodic.py), on a step that fails as
told: one WARNING per Redis outage, one INFO when Redis answers again, a traceback for
any other error, and every failure counted."""

from __future__ import annotations

import asyncio
import logging
import sqlite3
from collections.abc import Awaitable, Callable

import pytest
from redis.exceptions import ConnectionError as RedisConnectionError
from sqlalchemy.exc import OperationalError

from server.edge.archiving import archive_away
from server.edge.periodic import Periodic
from server.metrics import Metrics


def scripted(
    script: list[BaseException | None],
) -> tuple[Callable[[], Awaitable[None]], asyncio.Event]:
    """A step that fails as `script` says, one entry a call, and the event set at its end."""
    steps = asyncio.Event()

    async def step() -> None:
        outcome = script.pop(0) if script else None
        if not script:
            steps.set()
        if outcome is not None:
            raise outcome

    return step, steps


async def test_an_outage_is_one_warning_then_one_info_and_other_errors_keep_a_traceback(
    caplog: pytest.LogCaptureFixture,
) -> None:
    log = logging.getLogger("server.test_periodic")
    caplog.set_level(logging.INFO, logger=log.name)
    metrics = Metrics(lambda: 0, lambda: 0)
    script: list[BaseException | None] = [
        RedisConnectionError("down"),
        RedisConnectionError("still down"),
        RedisConnectionError("still down"),
        None,
        None,
        ValueError("a bug"),
        None,
    ]
    step, steps = scripted(script)

    loop = Periodic("test-loop", step, 0.001, what="test sweep", log=log, metrics=metrics)
    loop.start()
    await asyncio.wait_for(steps.wait(), 5.0)
    await loop.stop()
    lines = [(r.levelno, r.getMessage(), r.exc_info is not None) for r in caplog.records]
    assert lines == [
        (logging.WARNING, "test sweep: Redis unavailable (down); retrying", False),
        (logging.INFO, "test sweep: Redis answers again", False),
        (logging.ERROR, "test sweep failed", True),
    ]
    assert 'solrace_redis_errors_total{kind="ConnectionError"} 3' in metrics.render()


async def test_the_archive_loop_takes_a_locked_database_for_an_outage(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The records' database out of reach (SQLite locked, PostgreSQL down) is an outage of
    the archive's loop, said in one WARNING, not a traceback a second."""
    log = logging.getLogger("server.test_periodic_db")
    caplog.set_level(logging.INFO, logger=log.name)
    locked = OperationalError("INSERT", {}, sqlite3.OperationalError("database is locked"))
    script: list[BaseException | None] = [locked, locked, None, None]
    step, steps = scripted(script)

    loop = Periodic(
        "test-archive",
        step,
        0.001,
        what="archive of finished races",
        log=log,
        metrics=Metrics(lambda: 0, lambda: 0),
        away=archive_away,
    )
    loop.start()
    await asyncio.wait_for(steps.wait(), 5.0)
    await loop.stop()
    lines = [(r.levelno, r.getMessage(), r.exc_info is not None) for r in caplog.records]
    assert [(level, text.split(" (")[0], tb) for level, text, tb in lines] == [
        (logging.WARNING, "archive of finished races: the records' database unavailable", False),
        (logging.INFO, "archive of finished races: the records' database answers again", False),
    ]
