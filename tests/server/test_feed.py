"""The pub/sub feeds: messages reach their handlers, and the lean one survives a drop."""

import asyncio

from redis.asyncio import Redis

from server.feed import LeanFeed, RedisFeed, make_feed


async def until(condition: object, seconds: float = 5.0) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    while not condition():  # type: ignore[operator]
        assert loop.time() < deadline, "timed out"
        await asyncio.sleep(0.01)


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
        await feed.unsubscribe("t:feed")
        await redis.publish("t:feed", b"late")
        await asyncio.sleep(0.1)
        assert len(got) == 50
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
