"""The pub/sub feeds: messages reach their handlers, and the lean one survives a drop."""

import asyncio
import signal
import subprocess
from pathlib import Path
from typing import Any

import pytest
from redis.asyncio import Redis
from support.ports import free_port
from support.redis_cluster import wait_up
from support.tcp_relay import tcp_relay
from support.waiting import until

import server.storage.feed
from server.redis_io.batcher import LuaScript, ScriptBatcher
from server.redis_io.resp import RespConnection
from server.storage.feed import LeanFeed, RedisFeed, make_feed

INCR_SOURCE = "return redis.call('INCR', KEYS[1])"


INCR = LuaScript("incr", INCR_SOURCE)


async def test_both_feeds_deliver_in_order(redis_url: str) -> None:
    redis = Redis.from_url(redis_url)
    lean = make_feed(redis)
    assert isinstance(lean, LeanFeed)
    for feed in (lean, RedisFeed(redis)):
        await feed.start()
        got: list[bytes] = []
        await feed.subscribe("t:feed", got.append)
        for i in range(50):
            await redis.publish("t:feed", b"m%d" % i)
        await until(lambda got=got: len(got) == 50)
        assert got == [b"m%d" % i for i in range(50)]
        await feed.unsubscribe("t:feed", got.append)
        await redis.publish("t:feed", b"late")
        await asyncio.sleep(0.1)
        assert len(got) == 50
        await feed.stop()
    await redis.aclose()


async def test_a_channel_subscribed_again_keeps_its_new_handler(redis_url: str) -> None:
    """The unsubscribe of a handler that was replaced (a room closed and opened again at
    once) takes nothing away from the new one."""
    redis = Redis.from_url(redis_url)
    lean = make_feed(redis)
    assert isinstance(lean, LeanFeed)
    for feed in (lean, RedisFeed(redis)):
        await feed.start()
        old: list[bytes] = []
        new: list[bytes] = []
        await feed.subscribe("t:again-owner", old.append)
        await feed.subscribe("t:again-owner", new.append)
        await feed.unsubscribe("t:again-owner", old.append)  # late: not its channel now
        await redis.publish("t:again-owner", b"m")
        await until(lambda new=new: new == [b"m"])
        assert old == []
        await feed.unsubscribe("t:again-owner", new.append)
        await redis.publish("t:again-owner", b"late")
        await asyncio.sleep(0.1)
        assert new == [b"m"]
        await feed.stop()
    await redis.aclose()


async def test_the_lean_feed_comes_back_after_its_connection_is_killed(redis_url: str) -> None:
    redis = Redis.from_url(redis_url)
    feed = make_feed(redis)
    assert isinstance(feed, LeanFeed)
    await feed.start()
    got: list[bytes] = []
    await feed.subscribe("t:again", got.append)
    await redis.execute_command("CLIENT", "KILL", "TYPE", "pubsub")

    async def published() -> bool:
        return bool(await redis.publish("t:again", b"back"))  # receivers count

    loop = asyncio.get_running_loop()
    deadline = loop.time() + 5
    while not await published():
        assert loop.time() < deadline
        await asyncio.sleep(0.05)
    await until(lambda: b"back" in got)
    await feed.stop()
    await redis.aclose()


async def test_the_feed_shares_the_move_paths_resp3_connection(redis_url: str) -> None:
    """Pub/sub messages come as pushes between the scripts' replies on one connection: the
    batcher's replies stay in step, and nothing published is lost or misread as a reply."""

    redis = Redis.from_url(redis_url)
    batcher = ScriptBatcher(redis)
    assert isinstance(batcher.lean, RespConnection) and batcher.lean.resp3
    feed = make_feed(redis, batcher.lean)
    assert isinstance(feed, LeanFeed)
    await feed.start()
    got: list[bytes] = []
    await feed.subscribe("t:shared", got.append)
    key = f"t:shared:{id(feed)}"
    await redis.delete(key)

    async def one(i: int) -> int:
        await redis.publish("t:shared", b"m%d" % i)
        reply: int = await batcher.call(INCR, (key,), ())
        return reply

    replies = await asyncio.gather(*(one(i) for i in range(50)))
    assert sorted(replies) == list(range(1, 51))
    await until(lambda: len(got) == 50)
    assert sorted(got) == sorted(b"m%d" % i for i in range(50))  # published concurrently
    # One connection for both: the batcher's carries the subscriptions, in RESP3.
    resp: Any = batcher.lean
    host, port = resp._protocol.transport.get_extra_info("sockname")[:2]
    (shared,) = [c for c in await redis.client_list() if c["addr"] == f"{host}:{port}"]
    assert shared["resp"] == "3" and int(shared["sub"]) == 2  # control + t:shared
    await feed.stop()
    await batcher.close()
    await redis.aclose()


