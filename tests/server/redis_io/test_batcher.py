"""The script batcher's own paths, against a real redis-server: the everyday one (a batch
written at once, its replies handed out from the connection's reader) and the reload of
functions Redis does not know, which must send again only the calls that did not run."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

from redis.asyncio import Redis

from server.redis_io.batcher import LuaScript, ScriptBatcher

INCR = LuaScript("incr", "return redis.call('INCR', KEYS[1])")
INCR_BY = LuaScript("incr_by", "return redis.call('INCRBY', KEYS[1], ARGV[1])")


async def test_a_call_with_nothing_in_flight_goes_out_at_once_and_the_rest_share_a_batch(
    redis_url: str,
) -> None:
    redis = Redis.from_url(redis_url)
    batcher = ScriptBatcher(redis)
    key = f"batch:{uuid.uuid4().hex}"
    try:
        await redis.function_load(INCR_BY.library, replace=True)
        await batcher.call(INCR_BY, (key,), (0,))  # connected
        before = batcher.pipelines
        first = asyncio.ensure_future(batcher.call(INCR_BY, (key,), (1,)))
        await asyncio.sleep(0)  # the call runs: nothing in flight, so it is written now
        assert batcher.pipelines == before + 1
        replies = await asyncio.gather(*(batcher.call(INCR_BY, (key,), (n,)) for n in range(2, 6)))
        assert await first == 1
        assert replies == [3, 6, 10, 15]
        assert batcher.pipelines == before + 2  # the four of one tick: one batch
    finally:
        await batcher.close()
        await redis.aclose()


async def test_a_posted_call_hands_its_reply_or_its_error_to_its_callback_as_it_is_read(
    redis_url: str,
) -> None:
    redis = Redis.from_url(redis_url)
    batcher = ScriptBatcher(redis)
    key = f"batch:{uuid.uuid4().hex}"
    seen: list[Any] = []

    def refused(reply: Any) -> None:
        raise ValueError(f"not {reply}")

    try:
        await redis.function_load(INCR.library, replace=True)
        await redis.function_load(INCR_BY.library, replace=True)
        batcher.post(INCR, (key,), (), (), seen.append)
        waiting = asyncio.ensure_future(batcher.call(INCR, (key,), ()))
        read_before_resumed = False
        while not waiting.done():
            await asyncio.sleep(0)
            read_before_resumed |= bool(seen) and not waiting.done()
        assert read_before_resumed  # handed out as read, before the waiting task ran
        assert seen == [1] and await waiting == 2
        batcher.post(INCR, (key,), (), (), refused)  # what it raises is logged, not read on
        assert await batcher.call(INCR, (key,), ()) == 4  # the connection reads on
        batcher.post(INCR_BY, (key,), ("x",), (), seen.append)  # an error reply
        assert await batcher.call(INCR, (key,), ()) == 5
        assert len(seen) == 2 and isinstance(seen[1], Exception)
    finally:
        await batcher.close()
        await redis.aclose()


async def test_only_the_calls_redis_did_not_know_are_sent_again(redis_url: str) -> None:
    redis = Redis.from_url(redis_url)
    batcher = ScriptBatcher(redis)
    known, unknown = f"batch:{uuid.uuid4().hex}", f"batch:{uuid.uuid4().hex}"
    try:
        await batcher.call(INCR, (known,), ())  # connected, loaded when Redis did not know it
        await redis.function_flush()  # as a Redis that lost its data would have
        await redis.function_load(INCR.library)  # INCR known again, INCR_BY not
        replies = await asyncio.gather(
            batcher.call(INCR, (known,), ()),
            batcher.call(INCR_BY, (unknown,), (5,)),
            batcher.call(INCR, (known,), ()),
        )
        assert list(replies) == [2, 5, 3]
        assert int(await redis.get(known)) == 3 and int(await redis.get(unknown)) == 5
    finally:
        await batcher.close()
        await redis.aclose()


async def test_a_lost_connection_fails_the_calls_in_flight_and_the_next_reconnects(
    redis_url: str,
) -> None:
    redis = Redis.from_url(redis_url)
    batcher = ScriptBatcher(redis)
    key = f"batch:{uuid.uuid4().hex}"
    try:
        await redis.function_load(INCR.library, replace=True)
        await batcher.call(INCR, (key,), ())
        resp: Any = batcher._resp
        transport = resp._protocol.transport
        host, port = transport.get_extra_info("sockname")[:2]
        await redis.client_kill(f"{host}:{port}")  # the batcher's own connection only
        await asyncio.sleep(0.1)  # its reader sees the close
        assert await batcher.call(INCR, (key,), ()) == 2  # on a new connection
        assert resp.reconnects >= 1
    finally:
        await batcher.close()
        await redis.aclose()
