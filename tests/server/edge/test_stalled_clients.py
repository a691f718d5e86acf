"""Clients that stall or hoard: request heads and bodies that never finish, bodies announced
too big, too many connections from one address, and a process short of descriptors."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import random
import resource
import socket
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest
import websockets
from support.databases import scratch_database_url
from support.paths import ROOT
from support.ports import free_port
from support.server_processes import environment
from support.servers import MakeServer
from support.wsclient import WsClient

from server.edge.app import create_app
from server.edge.http_server import Runner
from server.settings import Settings

HALF_AN_UPGRADE = b"GET /ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upg"


def port_of(url: str) -> int:
    return int(url.rsplit(":", 1)[1])


async def read_answer(port: int, request: bytes, host: str = "127.0.0.1") -> tuple[int, bytes]:
    """Send `request` (and nothing more); the status and body of the answer, read until the
    server closes the connection."""
    reader, writer = await asyncio.open_connection(host, port)
    try:
        writer.write(request)
        answer = await asyncio.wait_for(reader.read(), 10.0)
    finally:
        writer.close()
    head, _, body = answer.partition(b"\r\n\r\n")
    return int(head.split(b" ")[1]), body


async def test_a_body_announced_over_the_cap_is_refused_413_before_it_is_sent(
    make_server: MakeServer,
) -> None:
    url = await make_server(body_timeout=60.0)  # only an answer at once can come in time
    request = b"POST /rooms HTTP/1.1\r\nHost: x\r\nContent-Length: 52428800\r\n\r\n"
    status, body = await read_answer(port_of(url), request)
    assert status == 413 and json.loads(body)["error"]["code"] == "too_big"


async def test_a_chunked_body_over_the_cap_is_refused_413_and_the_connection_closed(
    make_server: MakeServer,
) -> None:
    url = await make_server()
    chunk = b"8000\r\n" + b" " * 0x8000 + b"\r\n"
    request = (
        b"POST /rooms HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
        + chunk * 3
        + b"0\r\n\r\n"
    )
    status, body = await read_answer(port_of(url), request)  # read until the server closes
    assert status == 413 and json.loads(body)["error"]["code"] == "too_big"


@pytest.mark.parametrize("path", ["/rooms", "/players", "/sign-in", "/link", "/tournaments"])
async def test_a_body_that_does_not_arrive_is_answered_408_and_the_connection_closed(
    make_server: MakeServer, path: str
) -> None:
    url = await make_server(body_timeout=0.5)
    reader, writer = await asyncio.open_connection("127.0.0.1", port_of(url))
    try:
        writer.write(f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Length: 40\r\n\r\n{{".encode())
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 5.0)
        assert head.startswith(b"HTTP/1.1 408"), head
        length = int(head.lower().split(b"content-length: ")[1].split(b"\r\n")[0])
        body = await reader.readexactly(length)
        assert json.loads(body)["error"]["code"] == "bad_request"
        # The rest of the late body, when it comes, is not read as a next request.
        writer.write(b" " * 39 + b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        assert await asyncio.wait_for(reader.read(), 5.0) == b""
    finally:
        writer.close()


@contextlib.asynccontextmanager
async def open_stalled(
    host: str, port: int, count: int
) -> AsyncIterator[list[asyncio.StreamReader]]:
    """`count` connections that each send half a WebSocket upgrade, then nothing."""
    writers = []
    try:
        readers = []
        for _ in range(count):
            reader, writer = await asyncio.open_connection(host, port)
            writer.write(HALF_AN_UPGRADE)
            readers.append(reader)
            writers.append(writer)
        yield readers
    finally:
        for writer in writers:
            writer.close()


async def test_upgrades_that_stop_half_way_are_dropped(make_server: MakeServer) -> None:
    url = await make_server(handshake_timeout=0.5)
    async with open_stalled("127.0.0.1", port_of(url), 200) as stalled:
        # Each is closed by the server (the read ends) without an answer.
        ends = await asyncio.wait_for(asyncio.gather(*(r.read() for r in stalled)), 10.0)
        assert ends == [b""] * 200
    async with WsClient.connect(url) as c:  # one that finishes its upgrade is served
        await c.send_raw(json.dumps({"type": "ping", "v": 1, "id": 3}))
        assert json.loads(await c.ws.recv())["id"] == 3


async def test_a_kept_alive_connection_must_send_its_next_request_head_in_time_too(
    make_server: MakeServer,
) -> None:
    url = await make_server(handshake_timeout=0.5)
    for after in (HALF_AN_UPGRADE, b""):  # a next request that stops half-way, or none
        reader, writer = await asyncio.open_connection("127.0.0.1", port_of(url))
        try:
            writer.write(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 5.0)
            assert head.startswith(b"HTTP/1.1 200")
            length = int(head.lower().split(b"content-length: ")[1].split(b"\r\n")[0])
            await reader.readexactly(length)
            writer.write(after)
            # Closed by the server, not left open for as long as the client likes.
            assert await asyncio.wait_for(reader.read(), 5.0) == b""
        finally:
            writer.close()


async def test_websockets_per_client_address_are_capped(make_server: MakeServer) -> None:
    url = await make_server(max_connections_per_address=3)
    ws_url = url.replace("http://", "ws://") + "/ws"
    client = {"X-Forwarded-For": f"198.51.100.{random.randrange(1, 255)}"}  # via a proxy
    async with contextlib.AsyncExitStack() as stack:
        for _ in range(3):
            await stack.enter_async_context(websockets.connect(ws_url, additional_headers=client))
        with pytest.raises(websockets.InvalidStatus) as refused:
            await websockets.connect(ws_url, additional_headers=client)
        assert refused.value.response.status_code == 429
        assert json.loads(refused.value.response.body)["error"]["code"] == "rate_limited"
        # Like every 429 (docs/protocol.md section 7), it says when to try again.
        assert int(refused.value.response.headers["Retry-After"]) >= 1
        # Another client, and anyone on the machine itself, are not held back by it.
        other = {"X-Forwarded-For": "198.51.100.255"}
        await stack.enter_async_context(websockets.connect(ws_url, additional_headers=other))
        for _ in range(5):
            await stack.enter_async_context(websockets.connect(ws_url))
    # Closed sockets are counted out.
    async with websockets.connect(ws_url, additional_headers=client):
        pass


def non_loopback_address() -> str | None:
    """An address of this machine's own that is not loopback (no packet is sent)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("192.0.2.1", 9))
        except OSError:
            return None
        address: str = probe.getsockname()[0]
    return None if address.startswith("127.") else address


