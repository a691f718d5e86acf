"""How frames leave a socket: written together at the end of a tick, in order."""

from __future__ import annotations

import asyncio
from typing import Any

from support.in_memory import connection

from server.live.connection import Flusher


async def test_frames_of_one_tick_go_out_in_one_write_in_order() -> None:
    conn, transport = connection(flusher=Flusher())
    conn.send_frame(b"a")
    conn.send_frame(b"b")
    assert transport.writes == []  # nothing before the end of the tick
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    assert transport.writes == [b"ab"]


async def test_an_answer_one_task_step_behind_joins_the_event_of_its_tick() -> None:
    """A move's progress (pub/sub, delivered in a reader's callback) and its mover's
    accepted (the script's reply wakes the move's task) arrive in the same tick: one write."""
    conn, transport = connection(flusher=Flusher())
    reply: asyncio.Future[Any] = asyncio.get_running_loop().create_future()

    async def move() -> None:
        await reply  # the script's answer
        conn.send_frame(b"accepted")

    task = asyncio.create_task(move())
    await asyncio.sleep(0)  # the move waits for its reply

    def readers() -> None:  # what one tick of socket reads does
        conn.send_frame(b"progress")  # pub/sub: the fan-out
        reply.set_result(None)  # the script's reply

    asyncio.get_running_loop().call_soon(readers)
    await task
    for _ in range(3):
        await asyncio.sleep(0)
    assert transport.writes == [b"progressaccepted"]


async def test_a_frame_sent_now_leaves_at_once_but_after_what_waits() -> None:
    conn, transport = connection(flusher=Flusher())
    conn.send_frame_now(b"a")
    assert transport.writes == [b"a"]  # at once
    conn.send_frame(b"b")
    conn.send_frame_now(b"c")  # behind b, which waits for the end of the tick
    assert transport.writes == [b"a"]
    for _ in range(3):
        await asyncio.sleep(0)
    assert transport.writes == [b"a", b"bc"]
