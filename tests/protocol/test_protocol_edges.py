"""The edges of the protocol as docs/protocol.md states them: the frame size cap, integers
JSON can carry and Python cannot read, errors of the HTTP parser, quick match's answers."""

from __future__ import annotations

import asyncio
import json
import logging

import aiohttp
import msgpack
import pytest
import websockets
from support.servers import MakeServer
from support.wsclient import WsClient

import protocol as p


def padded_ping(size: int, binary: bool) -> bytes | str:
    """A ping frame of exactly `size` bytes (an unknown field pads it: it is ignored)."""
    message = {"type": "ping", "v": 1, "id": 7, "pad": ""}
    encode = (lambda m: msgpack.packb(m)) if binary else (lambda m: json.dumps(m).encode())
    message["pad"] = "x" * (size - len(encode(message)))
    while len(encode(message)) > size:  # msgpack's string header grows with the string
        message["pad"] = message["pad"][:-1]
    data = encode(message)
    assert len(data) == size
    return data if binary else data.decode()


@pytest.mark.parametrize("binary", [True, False])
async def test_a_frame_of_exactly_max_frame_bytes_is_accepted(
    make_server: MakeServer, binary: bool, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    url = await make_server(max_frame=1024)
    async with WsClient.connect(url, binary=binary) as c:
        await c.send_raw(padded_ping(1024, binary))
        assert (await c.expect(p.Pong)).id == 7
        await c.send_raw(padded_ping(1025, binary))  # over it: closed
        with pytest.raises(websockets.ConnectionClosed) as closed:
            await c.recv()
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 1009
    # The operators' line says the code the socket was closed with.
    for _ in range(50):
        if any(" closed: code " in r.getMessage() for r in caplog.records):
            break
        await asyncio.sleep(0.05)
    [line] = [r.getMessage() for r in caplog.records if " closed: code " in r.getMessage()]
    assert " closed: code 1009 " in line, line


@pytest.mark.parametrize("field", ["id", "seq"])
async def test_a_json_integer_too_long_for_python_is_a_bad_message(
    server_url: str, field: str
) -> None:
    digits = "9" * 4301  # Python refuses to convert more than 4,300 digits
    kind = "ping" if field == "id" else "move"
    text = f'{{"type": "{kind}", "v": 1, "{field}": {digits}, "move": "t1 c1"}}'
    async with WsClient.connect(server_url, binary=False) as c:
        await c.send_raw(text)
        error = await c.expect(p.Error)
        assert error.code == "bad_message" and error.request == kind, error
        await c.send(p.Ping(id=1))  # the socket stays open
        assert (await c.expect(p.Pong)).id == 1
    # The same from the protocol module itself, as any client or server uses it.
    decoded = p.decode_json(text)
    assert isinstance(decoded, p.Unexpected) and decoded.code == p.ErrorCode.BAD_MESSAGE


async def test_every_quick_is_answered_queued_before_matched(make_server: MakeServer) -> None:
    one, two = await make_server(), await make_server()
    for first, second in ((one, two), (one, one)):
        async with WsClient.connect(first) as ann, WsClient.connect(second) as bo:
            await ann.send(p.QuickMatch(game="stalactites", name="ann"))
            assert isinstance(await ann.recv(), p.Queued)
            await bo.send(p.QuickMatch(game="stalactites", name="bo"))
            # The second player too: queued, then matched (a client waits for both).
            assert [type(await bo.recv()) for _ in range(2)] == [p.Queued, p.Matched]
            assert isinstance(await ann.recv(), p.Matched)


async def test_a_quick_cancel_is_answered_unqueued(make_server: MakeServer) -> None:
    """A client can tell that its cancel took: `unqueued` says the socket is out of the
    queue (free to ask again, or to join a room), also when it was in none; a cancel that
    came too late is answered by the partner's `matched` instead (the test of that race is
    in tests/server/handlers/test_moves_board_behind.py)."""
    url = await make_server()
    cancel = '{"type": "quick_cancel", "v": 1}'
    async with WsClient.connect(url, binary=False) as ann:
        await ann.send(p.QuickMatch(game="stalactites", name="ann"))
        await ann.expect(p.Queued)
        await ann.send_raw(cancel)
        answer = json.loads(await asyncio.wait_for(ann.ws.recv(), 5.0))
        assert answer == {"type": "unqueued", "v": 1, "game": "stalactites"}
        async with WsClient.connect(url) as bo:  # ann left the queue: nobody for bo
            await bo.send(p.QuickMatch(game="stalactites", name="bo"))
            await bo.expect(p.Queued)
            assert await bo.quiet(0.5) == []
        await ann.send_raw(cancel)  # in no queue: nothing to cancel, and it says so
        answer = json.loads(await asyncio.wait_for(ann.ws.recv(), 5.0))
        assert answer == {"type": "unqueued", "v": 1}


PARSER_ERRORS = {
    "a 9,000-byte path": b"GET /" + b"a" * 9000 + b" HTTP/1.1\r\nHost: x\r\n\r\n",
    "a method that is no HTTP token": b"G(T /rooms HTTP/1.1\r\nHost: x\r\n\r\n",
    "a huge header": b"GET /rooms HTTP/1.1\r\nHost: x\r\nX-Big: " + b"b" * 9000 + b"\r\n\r\n",
    "a bad Content-Length": b"POST /rooms HTTP/1.1\r\nHost: x\r\nContent-Length: ten\r\n\r\n",
    "a negative Content-Length": b"POST /rooms HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n",
}


async def raw_request(url: str, request: bytes) -> tuple[str, dict[str, str], bytes]:
    host, port = url.removeprefix("http://").split(":")
    reader, writer = await asyncio.open_connection(host, int(port))
    try:
        writer.write(request)
        answer = await asyncio.wait_for(reader.read(), 5.0)  # the server closes after it
    finally:
        writer.close()
    head, _, body = answer.partition(b"\r\n\r\n")
    status, *lines = head.decode("latin-1").split("\r\n")
    headers = {k.lower(): v.strip() for k, v in (line.split(":", 1) for line in lines)}
    return status, headers, body


async def bad_requests_counted(url: str) -> float:
    """solrace_http_errors_total{code="bad_request"} as /metrics says it now."""
    async with aiohttp.ClientSession() as http, http.get(f"{url}/metrics") as r:
        text = await r.text()
    for line in text.splitlines():
        if line.startswith('solrace_http_errors_total{code="bad_request"}'):
            return float(line.rsplit(" ", 1)[1])
    return 0.0


@pytest.mark.parametrize("case", PARSER_ERRORS)
async def test_errors_of_the_http_parser_are_json_and_no_error_in_the_log(
    server_url: str, case: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    counted = await bad_requests_counted(server_url)
    for _ in range(2):  # the first request of a connection and any other are alike
        status, headers, body = await raw_request(server_url, PARSER_ERRORS[case])
        assert status.split(" ")[1] == "400", status
        assert headers["content-type"].startswith("application/json")
        error = json.loads(body)["error"]
        assert error["code"] == "bad_request" and 0 < len(error["message"]) <= 200, error
    # A client's fault is never an ERROR line, nor a traceback.
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info]
    assert any("bad request from 127.0.0.1" in r.getMessage() for r in caplog.records)
    # ... and counted, as every HTTP error answer is.
    assert await bad_requests_counted(server_url) == counted + 2


@pytest.mark.parametrize("field", ["seats", "time_limit", "spectator_delay", "grace", "countdown"])
async def test_a_number_too_big_for_a_float_is_a_bad_request(
    server_url: str, field: str, caplog: pytest.LogCaptureFixture
) -> None:
    body = f'{{"game": "shaula", "{field}": 1{"0" * 400}}}'
    async with (
        aiohttp.ClientSession() as http,
        http.post(f"{server_url}/rooms", data=body) as r,
    ):
        assert r.status == 400, await r.text()
        assert (await r.json())["error"]["code"] == "bad_request"
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info]