@pytest.fixture
async def public_server(redis_url: str) -> AsyncIterator[tuple[str, int]]:
    """A server listening on a non-loopback address of this machine, where its own
    connections count as a client's."""
    host = non_loopback_address()
    if host is None:
        pytest.skip("this machine has no address but loopback")
    port = free_port()
    settings = Settings(
        database_url=scratch_database_url(),
        host=host,
        port=port,
        redis_url=redis_url,
        max_connections_per_address=20,
        handshake_timeout=30.0,
    )
    runner = Runner(create_app(settings), shutdown_timeout=1.0)
    await runner.setup()
    await aiohttp.web.TCPSite(runner, host, port).start()
    yield host, port
    await runner.cleanup()


async def test_connections_per_peer_are_capped_before_any_http(
    public_server: tuple[str, int],
) -> None:
    host, port = public_server
    async with open_stalled(host, port, 20) as stalled, open_stalled(host, port, 5) as more:
        # Beyond the cap the server closes at once, before the request head is even complete.
        ends = await asyncio.wait_for(asyncio.gather(*(r.read() for r in more)), 5.0)
        assert ends == [b""] * 5
        assert not any(r.at_eof() for r in stalled)
    # The ones closed are counted out: a new connection is served.
    async with aiohttp.ClientSession() as http, http.get(f"http://{host}:{port}/healthz") as r:
        assert r.status == 200


RAISED = "open-files limit raised from 1024 to"


async def test_1100_stalled_connections_under_a_1024_soft_limit_leave_healthz_up(
    redis_url: str, tmp_path: Path
) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < 2400:
        pytest.fail(f"this test needs a hard descriptor limit of 2,400 or more, not {hard}")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, 2400), hard))  # this test's own

    def lower() -> None:  # the common default soft limit, in the server's process only
        resource.setrlimit(resource.RLIMIT_NOFILE, (1024, hard))

    port = free_port()
    log = tmp_path / "server.log"
    env = environment(REDIS_URL=redis_url, SOLRACE_HANDSHAKE_TIMEOUT="60")
    with log.open("wb") as out:
        server = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "server",
            "--port",
            str(port),
            cwd=ROOT,
            env=env,
            stdin=asyncio.subprocess.DEVNULL,
            stderr=out,
            preexec_fn=lower,
        )
    try:
        async with aiohttp.ClientSession() as http:
            for _ in range(300):
                with contextlib.suppress(aiohttp.ClientError):
                    async with http.get(f"http://127.0.0.1:{port}/healthz") as r:
                        if r.status == 200:
                            break
                await asyncio.sleep(0.1)
            assert RAISED in log.read_text(), log.read_text()
            async with open_stalled("127.0.0.1", port, 1100) as stalled:
                async with http.get(f"http://127.0.0.1:{port}/healthz") as r:
                    assert r.status == 200, await r.text()
                assert not any(r.at_eof() for r in stalled)
    finally:
        server.terminate()
        await server.wait()


async def test_a_client_leaving_in_the_middle_of_its_body_is_no_error(
    make_server: MakeServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    url = await make_server()
    _, writer = await asyncio.open_connection("127.0.0.1", port_of(url))
    writer.write(b'POST /rooms HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{"game":')
    await writer.drain()
    await asyncio.sleep(0.2)
    writer.close()
    await asyncio.sleep(0.5)
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR], caplog.text
