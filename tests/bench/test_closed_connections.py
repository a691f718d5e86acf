"""Closed connections leave no memory behind (issue 14): a real `python -m server` (uvloop,
as deployed), three cycles of 2,000 WebSockets opened and closed, its RSS read from /proc
after each with none open. On the old code it grew by 9-20 MiB a cycle (reference cycles
through each closed socket's error, waiting for a full collection)."""

from __future__ import annotations

import argparse

from bench.closed_connections import run


async def test_rss_comes_back_after_cycles_of_connections() -> None:
    rows = await run(argparse.Namespace(cycles=3, sockets=2000, settle=1.0))
    rss = dict(rows)
    first, last = rss["after cycle 1"], rss["after cycle 3"]
    assert rss["after cycle 1"] > rss["started"]  # the cycles did load the server
    assert last - first < 0.05 * first, rows  # back near the first cycle's level
