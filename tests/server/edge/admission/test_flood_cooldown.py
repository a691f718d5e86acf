"""A client address whose socket was closed 1008 for flooding has its new WebSockets
refused (429 `rate_limited`, Retry-After) for `flood_cooldown` seconds: a flooder that
connects again at once costs a refused HTTP request, not a handshake and a flood each
time. Loopback is exempt unless `limit_loopback` is set (benches, these tests)."""

from __future__ import annotations

import asyncio
import json

import aiohttp
from support.servers import MakeServer
from support.wsclient import WsClient

import protocol as p
from server.edge.admission.flood_cooldown import MAX_ADDRESSES, FloodCooldown

OP_CLOSE, OP_PING = 0x8, 0x9
FLOODY = {"rate_per_second": 5.0, "rate_burst": 5.0, "flood_close_after": 20}


async def upgrade(
    url: str, forwarded_for: str | None = None, until_eof: bool = False
) -> tuple[int, bytes]:
    """A WebSocket upgrade by hand: the status and what follows the answer's head (the
    body of a refusal; a flood's answer, until the close frame or, `until_eof`, until the
    server closes the connection)."""
    host, port = url.removeprefix("http://").split(":")
    reader, writer = await asyncio.open_connection(host, int(port))
    head = (
        "GET /ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
    )
    if forwarded_for:
        head += f"X-Forwarded-For: {forwarded_for}\r\n"
    writer.write((head + "\r\n").encode())
    answer = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 5)
    status = int(answer.split()[1])
    if status == 101:
        # A flood of pings, until the server's close frame: a flooder connects again as
        # soon as it reads it (the server closes the TCP connection a second later).
        for _ in range(200):
            writer.write(bytes((0x80 | OP_PING, 0x81)) + bytes(4) + b"x")
        rest = b""
        async with asyncio.timeout(10):
            try:
                while (until_eof or not closed_1008(rest)) and (chunk := await reader.read(4096)):
                    rest += chunk
            except ConnectionResetError:
                # The server closes a socket whose flood it has not read to the end: the
                # kernel then answers the unread frames with a reset, not a FIN. Either is
                # the end of the connection.
                assert until_eof and closed_1008(rest), rest
    else:
        length = next(
            int(line.split(b":")[1])
            for line in answer.split(b"\r\n")
            if line.lower().startswith(b"content-length:")
        )
        rest = await asyncio.wait_for(reader.readexactly(length), 5)
    writer.close()
    return status, answer + rest


def refusal(answer: bytes) -> tuple[dict[str, str], dict[str, object]]:
    head, _, body = answer.partition(b"\r\n\r\n")
    lines = head.decode().split("\r\n")[1:]
    headers = {k.lower(): v.strip() for k, _, v in (line.partition(":") for line in lines)}
    return headers, json.loads(body)


def closed_1008(answer: bytes) -> bool:
    return bytes((0x80 | OP_CLOSE, 7)) + (1008).to_bytes(2, "big") in answer


async def test_a_flooder_is_refused_new_websockets_for_the_cooldown(
    make_server: MakeServer,
) -> None:
    url = await make_server(**FLOODY, limit_loopback=True, flood_cooldown=60.0)
    async with WsClient.connect(url) as honest:  # opened before the flood, from the same address
        status, answer = await upgrade(url)
        assert status == 101 and closed_1008(answer)
        status, answer = await upgrade(url)
        assert status == 429
        headers, body = refusal(answer)
        assert body["error"]["code"] == "rate_limited"  # type: ignore[index]
        assert 55 <= int(headers["retry-after"]) <= 60
        # Only new WebSockets are refused: HTTP, and the sockets already open, go on.
        async with aiohttp.ClientSession() as http, http.get(f"{url}/healthz") as health:
            assert health.status == 200
        await honest.send(p.Ping(id=7))
        assert (await honest.expect(p.Pong)).id == 7