async def test_a_shared_feed_comes_back_after_its_connection_is_killed(redis_url: str) -> None:

    redis = Redis.from_url(redis_url)
    batcher = ScriptBatcher(redis)
    feed = make_feed(redis, batcher.lean)
    await feed.start()
    again: list[int] = []
    feed.on_reconnect = lambda: again.append(1)  # type: ignore[union-attr]
    got: list[bytes] = []
    await feed.subscribe("t:shared-again", got.append)
    resp: Any = batcher.lean
    host, port = resp._protocol.transport.get_extra_info("sockname")[:2]
    await redis.client_kill(f"{host}:{port}")
    await until(lambda: again == [1])  # subscribed again, and the rooms told to catch up
    await redis.publish("t:shared-again", b"back")
    await until(lambda: got == [b"back"])
    key = f"t:shared-again:{id(feed)}"
    assert await batcher.call(INCR, (key,), ()) >= 1  # the moves go on, on the same connection
    await feed.stop()
    await batcher.close()
    await redis.aclose()


async def test_an_idle_subscription_that_went_silent_is_made_again(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A frozen Redis keeps the connection up and says nothing: the idle feed pings it,
    gets no answer, drops the connection and makes it again once Redis answers."""
    # Half a second: a ping's answer then has that long on a loaded machine, where 0.2 s
    # took a live Redis for a silent one.
    monkeypatch.setattr(server.storage.feed, "IDLE_CHECK", 0.5)
    port = free_port()
    proc = subprocess.Popen(
        ["redis-server", "--port", str(port), "--save", "", "--dir", str(tmp_path)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_up(port, proc)
        feed = LeanFeed([("127.0.0.1", port)], None, None)
        reconnected: list[bool] = []
        feed.on_reconnect = lambda: reconnected.append(True)
        await feed.start()
        first = feed._protocol
        await asyncio.sleep(1.5)  # idle but alive: its pings are answered
        assert feed._protocol is first and not reconnected
        proc.send_signal(signal.SIGSTOP)
        await until(lambda: feed._protocol is not first, 5.0)
        proc.send_signal(signal.SIGCONT)
        await until(lambda: bool(reconnected), 10.0)
        got: list[bytes] = []
        await feed.subscribe("t:idle", got.append)
        redis = Redis(port=port)
        await redis.publish("t:idle", b"still here")
        await until(lambda: got == [b"still here"])
        await redis.aclose()
        await feed.stop()
    finally:
        proc.send_signal(signal.SIGCONT)
        proc.kill()
        proc.wait(5)


async def test_the_feed_says_it_is_down_until_every_channel_is_subscribed_again(
    redis_url: str,
) -> None:
    # Through a relay that refuses connections for a while, then accepts them again: the
    # health check (/healthz) must hear that events cannot arrive meanwhile.
    redis = Redis.from_url(redis_url)
    port = int(redis_url.rsplit(":", 1)[1].split("/")[0])
    async with tcp_relay(port) as relay:
        batcher = ScriptBatcher(Redis.from_url(relay.redis_url))
        feed = make_feed(batcher.redis, batcher.lean)
        await feed.start()
        got: list[bytes] = []
        await feed.subscribe("t:down-until", got.append)
        assert feed.problem() is None
        await relay.refuse()
        relay.cut()
        await until(lambda: feed.problem() is not None)
        await asyncio.sleep(0.5)  # reconnect attempts refused meanwhile
        assert feed.problem() is not None
        await relay.listen()
        await until(lambda: feed.problem() is None)
        await redis.publish("t:down-until", b"back")
        await until(lambda: got == [b"back"])
        await feed.stop()
        await batcher.close()
        await batcher.redis.aclose()
    await redis.aclose()
