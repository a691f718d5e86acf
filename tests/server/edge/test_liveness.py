"""Dead sockets are found by the server's ping sweep; live ones (that answer) stay."""

from __future__ import annotations

import asyncio
import base64
import os

from support.servers import MakeServer
from support.wsclient import WsClient

import protocol as p


async def upgrade_request(url: str) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """A TCP connection to the server at `url` that has sent a WebSocket upgrade request
    and nothing more: it answers nothing, not even a ping."""
    port = int(url.rsplit(":", 1)[1])
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    key = base64.b64encode(os.urandom(16)).decode()
    writer.write(
        (
            "GET /ws HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n"
            f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
            "Sec-WebSocket-Version: 13\r\n\r\n"
        ).encode()
    )
    return reader, writer


async def test_a_peer_that_never_answers_pings_is_dropped(make_server: MakeServer) -> None:
    url = await make_server(heartbeat=0.2)
    reader, writer = await upgrade_request(url)
    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 5)
    assert head.startswith(b"HTTP/1.1 101")
    # Read (never answer) until the server gives up on us: at least one ping, then EOF.
    received = await asyncio.wait_for(reader.read(), 5)
    assert received.startswith(b"\x89\x00"), received
    writer.close()


async def test_a_quiet_peer_that_answers_pings_stays(make_server: MakeServer) -> None:
    url = await make_server(heartbeat=0.2)
    async with WsClient.connect(url) as c:
        await asyncio.sleep(1.0)  # silent for 5 heartbeats; the client library answers pings
        await c.send(p.Ping(id=7))
        pong = await c.expect(p.Pong)
        assert pong.id == 7
        # The client's own pings are answered too (autoping is off on the server side).
        await asyncio.wait_for(await c.ws.ping(b"hi"), 5)


async def test_the_ping_and_the_cut_come_within_the_windows_the_protocol_states(
    make_server: MakeServer,
) -> None:
    """docs/protocol.md section 8: the server looks at its sockets every quarter
    `heartbeat`, so a silent socket is pinged between one and one and a quarter heartbeats
    into its silence, and cut between a half and three quarters of a heartbeat after the
    ping; never sooner, which is what a client's pong has to beat."""
    heartbeat = 1.0
    url = await make_server(heartbeat=heartbeat)
    reader, writer = await upgrade_request(url)
    loop = asyncio.get_running_loop()
    sent = loop.time()  # the server hears nothing after the upgrade request
    await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 5)
    assert await asyncio.wait_for(reader.readexactly(2), 5) == b"\x89\x00"  # the ping
    pinged = loop.time()
    assert await asyncio.wait_for(reader.read(), 5) == b""  # then the cut, without a word
    cut = loop.time()
    writer.close()
    slack = 0.4  # a busy test machine reads late: more room above than below
    assert heartbeat - 0.05 <= pinged - sent <= 1.25 * heartbeat + slack
    assert heartbeat / 2 - 0.1 <= cut - pinged <= 0.75 * heartbeat + slack
