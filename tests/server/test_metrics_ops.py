"""What operators read on /metrics: exact integers, refusals and errors by code, Redis
errors and reconnections counted, `promtool check metrics` clean, and /metrics kept off the
public port when asked."""

from __future__ import annotations

import asyncio
import shutil
import subprocess
from pathlib import Path

import aiohttp
from aiohttp import web
from support.databases import scratch_database_url
from support.http import create_room, get_text
from support.own_redis import OwnRedis
from support.ports import free_port
from support.servers import MakeServer
from support.wsclient import WsClient, race_alone

import core
import protocol as p
from server.edge.app import create_app
from server.metrics import Metrics
from server.settings import Settings


def samples(text: str) -> dict[str, str]:
    return dict(line.rsplit(" ", 1) for line in text.splitlines() if not line.startswith("#"))


def test_counters_and_gauges_are_exact_integers() -> None:
    metrics = Metrics(lambda: 3.0, lambda: 12_000)
    metrics.moves_accepted.inc(1_234_567)
    metrics.moves_refused.inc("stale_seq", 2_000_001)
    metrics.move_latency.observe(0.0031)
    got = samples(metrics.render())
    assert got["solrace_moves_accepted_total"] == "1234567"  # was 1.23457e+06
    assert got['solrace_moves_refused_total{code="stale_seq"}'] == "2000001"
    assert got["solrace_rooms_active"] == "3"
    assert got["solrace_connections"] == "12000"
    assert got["solrace_move_latency_seconds_sum"] == "0.0031"


def promtool_check(text: str) -> subprocess.CompletedProcess[str]:
    promtool = shutil.which("promtool")
    assert promtool, "promtool is not installed: run `make test` (scripts/ensure-test-tools)"
    return subprocess.run(
        [promtool, "check", "metrics"], input=text, capture_output=True, text=True
    )


async def test_promtool_accepts_metrics_with_refusals_and_errors_by_code(
    server_url: str,
) -> None:
    room = (await create_room(server_url, seats=1, seed=3))["id"]
    async with WsClient.connect(server_url) as c:
        await race_alone(c, room)
        await c.send(p.Move(seq=1, move="t1 t1"))
        await c.expect(p.Refused)
        await c.send(p.Ready())  # not in the lobby any more: an error
        await c.expect(p.Error)
        await c.send_raw(b"\xc1")  # not msgpack
        await c.expect(p.Error)
    assert (await get_text(f"{server_url}/nowhere"))[0] == 404
    status, text = await get_text(f"{server_url}/metrics")
    assert status == 200
    got = samples(text)
    assert got['solrace_moves_refused_total{code="illegal_move"}'] == "1"
    assert got['solrace_errors_total{code="not_running"}'] == "1" or any(
        key.startswith("solrace_errors_total{") for key in got
    )
    assert got['solrace_errors_total{code="bad_frame"}'] == "1"
    assert got['solrace_http_errors_total{code="not_found"}'] == "1"
    check = promtool_check(text)
    assert check.returncode == 0, check.stdout + check.stderr
    assert "sample" not in check.stdout + check.stderr  # no lint findings either


def test_promtool_would_catch_a_bad_exposition() -> None:
    """The check above can fail: promtool refuses what is not the text format."""
    bad = "# TYPE solrace_x counter\nsolrace_x 1.2.3\n"
    assert promtool_check(bad).returncode != 0


async def play_one_move(url: str) -> None:
    room = (await create_room(url, seats=1, seed=3))["id"]
    async with WsClient.connect(url) as c:
        await race_alone(c, room)
        await c.send(p.Move(seq=1, move=core.new_game("shaula", 3).legal_moves()[0]))
        await c.expect(p.Accepted)


async def test_redis_errors_and_reconnections_are_counted(tmp_path: Path) -> None:
    redis = OwnRedis(tmp_path)
    redis.start()
    port = free_port()
    runner = web.AppRunner(
        create_app(
            Settings(
                database_url=scratch_database_url(),
                port=port,
                redis_url=f"redis://127.0.0.1:{redis.port}/0",
            )
        ),
        shutdown_timeout=1.0,
    )
    try:
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", port).start()
        url = f"http://127.0.0.1:{port}"
        await play_one_move(url)  # the move path's and the feed's connections are up
        got = samples((await get_text(f"{url}/metrics"))[1])
        pubsub = 'solrace_redis_reconnects_total{client="pubsub"}'
        assert got['solrace_redis_reconnects_total{client="moves"}'] == "0"
        assert got[pubsub] == "0"
        redis.stop()
        await asyncio.sleep(1.0)  # the sweeper (every 0.25 s) fails meanwhile
        redis.start()
        for _ in range(100):  # the feed retries with a backoff of up to 2 s
            got = samples((await get_text(f"{url}/metrics"))[1])
            if got[pubsub] != "0":
                break
            await asyncio.sleep(0.1)
        await play_one_move(url)  # (a join needs the feed back: it subscribes)
        got = samples((await get_text(f"{url}/metrics"))[1])
        assert int(got['solrace_redis_reconnects_total{client="moves"}']) >= 1
        assert int(got[pubsub]) >= 1
        errors = {k: int(v) for k, v in got.items() if k.startswith("solrace_redis_errors_total")}
        assert sum(errors.values()) >= 1, got
    finally:
        await runner.cleanup()
        redis.stop()


async def test_metrics_can_be_kept_off_the_public_port(make_server: MakeServer) -> None:
    metrics_port = free_port()
    url = await make_server(metrics_port=metrics_port)
    status, text = await get_text(f"{url}/metrics")
    assert status == 404 and "not_found" in text
    async with aiohttp.ClientSession() as http:
        async with http.get(f"http://127.0.0.1:{metrics_port}/metrics") as answer:
            assert answer.status == 200
            assert "solrace_connections" in await answer.text()
        async with http.get(f"http://127.0.0.1:{metrics_port}/rooms") as answer:
            assert answer.status == 404  # nothing but the metrics there