@pytest.mark.parametrize("method", ["FOO", "FETCH", "get"])  # methods are case-sensitive
async def test_an_unknown_well_formed_method_is_405_with_what_is_allowed(
    server_url: str, method: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    counted = await bad_requests_counted(server_url)
    cases = {"/rooms": "GET,HEAD,POST", "/rooms/nope/results?x=1": "GET,HEAD"}
    for path, allowed in cases.items():
        request = f"{method} {path} HTTP/1.1\r\nHost: x\r\n\r\n".encode()
        status, headers, body = await raw_request(server_url, request)
        assert status.split(" ")[1] == "405", status
        assert headers["allow"] == allowed
        error = json.loads(body)["error"]
        assert error["code"] == "bad_request", error
        assert method in error["message"] and allowed in error["message"], error
    assert await bad_requests_counted(server_url) == counted + len(cases)
    # On a path that does not exist, as with any method: 404.
    status, _, body = await raw_request(server_url, f"{method} /nowhere HTTP/1.1\r\n\r\n".encode())
    assert status.split(" ")[1] == "404" and json.loads(body)["error"]["code"] == "not_found"
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info]


@pytest.mark.parametrize("binary", [True, False])
async def test_an_error_carries_only_the_seq_or_id_its_request_has(
    server_url: str, binary: bool
) -> None:
    """Section 5: an `error` names its request with the `seq` of a `move` or `undo` and
    the `id` of a `ping`. A `seq` or `id` on another message is an unknown field, ignored:
    it was sent back when that message was refused as unreadable (and not when it was
    read), so a client settling its moves by `seq` took a `ready`'s error for a move's. A
    type this server does not know keeps both: it may be a newer client's request."""
    encode = msgpack.packb if binary else json.dumps
    cases: list[tuple[dict[str, object], dict[str, object]]] = [
        ({"type": "ready", "v": 1, "ready": "yes", "seq": 5, "id": 6}, {"request": "ready"}),
        ({"type": "ready", "v": 2, "seq": 5}, {"request": "ready"}),  # bad_version
        ({"type": "join", "v": 1, "seq": 5}, {"request": "join"}),  # a field missing
        ({"type": "ping", "v": 1, "id": "x", "seq": 5}, {"request": "ping"}),
        ({"type": "ping", "v": 2, "id": 4, "seq": 5}, {"request": "ping", "id": 4}),
        ({"type": "move", "v": 1, "seq": 5, "id": 6, "move": 7}, {"request": "move", "seq": 5}),
        ({"type": "undo", "v": 9, "seq": 5, "id": 6}, {"request": "undo", "seq": 5}),
        ({"type": "ready", "v": 1, "seq": 5, "id": 6}, {"request": "ready"}),  # read: not_joined
        ({"type": "fly", "v": 1, "seq": 5, "id": 6}, {"request": "fly", "seq": 5, "id": 6}),
    ]
    async with WsClient.connect(server_url, binary=binary) as c:
        for sent, names in cases:
            await c.send_raw(encode(sent))
            error = await c.expect(p.Error)
            assert (error.request, error.seq, error.id) == (
                names["request"],
                names.get("seq"),
                names.get("id"),
            ), (sent, error)


