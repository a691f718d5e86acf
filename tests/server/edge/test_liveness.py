"""Dead sockets are found by the server's ping sweep; live ones (that answer) stay."""

from __future__ import annotations

import asyncio
import base64
import os

from support.servers import MakeServer
from support.wsclient import WsClient

import protocol as p


async def test_a_peer_that_never_answers_pings_is_dropped(make_server: MakeServer) -> None:
    url = await make_server(heartbeat=0.2)
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