async def test_through_a_proxy_only_the_flooding_client_is_refused(
    make_server: MakeServer,
) -> None:
    # Production's path: loopback is the trusted proxy, the client is its X-Forwarded-For.
    url = await make_server(**FLOODY, flood_cooldown=60.0)
    status, answer = await upgrade(url, forwarded_for="203.0.113.7")
    assert status == 101 and closed_1008(answer)
    assert (await upgrade(url, forwarded_for="203.0.113.7"))[0] == 429
    assert (await upgrade(url, forwarded_for="203.0.113.8"))[0] == 101  # someone else


async def test_a_refused_flooder_waits_for_its_answer_on_its_connection_cap(
    make_server: MakeServer,
) -> None:
    # The refusal is answered late, and each refused socket holds its place under the
    # per-address cap meanwhile: a flooder trying again at once cannot make thousands.
    url = await make_server(**FLOODY, flood_cooldown=60.0, max_connections_per_address=2)
    client = "203.0.113.9"
    assert (await upgrade(url, forwarded_for=client, until_eof=True))[0] == 101
    await asyncio.sleep(0.5)  # the flood's socket is counted no more
    answers = await asyncio.gather(*(upgrade(url, forwarded_for=client) for _ in range(3)))
    messages = sorted(str(refusal(a)[1]["error"]["message"]) for _, a in answers)  # type: ignore[index]
    assert [status for status, _ in answers] == [429, 429, 429]
    assert ["flooded" in m for m in messages] == [True, True, False], messages
    assert messages[2].startswith("too many connections")


async def test_loopback_is_exempt_by_default(make_server: MakeServer) -> None:
    url = await make_server(**FLOODY, flood_cooldown=60.0)
    status, answer = await upgrade(url)
    assert status == 101 and closed_1008(answer)
    assert (await upgrade(url))[0] == 101


async def test_no_cooldown_when_it_is_0(make_server: MakeServer) -> None:
    url = await make_server(**FLOODY, limit_loopback=True, flood_cooldown=0.0)
    status, answer = await upgrade(url)
    assert status == 101 and closed_1008(answer)
    assert (await upgrade(url))[0] == 101


def test_the_cooldown_ends_and_its_memory_is_bounded() -> None:
    cooldown = FloodCooldown(10.0)
    cooldown.flooded("203.0.113.7", now=100.0)
    assert cooldown.refused_for("203.0.113.7", 105.0) == 5.0
    assert cooldown.refused_for("203.0.113.8", 105.0) == 0.0
    assert cooldown.refused_for("203.0.113.7", 110.0) == 0.0
    assert len(cooldown) == 0  # forgotten once over
    for i in range(MAX_ADDRESSES + 50):
        cooldown.flooded(f"10.{i >> 16}.{(i >> 8) & 255}.{i & 255}", now=200.0 + i / 1000)
    assert len(cooldown) == MAX_ADDRESSES
    assert cooldown.refused_for("10.0.0.0", 201.0) == 0.0  # the oldest went first
    last = MAX_ADDRESSES + 49
    assert cooldown.refused_for(f"10.0.{(last >> 8) & 255}.{last & 255}", 201.0) > 0
    off = FloodCooldown(0.0)
    off.flooded("203.0.113.7", now=1.0)
    assert off.refused_for("203.0.113.7", 1.0) == 0.0


async def test_a_cooldown_that_ends_while_the_refusal_waits_refuses_nothing(
    make_server: MakeServer,
) -> None:
    """The refusal is answered a second late: a cooldown over by then lets the upgrade
    through, where it answered 429 with `Retry-After: 0`."""
    url = await make_server(**FLOODY, limit_loopback=True, flood_cooldown=0.3)
    status, answer = await upgrade(url)
    assert status == 101 and closed_1008(answer)
    status, answer = await upgrade(url)  # in its cooldown, over before the answer is due
    assert status == 101, answer
