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


async def test_on_reply_runs_as_the_reply_is_read_and_what_it_raises_is_the_callers(
    redis_url: str,
) -> None:
    redis = Redis.from_url(redis_url)
    batcher = ScriptBatcher(redis)
    key = f"batch:{uuid.uuid4().hex}"
    seen: list[Any] = []

    def doubled(reply: Any) -> Any:
        seen.append(reply)
        return reply * 2

    def refused(reply: Any) -> Any:
        raise ValueError(f"not {reply}")

    try:
        await redis.function_load(INCR.library, replace=True)
        call = asyncio.ensure_future(batcher.call(INCR, (key,), (), on_reply=doubled))
        read_before_resumed = False
        while not call.done():
            await asyncio.sleep(0)
            read_before_resumed |= bool(seen) and not call.done()
        assert read_before_resumed  # the caller's task ran again after on_reply, not before
        assert seen == [1] and await call == 2
        try:
            await batcher.call(INCR, (key,), (), on_reply=refused)
        except ValueError as exc:
            assert str(exc) == "not 2"
        else:
            raise AssertionError("on_reply's error must reach the caller")
        assert await batcher.call(INCR, (key,), ()) == 3  # the connection reads on
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
