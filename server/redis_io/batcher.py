"""Send the calls of our Lua functions that arrive together as one Redis pipeline.

One redis-py round trip costs about 100 µs of client CPU (shared/BASELINES.md), so one call
per move cannot keep up under load. `ScriptBatcher.call` queues the call and waits for its
reply. A call made while nothing is on its way to Redis goes out at once, alone: at an
everyday rate that is nearly every move, and waiting for the end of the tick only delayed
it by a round of the event loop. Otherwise the queue goes out as one pipeline of FCALL
commands at the end of the event-loop tick (`call_soon`), and while `max_inflight`
pipelines are already on their way the calls wait for one of them to come back: under
load the batches grow instead of the number of round trips (a pipeline per tick, each
waiting for a pooled connection, made moves wait tens of milliseconds). A function is
loaded when Redis answers that it does not know it (a new Redis, or one that lost its
data), and the calls that did not run are sent again.
"""

from __future__ import annotations

import asyncio
import hashlib
import importlib.resources
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from redis.asyncio import RedisCluster
from redis.exceptions import BusyLoadingError, NoScriptError, ResponseError

from server.redis_io.connect import AnyRedis, LeanClient, lean_client
from server.redis_io.resp import RespConnection
from server.redis_io.resp_encode import encode_fcall

__all__ = ["LuaScript", "ScriptBatcher", "load_script"]

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class LuaScript:
    """A script of ours, called as a Redis Function (FCALL): Redis keeps a function
    library in its data (the append-only file, the replicas), so a Redis restarted with
    its data, or a replica promoted, still knows it, where EVALSHA's script cache starts
    empty (NOSCRIPT, a load and the calls again). The library's and the function's names
    carry the source's digest: processes of two versions of solrace on one Redis (a
    rolling deploy) each call their own. `prelude` runs once, when the library is loaded,
    not on every call."""

    name: str
    body: str
    prelude: str = field(default="", kw_only=True)
    function: str = field(init=False)
    library: str = field(init=False)  # the FUNCTION LOAD text

    def __post_init__(self) -> None:
        digest = hashlib.sha1((self.prelude + self.body).encode()).hexdigest()[:16]
        function = f"solrace_{self.name}_{digest}"
        object.__setattr__(self, "function", function)
        # The body is the function's, with KEYS and ARGV as its parameters (the names a
        # script has them under).
        library = (
            f"#!lua name={function}\n{self.prelude}"
            f"redis.register_function('{function}', function(KEYS, ARGV)\n{self.body}\nend)\n"
        )
        object.__setattr__(self, "library", library)


def load_script(name: str, prelude: str = "") -> LuaScript:
    """A script from server/storage/lua/NAME.lua after `prelude` (definitions it shares with
    Python, e.g. the checklist's verdicts)."""
    body = importlib.resources.files("server.storage").joinpath(f"lua/{name}.lua").read_text()
    return LuaScript(name, body, prelude=prelude)


class _Call:
    """One queued call (a plain class: a dataclass with a default_factory costs a few µs
    per move here): its reply goes to `future` (`ScriptBatcher.call`), or to `on_reply`,
    the error too (`ScriptBatcher.post`)."""

    __slots__ = ("args", "fixed", "future", "keys", "on_reply", "script")

    def __init__(
        self,
        script: LuaScript,
        keys: tuple[str, ...],
        args: tuple[Any, ...],
        fixed: tuple[Any, ...],
        future: asyncio.Future[Any] | None,
        on_reply: Callable[[Any], None] | None,
    ) -> None:
        self.script, self.keys, self.args, self.fixed = script, keys, args, fixed
        self.future, self.on_reply = future, on_reply

    def fcall_args(self) -> tuple[Any, ...]:
        """The arguments of redis-py's `fcall` for this call."""
        return (self.script.function, len(self.keys), *self.keys, *self.fixed, *self.args)