@pytest.mark.parametrize("binary", [True, False])
async def test_a_value_nested_too_deeply_is_a_bad_frame_that_says_so(
    server_url: str, binary: bool
) -> None:
    """Section 7: a frame whose value nests deeper than the decoder goes is `bad_frame`
    (it was answered "not a JSON object" for a JSON object, "not a msgpack map" for a
    map); an unknown field nested as deep as any message could want is ignored."""

    def ping(depth: int) -> bytes | str:
        if binary:
            return b"\x84\xa4type\xa4ping\xa1v\x01\xa2id\x07\xa3pad" + b"\x91" * depth + b"\x00"
        return '{"type": "ping", "v": 1, "id": 7, "pad": ' + "[" * depth + "]" * depth + "}"

    async with WsClient.connect(server_url, binary=binary) as c:
        await c.send_raw(ping(100))
        assert (await c.expect(p.Pong)).id == 7
        await c.send_raw(ping(5000))
        error = await c.expect(p.Error)
        assert error.code == "bad_frame" and "nested too deeply" in error.message, error
        await c.send_raw(ping(100))  # the socket stays open
        assert (await c.expect(p.Pong)).id == 7


@pytest.mark.parametrize("binary", [True, False])
async def test_a_map_without_a_readable_type_is_judged_on_its_version_first(
    server_url: str, binary: bool
) -> None:
    """Section 7: a message wrong in more than one way is refused for the first of
    bad_frame, bad_version, unknown_type, bad_message. A map whose `v` is not 1 and whose
    `type` is missing or no string was answered `unknown_type`: a client of another
    protocol version was told its message type was wrong, not its version."""
    encode = msgpack.packb if binary else json.dumps
    cases: list[tuple[dict[str, object], str]] = [
        ({}, "bad_version"),
        ({"v": 2}, "bad_version"),
        ({"type": 5, "v": 2}, "bad_version"),
        ({"type": None}, "bad_version"),
        ({"type": 5, "v": 1}, "unknown_type"),
        ({"v": 1}, "unknown_type"),
    ]
    async with WsClient.connect(server_url, binary=binary) as c:
        for sent, code in cases:
            await c.send_raw(encode(sent))
            error = await c.expect(p.Error)
            assert (error.code, error.request, error.seq) == (code, None, None), (sent, error)
