"""bench/control_flood.py's parts against a real server: the flooder is closed with 1008 and
the honest client is answered (what the bench measures, not how fast)."""

from __future__ import annotations

from support.servers import MakeServer

from bench.control_flood import Phase, flood, honest, table


async def test_the_flood_is_closed_and_the_honest_client_answered(
    make_server: MakeServer,
) -> None:
    url = await make_server()
    port = int(url.rsplit(":", 1)[1])
    counts = await flood(port, 2.0, pings=2_000)
    assert counts["connections"] == 3 and counts["closed_1008"] == 3, counts
    assert counts["pongs"] < 3 * 200  # a burst's worth each, not 2,000
    # Counted, not timed: on a loaded machine a 0.5 s window held two pings' answers.
    latencies = await honest(port, 0.5, at_least=5, settle=30.0)
    assert len(latencies) >= 5
    text = table([Phase("quiet", latencies, {}), Phase("60k pings", latencies, counts)])
    assert text.splitlines()[0].split()[:2] == ["phase", "samples"]