def _classified(reply: Any) -> Any:
    """An error reply as redis-py's own parser would raise it: a function Redis does not
    know as NoScriptError (load it and try again, as for a script's NOSCRIPT), LOADING (a
    Redis started again and still reading its data: an outage, which the callers answer
    `unavailable`, not a failure of the call)."""
    if isinstance(reply, ResponseError) and not isinstance(reply, NoScriptError):
        text = str(reply)
        if "Function not found" in text or text.startswith("NOSCRIPT"):
            return NoScriptError(text)
        if text.startswith("LOADING"):
            return BusyLoadingError(text)
    return reply


def _fail(batch: list[_Call], error: Exception) -> None:
    for item in batch:
        if item.future is None:
            _hand(item, error)
        elif not item.future.done():
            item.future.set_exception(error)


def _hand(item: _Call, outcome: Any) -> None:
    """A posted call's reply or error to its callback (whatever that raises is a bug of
    the caller's, logged: never the reader's)."""
    assert item.on_reply is not None
    try:
        item.on_reply(outcome)
    except Exception:
        log.exception("the reply to %s could not be handled", item.script.name)


def _settle(batch: list[_Call], results: list[Any]) -> None:
    """Each caller gets its reply (an error reply raised, or handed to `on_reply`)."""
    for item, result in zip(batch, results, strict=True):
        future = item.future
        if future is None:
            _hand(item, result)
        elif future.done():
            continue
        elif isinstance(result, Exception):
            future.set_exception(result)
        else:
            future.set_result(result)


