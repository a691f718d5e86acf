"""WebSocket control frames (ping, pong) spend the connection's message budget like any
other frame: a flood of them is left unanswered and then closed with 1008."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging

import pytest
import websockets
from support.http import create_room
from support.servers import MakeServer
from support.wsclient import WsClient, race_alone

import protocol as p


@pytest.mark.parametrize("opcode", ["ping", "pong"])
async def test_a_flood_of_control_frames_is_closed_with_1008(
    make_server: MakeServer, opcode: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    url = await make_server(rate_per_second=5.0, rate_burst=5.0, flood_close_after=20)
    async with WsClient.connect(url) as c:
        waiters = []
        with pytest.raises(websockets.ConnectionClosed) as closed:
            for i in range(400):
                if opcode == "ping":
                    waiters.append(await c.ws.ping(i.to_bytes(4, "big")))
                else:
                    await c.ws.pong(i.to_bytes(4, "big"))
            await c.recv()
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 1008
        await asyncio.sleep(0)  # let pong waiters settle
        answered = [w for w in waiters if w.done() and not w.exception()]
        assert len(answered) < 20  # the burst of 5 and what 5/s refilled, not 400
    for _ in range(50):  # the operators' line says why it closed
        if any("closed: code 1008" in r.getMessage() for r in caplog.records):
            break
        await asyncio.sleep(0.1)
    else:
        pytest.fail("no 'closed: code 1008' line in the log")


async def test_pings_within_the_budget_are_answered(make_server: MakeServer) -> None:
    url = await make_server(rate_per_second=5.0, rate_burst=5.0, flood_close_after=20)
    async with WsClient.connect(url) as c:
        for i in range(4):
            latency = await asyncio.wait_for(await c.ws.ping(bytes([i])), 5.0)
            assert latency >= 0
        await c.send(p.Ping(id=1))  # and the socket carries messages as before
        assert (await c.expect(p.Pong)).id == 1


class RawSocket:
    """A WebSocket client that answers nothing by itself (not even a close frame)."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer

    @classmethod
    async def connect(cls, url: str) -> RawSocket:
        host, port = url.removeprefix("http://").split(":")
        reader, writer = await asyncio.open_connection(host, int(port))
        writer.write(
            b"GET /ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
        )
        await reader.readuntil(b"\r\n\r\n")
        return cls(reader, writer)

    def send(self, opcode: int, payload: bytes) -> None:
        # Masked with a zero key (RFC 6455 allows any key): the payload goes as it is.
        self.writer.write(bytes((0x80 | opcode, 0x80 | len(payload))) + bytes(4) + payload)

    def send_unmasked(self, opcode: int, payload: bytes) -> None:
        """A frame as a server sends it: no mask, which RFC 6455 section 5.1 forbids a
        client."""
        self.writer.write(bytes((0x80 | opcode, len(payload))) + payload)

    async def frames_until_eof(self, limit: float) -> list[tuple[int, bytes]]:
        """Every server frame until the server closes the TCP connection."""
        # Read chunk by chunk, keeping each: StreamReader.read(-1) keeps what it has read in
        # a local list, lost when the connection ends with a reset. The server's kernel resets
        # it when it closes with the client's frames unread (a flood); the frames read before
        # that are what the test looks at.
        return await self._frames(limit, ConnectionResetError)

    async def frames_for(self, seconds: float) -> list[tuple[int, bytes]]:
        """Every server frame read in `seconds`, the connection left open."""
        return await self._frames(seconds, TimeoutError)

    async def _frames(self, seconds: float, expected: type[Exception]) -> list[tuple[int, bytes]]:
        chunks: list[bytes] = []

        async def read_all() -> None:
            while chunk := await self.reader.read(65536):
                chunks.append(chunk)

        with contextlib.suppress(expected):
            await asyncio.wait_for(read_all(), seconds)
        return self._parsed(b"".join(chunks))

    @staticmethod
    def _parsed(data: bytes) -> list[tuple[int, bytes]]:
        frames = []
        while data:
            opcode, size = data[0] & 0x0F, data[1] & 0x7F
            start = 2 if size < 126 else 4
            size = size if size < 126 else int.from_bytes(data[2:4], "big")
            frames.append((opcode, data[start : start + size]))
            data = data[start + size :]
        return frames

    def close(self) -> None:
        self.writer.close()


OP_TEXT, OP_CLOSE, OP_PING = 0x1, 0x8, 0x9


async def test_a_client_that_ignores_our_close_frame_is_cut_at_once(
    make_server: MakeServer,
) -> None:
    url = await make_server(rate_per_second=5.0, rate_burst=5.0, flood_close_after=20)
    raw = await RawSocket.connect(url)
    try:
        for _ in range(100):
            raw.send(OP_PING, b"x")
        await asyncio.sleep(0.2)
        raw.send(OP_PING, b"x")  # still flooding: unread by the server, which resets at its close
        # The close frame comes, and the TCP connection ends soon after it, although the
        # client never answers it (aiohttp's own wait was 10 s).
        frames = await raw.frames_until_eof(limit=5.0)
        assert frames[-1][0] == OP_CLOSE and frames[-1][1][:2] == (1008).to_bytes(2, "big")
    finally:
        raw.close()


