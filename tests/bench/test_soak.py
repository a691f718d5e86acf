"""The soak bench, run for seconds instead of hours: two server processes behind the shipped
HAProxy config, rooms, reconnects, spectators and a quick match; its table has a row per
interval, with moves accepted, no error, and each process's memory and descriptors."""

from __future__ import annotations

import pytest

from bench.soak import parse_args, run


@pytest.mark.timeout(180)
async def test_a_short_soak_prints_its_table_with_no_error() -> None:
    args = parse_args(
        [
            *("--duration", "24", "--interval", "8", "--rooms", "2", "--pace", "0.2"),
            *("--drop-every", "3", "--watch-every", "2", "--quick-every", "6"),
        ]
    )
    lines: list[str] = []
    rows = await run(args, lines.append)
    assert len(rows) == 3 and len(lines) == 4  # the header, then a row per interval
    assert all(row.errors == 0 for row in rows), lines
    assert sum(row.moves for row in rows) > 0
    assert all(0 < row.p50_ms <= row.p99_ms for row in rows if row.moves)
    for row in rows:
        assert len(row.rss_mib) == len(row.fds) == 2  # each of the two processes
        assert all(rss > 0 for rss in row.rss_mib) and all(fds > 0 for fds in row.fds)
        assert row.redis_mib > 0