class ScriptBatcher:
    def __init__(self, redis: AnyRedis, max_batch: int = 512, max_inflight: int = 2) -> None:
        self.redis: Any = redis
        self.max_batch = max_batch
        self.max_inflight = max_inflight
        self._inflight = 0
        self._queue: list[_Call] = []
        self._scheduled = False
        self._tasks: set[asyncio.Task[None]] = set()
        self.pipelines = 0  # for /metrics and tests: how many pipelines were sent
        self.calls = 0
        # The move path's own lean client (server/redis_io/resp.py: a quarter of redis-py's CPU per
        # call; one connection per primary of a cluster); redis-py where it needs more than
        # plain TCP.
        self._resp = lean_client(redis)

    @property
    def lean(self) -> LeanClient | None:
        """The move path's lean client (None: redis-py does it all)."""
        return self._resp

    @property
    def reconnects(self) -> int:
        """The move path's reconnections to Redis (0 when redis-py does it all)."""
        return self._resp.reconnects if self._resp is not None else 0

    async def call(
        self,
        script: LuaScript,
        keys: tuple[str, ...],
        args: tuple[Any, ...],
        fixed: tuple[Any, ...] = (),
    ) -> Any:
        """The script's reply; its arguments are `fixed` then `args`. `fixed` are those
        that are the same in every call with these keys (encoded once, see encode_fcall)."""
        future = asyncio.get_running_loop().create_future()
        self._enqueue(_Call(script, keys, args, fixed, future, None))
        return await future

    def post(
        self,
        script: LuaScript,
        keys: tuple[str, ...],
        args: tuple[Any, ...],
        fixed: tuple[Any, ...],
        on_reply: Callable[[Any], None],
    ) -> None:
        """As `call`, without waiting: `on_reply` gets the reply, or the error (an error
        reply, a lost connection) as an Exception, as soon as it is read: before any task
        waiting on it runs again. For code that runs in no task (a move judged as its
        frame is read)."""
        self._enqueue(_Call(script, keys, args, fixed, None, on_reply))

    def _enqueue(self, item: _Call) -> None:
        if not item.keys:  # in a cluster a call goes to the node of its first key's slot
            raise ValueError(f"script {item.script.name} called without a key")
        self._queue.append(item)
        if not self._scheduled and self._inflight < self.max_inflight:
            if self._inflight == 0 and len(self._queue) == 1:
                self._flush()  # nothing to wait for, nothing to gather: out at once
            else:
                self._scheduled = True
                asyncio.get_running_loop().call_soon(self._flush)

    def _flush(self) -> None:
        self._scheduled = False
        while self._queue and self._inflight < self.max_inflight:
            batch, self._queue = self._queue[: self.max_batch], self._queue[self.max_batch :]
            self._inflight += 1
            if self._send_now(batch):
                continue
            task = asyncio.ensure_future(self._send(batch))
            self._tasks.add(task)
            task.add_done_callback(self._sent)

    def _sent(self, task: asyncio.Task[None] | None = None) -> None:
        if task is not None:
            self._tasks.discard(task)
        self._inflight -= 1
        if self._queue and not self._scheduled:
            self._scheduled = True
            asyncio.get_running_loop().call_soon(self._flush)

    def _send_now(self, batch: list[_Call]) -> bool:
        """The everyday path: one node, connected. The batch is written now and its
        replies handed out by `_landed` from the connection's reader (no task per batch)."""
        resp = self._resp
        if not isinstance(resp, RespConnection):
            return False
        commands = [
            encode_fcall(item.script.function, item.keys, item.args, item.fixed) for item in batch
        ]
        if not resp.send_encoded(commands, partial(self._landed, batch)):
            return False
        self.pipelines += 1
        self.calls += len(batch)
        return True

    def _landed(self, batch: list[_Call], replies: list[Any] | Exception) -> None:
        self._sent()
        if isinstance(replies, Exception):
            _fail(batch, replies)
            return
        if any(isinstance(reply, ResponseError) for reply in replies):
            replies = [_classified(reply) for reply in replies]
            if any(isinstance(reply, NoScriptError) for reply in replies):
                # Redis forgot the scripts (restarted): load them, send those calls again.
                self._inflight += 1
                task = asyncio.ensure_future(self._settle_reloading(batch, replies))
                self._tasks.add(task)
                task.add_done_callback(self._sent)
                return
        _settle(batch, replies)

    async def _send(self, batch: list[_Call]) -> None:
        self.pipelines += 1
        self.calls += len(batch)
        try:
            results = await self._execute(batch)
        except Exception as exc:  # connection trouble: every caller gets the error
            _fail(batch, exc)
            return
        await self._settle_reloading(batch, results)

    async def _settle_reloading(self, batch: list[_Call], results: list[Any]) -> None:
        """Settle the batch, after sending again the calls Redis did not know the script
        of (loaded first): only those, the others ran."""
        missing = [i for i, r in enumerate(results) if isinstance(r, NoScriptError)]
        if missing:
            try:
                for script in {batch[i].script for i in missing}:
                    await self.redis.function_load(script.library, replace=True)
                retried = await self._execute([batch[i] for i in missing])
            except Exception as exc:
                retried = [exc] * len(missing)
            for i, r in zip(missing, retried, strict=True):
                results[i] = r
        _settle(batch, results)

    async def _execute(self, batch: list[_Call]) -> list[Any]:
        results: list[Any]
        if self._resp is not None:
            results = await self._resp.execute_routed(
                [
                    (
                        item.keys[0],
                        encode_fcall(item.script.function, item.keys, item.args, item.fixed),
                    )
                    for item in batch
                ]
            )
        elif isinstance(self.redis, RedisCluster):  # its pipelines refuse scripts
            results = list(
                await asyncio.gather(
                    *(self.redis.fcall(*item.fcall_args()) for item in batch),
                    return_exceptions=True,
                )
            )
        else:
            async with self.redis.pipeline(transaction=False) as pipe:
                for item in batch:
                    pipe.fcall(*item.fcall_args())
                results = await pipe.execute(raise_on_error=False)
        return [_classified(r) for r in results]

    async def close(self) -> None:
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
        if self._resp is not None:
            await self._resp.close()