async def test_a_finished_rooms_spectator_is_closed_at_the_tcp_level(server_url: str) -> None:
    room = await create_room(server_url, seats=1)
    spy = await RawSocket.connect(server_url)
    try:
        spy.send(OP_TEXT, json.dumps({"type": "watch", "v": 1, "room": room["id"]}).encode())
        async with WsClient.connect(server_url) as ann:
            await race_alone(ann, room["id"])
            await ann.send(p.Resign())
            await ann.expect(p.RaceFinished)
        await asyncio.sleep(0.2)  # the spectator got the finish too
        spy.send(OP_CLOSE, (1000).to_bytes(2, "big"))
        # The server answers the close frame and closes the connection itself.
        frames = await spy.frames_until_eof(limit=5.0)
        finished = [json.loads(f) for op, f in frames if op == OP_TEXT]
        assert finished[-1]["type"] in ("finished", "presence")
        assert frames[-1][0] == OP_CLOSE
    finally:
        spy.close()


@pytest.mark.parametrize("opcode", [0x0, 0x3])  # a continuation of nothing, a reserved opcode
async def test_a_frame_the_websocket_protocol_forbids_is_closed_with_1002(
    server_url: str, opcode: int
) -> None:
    """The code docs/protocol.md section 8 lists for it."""
    raw = await RawSocket.connect(server_url)
    try:
        raw.send(opcode, b"x")
        frames = await raw.frames_until_eof(limit=5.0)
        assert frames[-1][0] == OP_CLOSE
        assert frames[-1][1][:2] == int(p.CloseCode.PROTOCOL_ERROR).to_bytes(2, "big")
    finally:
        raw.close()


@pytest.mark.parametrize("before", ["nothing", "an answered frame", "a frame in the same read"])
async def test_an_unmasked_client_frame_is_closed_with_1002(server_url: str, before: str) -> None:
    """RFC 6455 section 5.1: a server fails the connection at a client frame that is not
    masked (docs/protocol.md section 8), wherever it comes in the stream of frames."""
    raw = await RawSocket.connect(server_url)
    try:
        ping = json.dumps({"type": "ping", "v": 1, "id": 7}).encode()
        masked = bytes((0x80 | OP_TEXT, 0x80 | len(ping))) + bytes(4) + ping
        unmasked = bytes((0x80 | OP_TEXT, len(ping))) + ping
        if before == "an answered frame":
            raw.writer.write(masked)
            size = (await raw.reader.readexactly(2))[1]
            pong = json.loads(await raw.reader.readexactly(size))
            assert pong["type"] == "pong" and pong["id"] == 7
            raw.writer.write(unmasked)
        elif before == "a frame in the same read":
            raw.writer.write(masked + unmasked)
        else:
            raw.writer.write(unmasked)
        frames = await raw.frames_until_eof(limit=5.0)
        assert frames[-1][0] == OP_CLOSE
        assert frames[-1][1][:2] == int(p.CloseCode.PROTOCOL_ERROR).to_bytes(2, "big")
        if before == "nothing":
            assert [op for op, _ in frames] == [OP_CLOSE]  # the ping was not read
    finally:
        raw.close()


async def test_the_first_message_dropped_gets_its_error_after_dropped_control_frames(
    make_server: MakeServer,
) -> None:
    """docs/protocol.md, `rate_limited`: a dropped message (not a move) gets an `error`
    for the first and then every 10th one. WebSocket pings dropped before it are left
    unanswered, and do not use up the first message's error."""
    url = await make_server(rate_per_second=1.0, rate_burst=2.0, flood_close_after=50)
    raw = await RawSocket.connect(url)
    try:
        for _ in range(6):
            raw.send(OP_PING, b"x")  # the burst of 2 answered, 4 dropped
        raw.send(OP_TEXT, json.dumps({"type": "ping", "v": 1, "id": 1}).encode())
        frames = await raw.frames_for(1.0)
        texts = [json.loads(f) for op, f in frames if op == OP_TEXT]
        assert [t.get("code") for t in texts if t["type"] == "error"] == ["rate_limited"], texts
        assert [op for op, _ in frames].count(0xA) == 2  # the burst's pongs
    finally:
        raw.close()


FAILED_AT_ONCE = {  # a frame the server cannot read on, and the code it fails the socket with
    "unmasked": (bytes((0x80 | OP_TEXT, 2)) + b"{}", 1002),
    "not UTF-8": (bytes((0x80 | OP_TEXT, 0x80 | 1)) + bytes(4) + b"\xff", 1007),
    "over max_frame": (bytes((0x80 | OP_TEXT, 0x80 | 127)) + (2**20).to_bytes(8, "big"), 1009),
}


@pytest.mark.parametrize("case", FAILED_AT_ONCE)
async def test_a_frame_the_server_cannot_read_on_ends_the_connection_at_once(
    server_url: str, case: str
) -> None:
    """docs/protocol.md section 8: after 1002, 1007 and 1009 the server closes the TCP
    connection right after its close frame (RFC 6455 7.1.7, failing the connection),
    without waiting for the client's close frame as its other closes do."""
    frame, code = FAILED_AT_ONCE[case]
    raw = await RawSocket.connect(server_url)
    try:
        raw.writer.write(frame)
        loop = asyncio.get_running_loop()
        sent = loop.time()
        frames = await raw.frames_until_eof(limit=5.0)
        assert loop.time() - sent < 1.0  # well before the 10 s a close handshake may take
        assert frames == [(OP_CLOSE, code.to_bytes(2, "big"))]
    finally:
        raw.close()
