"""Closed connections leave no memory behind: a real `python -m server` (uvloop, as
deployed), four cycles of 2,000 WebSockets opened and let go, its RSS read from /proc after
each once it counts none open. Every way a socket goes: with a close frame, and without
one (the upgrade completed, nothing sent, the TCP socket closed or reset: a phone losing
its network). Each way once grew the process by 9-20 MiB a cycle (reference cycles through
the error aiohttp keeps for the socket, waiting for a full collection)."""

from __future__ import annotations

import argparse

import pytest

from bench.closed_connections import GOODBYES, run


@pytest.mark.parametrize("goodbye", GOODBYES)
async def test_rss_comes_back_after_cycles_of_connections(goodbye: str) -> None:
    rows = await run(argparse.Namespace(cycles=4, sockets=2000, settle=1.0, goodbye=goodbye))
    rss = dict(rows)
    first = rss["after cycle 1"]
    assert first > rss["started"]  # the cycles did load the server
    later = [rss[f"after cycle {n}"] for n in (2, 3, 4)]
    assert max(later) - first < 0.05 * first, rows  # the first cycle's level, not more
