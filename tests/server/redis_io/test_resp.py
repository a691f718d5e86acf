"""The lean pipelined Redis connection of the move path, against a real redis-server."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from redis.asyncio import Redis
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError
from support.ports import free_port
from support.redis_cluster import wait_up

from server.redis_io.resp import RespConnection, tcp_address


def connection_for(redis_url: str, db: int = 0) -> RespConnection:
    address = tcp_address(Redis.from_url(redis_url).connection_pool.connection_kwargs)
    assert address is not None
    return RespConnection(*address, db=db)


async def test_a_batch_gets_its_replies_in_order_with_errors_in_place(redis_url: str) -> None:
    resp = connection_for(redis_url)
    try:
        replies = await resp.execute(
            [
                ("DEL", "resp:k"),
                ("SET", "resp:k", "text"),
                ("INCR", "resp:k"),  # not a number: an error, in its place
                ("GET", "resp:k"),
                ("EVALSHA", "0" * 40, 0),
                ("EVAL", "return {'ok', 7, false}", 0),
            ]
        )
        assert replies[0] in (0, 1) and replies[1] == b"OK"
        assert isinstance(replies[2], ResponseError)
        assert replies[3] == b"text"
        assert isinstance(replies[4], ResponseError) and "NOSCRIPT" in str(replies[4])
        assert replies[5] == [b"ok", 7, None]
        # Batches sent together are answered each with its own replies.
        first, second = await asyncio.gather(
            resp.execute([("ECHO", "a"), ("ECHO", "b")]), resp.execute([("ECHO", "c")])
        )
        assert (first, second) == ([b"a", b"b"], [b"c"])
    finally:
        await resp.execute([("DEL", "resp:k")])
        await resp.close()


async def test_the_database_of_the_url_is_selected(redis_url: str) -> None:
    resp = connection_for(redis_url, db=3)
    other = Redis.from_url(redis_url.rsplit("/", 1)[0] + "/3")
    try:
        await resp.execute([("SET", "resp:db", "three")])
        assert await other.get("resp:db") == b"three"
    finally:
        await other.delete("resp:db")
        await other.aclose()
        await resp.close()


async def test_a_lost_connection_fails_the_batch_in_flight_then_reconnects(
    redis_url: str,
) -> None:
    resp = connection_for(redis_url)
    admin = Redis.from_url(redis_url)
    try:
        [client_id] = await resp.execute([("CLIENT", "ID")])
        waiting = asyncio.ensure_future(resp.execute([("BLPOP", "resp:never", 30)]))
        await asyncio.sleep(0.1)
        await admin.execute_command("CLIENT", "KILL", "ID", client_id)
        with pytest.raises(RedisConnectionError):
            await asyncio.wait_for(waiting, 10)
        assert await resp.execute([("PING",)]) == [b"PONG"]
    finally:
        await admin.aclose()
        await resp.close()


def test_only_plain_tcp_is_handled() -> None:
    assert tcp_address({"path": "/tmp/redis.sock"}) is None
    assert tcp_address({"host": "h", "port": 1, "ssl": True}) is None
    assert tcp_address({"host": "h", "port": 7000, "db": 2}) == ("h", 7000)
    assert tcp_address({}) == ("127.0.0.1", 6379)


async def test_a_reply_that_does_not_come_fails_its_batch_after_the_deadline(
    tmp_path: Path,
) -> None:
    """A Redis that stops answering (SIGSTOP: the connection stays up) must not stall
    every move behind the first: the batch fails after the deadline, and once Redis
    answers again the next call gets through on a fresh connection."""
    port = free_port()
    proc = subprocess.Popen(
        ["redis-server", "--port", str(port), "--save", "", "--dir", str(tmp_path)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_up(port, proc)
        resp = RespConnection("127.0.0.1", port, reply_deadline=0.4)
        assert await resp.execute([("PING",)]) == [b"PONG"]
        proc.send_signal(signal.SIGSTOP)
        started = time.monotonic()
        with pytest.raises(RedisTimeoutError):
            await asyncio.wait_for(resp.execute([("PING",)]), 5.0)
        assert 0.4 <= time.monotonic() - started < 2.0
        proc.send_signal(signal.SIGCONT)
        assert await resp.execute([("PING",)]) == [b"PONG"]
        await resp.close()
    finally:
        proc.send_signal(signal.SIGCONT)
        proc.kill()
        proc.wait(5)


@contextlib.contextmanager
def closing_endpoint() -> Iterator[int]:
    """A TCP port that accepts each connection and closes it at once, from a thread of its
    own (as a proxy in front of a restarting Redis does, from another process: its close
    is on the wire before the client has written anything)."""
    listener = socket.create_server(("127.0.0.1", 0))
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            with contextlib.suppress(OSError):
                accepted, _ = listener.accept()
                accepted.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield listener.getsockname()[1]
    finally:
        stop.set()
        listener.close()
        thread.join(5)


@pytest.mark.parametrize("resp3", [True, False])
async def test_connections_closed_as_soon_as_accepted_fail_every_call(resp3: bool) -> None:
    # A connection lost before its HELLO (or AUTH) was sent once made the connect wait for
    # itself: every call after it, and the pub/sub feed's reconnect, hung for good.
    with closing_endpoint() as port:
        resp = RespConnection("127.0.0.1", port, resp3=resp3, password="secret")
        for _ in range(20):
            with pytest.raises(RedisConnectionError):
                await asyncio.wait_for(resp.execute([("PING",)]), 10)
        await resp.close()
